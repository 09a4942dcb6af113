//! `roslite bench rtt --transport intra|shm|uds|udp|shm-loan|all`: the sweep of the IPC
//! framework comparison for ROS 2 local communication (round-trip time against payload size,
//! 10 Hz and 100 messages per size, or back to back) for every path the user API can take
//! between two roslite endpoints on one host, next to this machine's floors and two DDS
//! implementations, all measured in the same run.
//!
//! Series, in the order they are measured (interleaving would restart every peer per size):
//! - **roslite through the user API**, one per transport: a ping node publishes
//!   `std_msgs/UInt8MultiArray` (its `uint8[]` is decoded as a view on the receive side), a pong
//!   node echoes each sample from its subscription callback (in another process it takes the
//!   message by value and `publish`es it; in the ping's own process, which still holds the
//!   ping, it takes the `Arc` and uses `publish_shared`: each the shape that copies nothing
//!   there), and the round trip is `publish` to the start of the ping node's subscription
//!   callback for the echo.
//!   At a rate a wall timer on the ping node publishes each ping (as the comparison's
//!   publisher node does), so the ping node's executor both sends the pings and takes the echoes; a
//!   ping not echoed by the next tick is lost. Back to back the echo's callback publishes the
//!   next one itself (as `ddsperf ping` and the floors do: two threads woken per round trip,
//!   not three). Reliable, keep-last 1. `intra`: both nodes in this process, one context without network,
//!   each node on its own executor thread. `shm`, `uds`, `udp`: the pong node runs in a second
//!   process (the hidden `roslite bench rtt-sweep-pong`); both processes get the transport in
//!   `ROSLITE_TRANSPORTS` (`shm`, `uds` or `udp`; UDP stays on for discovery), use LOCALHOST
//!   discovery in a domain of their own, and the path the pair really took is read back from
//!   the ping side's graph (`GraphEndpoint::transport` of the remote pong publisher) and printed:
//!   a build without the same-host wiring falls back to UDP, and the table says so.
//! - **transport only** (`toolkit::transport::rtt`): the same ping-pong on a bare `ShmWriter`/
//!   `ShmReader` or `UdsWriter`/`UdsReader` pair, no serialization and no executor.
//! - **floors** (`toolkit::transport`): futex ping-pong through shared memory (no payload),
//!   a raw SOCK_SEQPACKET socket pair carrying the payload both ways, and one memcpy of the
//!   payload. Floors run back to back; in rate mode the futex and raw socket floors are also
//!   measured at 64 B paced like the series (`futex @10Hz`, `raw UDS @10Hz`), and the goals
//!   are given against both. Back to back, the 64 B floor goals (shm against the futex floor,
//!   uds against the raw socket floor, through the API and as transport only) are measured
//!   again in `--rounds` rounds, each the floor and right after it the path, and judged on the
//!   round with the median ratio: this shared VM drifts between fast and slow phases lasting
//!   seconds, so only a floor measured next to the path is a fair comparison.
//! - **Cyclone DDS** `ddsperf ping`/`pong` (see `toolkit::cyclone` for its configuration and the
//!   doubling of its half round trips), at the same rate in rate mode.
//! - **Fast DDS 2.9**: `interop/cpp/fastdds_pingpong.cpp` (see `toolkit::fastdds`), UDP on
//!   127.0.0.1 only, no shared memory, no multicast; same topics, type, QoS and pacing.
//! - **shm-loan** (`loan`): shared memory with loaned messages on both sides.
//!
//! RSS is the sending (ping) process's VmRSS after each size; in `intra` that one process holds
//! both nodes. At a rate, `echo pages` is the echo process's pages touched per ping (median
//! over the warm-up pings, `toolkit::memory::TouchedPages`): the pong process, the bare
//! transports' and the floors' echoes (not `intra`, whose pong shares this process, nor the
//! loan series). The DDS pongs are counted alike over pings that are not measured, in windows
//! of one period not aligned with their pings (Cyclone: in the first second, which is dropped;
//! Fast DDS: during the warm-up). The goals are ratios between series of this run, never
//! absolute times.
//!
//! Parts: `model` (the options, pacing, series and goals every part reads), `api` and `loan`
//! (roslite through the user API), `floors` (bare transports and floors, and the interleaved
//! floor rounds, which reuse `api`'s session), `peers` (Cyclone, Fast DDS), `goals` and
//! `report` (table, JSON, chart). They import `model`, each other in that order, and the
//! toolkit; none imports this file, which runs them in order.

mod api;
pub mod cpp;
mod floors;
mod goals;
pub mod loan;
mod model;
mod peers;
mod report;

use std::time::Duration;

use api::measure_api;
pub use api::{pong, PongArgs};
use floors::{measure_floor_rounds, measure_floors, measure_transport, FloorRounds};
pub use model::{Mode, Options, Route, DEFAULT_SIZES, DEFAULT_SVG};
use model::{Pace, Skipped, DOMAINS_USED};
use peers::{measure_cyclone, measure_fastdds};
use report::{table, to_json, write_svg};

use crate::toolkit::cyclone::{self, find_ddsperf};
use crate::toolkit::fastdds;
use crate::toolkit::json;
use crate::toolkit::transport::BenchTransport;

/// Runs the sweep over `options.routes`, then prints the table or the JSON object and writes
/// the chart.
pub fn run(options: &Options<'_>) -> anyhow::Result<()> {
    let (mode, count, hz) = (options.mode, options.count, options.hz);
    anyhow::ensure!(count >= 1, "--count must be at least 1");
    anyhow::ensure!(hz >= 1, "--hz must be at least 1");
    anyhow::ensure!(!options.sizes.is_empty(), "--sizes is empty");
    anyhow::ensure!(
        options.domain + DOMAINS_USED <= roslite::context::MAX_DOMAIN_ID + 1,
        "--domain must be at most {} (the sweep uses {DOMAINS_USED} domains from it)",
        roslite::context::MAX_DOMAIN_ID + 1 - DOMAINS_USED
    );
    let pace = Pace {
        mode,
        hz,
        count,
        warmup: (count / 10).max(1),
        period: (mode == Mode::Rate).then(|| Duration::from_secs(1) / hz),
    };
    let sizes = options.sizes;
    let mut series = Vec::new();
    let mut skipped = Vec::new();
    for (index, &path) in Route::ALL.iter().enumerate() {
        if options.routes.contains(&path) {
            let offset = if path == Route::ShmLoan {
                6
            } else {
                index as u32
            };
            series.push(measure_api(path, options.domain + offset, sizes, pace)?);
        }
    }
    for (path, transport) in [
        (Route::Shm, BenchTransport::Shm),
        (Route::Uds, BenchTransport::Uds),
    ] {
        if options.routes.contains(&path) {
            series.push(measure_transport(transport, sizes, pace)?);
        }
    }
    series.extend(measure_floors(sizes, pace)?);
    let floor_rounds = if mode == Mode::BackToBack && sizes.contains(&64) && options.rounds > 0 {
        Some(measure_floor_rounds(
            &options.routes,
            options.domain,
            pace,
            options.rounds,
        )?)
    } else {
        None
    };
    let cyclone_domain = options.domain + 4;
    if options.no_cyclone {
        skipped.push(Skipped {
            name: "Cyclone".into(),
            reason: "skipped (--no-cyclone)".into(),
        });
    } else if let Some(ddsperf) = find_ddsperf() {
        match measure_cyclone(
            &ddsperf,
            cyclone_domain,
            sizes,
            pace,
            options.cyclone_duration,
        ) {
            Ok(s) => series.push(s),
            Err(e) => skipped.push(Skipped {
                name: "Cyclone".into(),
                reason: format!("failed: {e:#}"),
            }),
        }
    } else {
        skipped.push(Skipped {
            name: "Cyclone".into(),
            reason: cyclone::NOT_INSTALLED.into(),
        });
    }
    if options.no_fastdds {
        skipped.push(Skipped {
            name: "Fast DDS".into(),
            reason: "skipped (--no-fastdds)".into(),
        });
    } else {
        match fastdds::peer() {
            Ok((binary, version)) => {
                match measure_fastdds(&binary, &version, options.domain + 5, sizes, pace) {
                    Ok(s) => series.push(s),
                    Err(e) => skipped.push(Skipped {
                        name: "Fast DDS".into(),
                        reason: format!("failed: {e:#}"),
                    }),
                }
            }
            Err(reason) => skipped.push(Skipped {
                name: "Fast DDS".into(),
                reason,
            }),
        }
    }
    let mut goals = goals::goals(&series);
    // Interleaved rounds replace the sweep's ratio of the same goal: its floor and path were
    // measured minutes apart.
    for goal in floor_rounds.iter().flatten().map(FloorRounds::goal) {
        match goals.iter_mut().find(|g| g.text == goal.text) {
            Some(slot) => *slot = goal,
            None => goals.push(goal),
        }
    }
    write_svg(options.svg, &series, sizes, pace)?;
    if options.json {
        json::print(&to_json(options, pace, &series, &skipped, &goals));
    } else {
        print!("{}", table(options, pace, &series, &skipped, &goals));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizes_parse() {
        let sizes: Vec<usize> = DEFAULT_SIZES
            .split(',')
            .map(|s| crate::toolkit::units::parse_size(s).unwrap())
            .collect();
        assert_eq!(sizes, crate::toolkit::transport::DEFAULT_SIZES);
    }
}
