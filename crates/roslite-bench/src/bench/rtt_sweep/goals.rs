//! The sweep's goals: ratios between series of one run, never absolute times.

use super::model::{find, Bound, Goal, Kind, Series};
use crate::toolkit::units::size_label;

/// `a` at `size_a` over `b` at `size_b`, as a goal with `limit`.
pub(super) fn ratio_goal(
    text: String,
    limit: f64,
    a: Option<&Series>,
    size_a: usize,
    b: Option<&Series>,
    size_b: usize,
) -> Goal {
    let why_not = match (a, b) {
        (None, _) | (_, None) => Some("not measured".to_owned()),
        (Some(a), _) if !a.on_requested_path() => Some(format!(
            "not measured: {} fell back to {}",
            a.name,
            a.observed.as_deref().unwrap_or("?")
        )),
        _ => None,
    };
    let ratio = (|| Some((a?.p50(size_a)? / b?.p50(size_b)?, limit)))();
    Goal {
        text,
        ratio: if why_not.is_some() { None } else { ratio },
        why_not: if ratio.is_none() && why_not.is_none() {
            Some(format!(
                "not measured (needs {} and {})",
                size_label(size_a),
                size_label(size_b)
            ))
        } else {
            why_not
        },
        rounds: None,
        bound: None,
    }
}

/// What the owned `publish(msg)` of 4 MiB must cost at least, against the same path's 64 B,
/// on this run's memcpy floor.
///
/// The message lives in the publisher's private memory, so reaching shared memory copies its
/// payload once on each side of a round trip (the ping's publish and the pong's re-publish):
/// `(shm 64 B + 2 x memcpy 4 MiB) / shm 64 B`, however lean the rest. The zero-copy reading of
/// the goal is the loaned path's (`shm-loan`), which writes the payload in place.
pub(super) fn owned_copy_bound(shm: Option<&Series>, memcpy: Option<&Series>) -> Option<Bound> {
    let small = shm?.p50(64)?;
    let copy = memcpy?.p50(4 << 20)?;
    (small > 0.0).then(|| Bound {
        ratio: (small + 2.0 * copy) / small,
        why: format!(
            "an owned message is copied into shared memory on each side: two 4 MiB memcpys \
             ({copy:.1} us each in this run) make at least this; the zero-copy path is shm-loan's"
        ),
    })
}

pub(super) fn goals(series: &[Series]) -> Vec<Goal> {
    let futex = find(series, "futex floor");
    let raw = find(series, "raw UDS floor");
    let memcpy = find(series, "memcpy");
    let paced = |prefix: &str| {
        series
            .iter()
            .find(|s| s.kind == Kind::Floor && s.name.starts_with(prefix))
    };
    let (paced_futex, paced_raw) = (paced("futex @"), paced("raw UDS @"));
    let mut out = Vec::new();
    for (name, suffix) in [("shm", ""), ("shm (transport only)", " (transport only)")] {
        let shm = find(series, name);
        out.push(ratio_goal(
            format!("shm{suffix} 64 B p50 <= 1.3x futex floor"),
            1.3,
            shm,
            64,
            futex,
            64,
        ));
        if let Some(floor) = paced_futex {
            out.push(ratio_goal(
                format!("shm{suffix} 64 B p50 <= 1.3x {}", floor.name),
                1.3,
                shm,
                64,
                Some(floor),
                64,
            ));
        }
        let mut owned = ratio_goal(
            format!("shm{suffix} 4 MiB p50 <= 2x shm{suffix} 64 B"),
            2.0,
            shm,
            4 << 20,
            shm,
            64,
        );
        if suffix.is_empty() {
            owned.bound = owned_copy_bound(shm, memcpy);
        }
        out.push(owned);
    }
    if let Some(loaned) = find(series, "shm-loan") {
        out.push(ratio_goal(
            "shm-loan 4 MiB p50 <= 2x shm-loan 64 B".to_owned(),
            2.0,
            Some(loaned),
            4 << 20,
            Some(loaned),
            64,
        ));
    }
    for (name, suffix) in [("uds", ""), ("uds (transport only)", " (transport only)")] {
        out.push(ratio_goal(
            format!("uds{suffix} 64 B p50 <= 1.3x raw UDS floor"),
            1.3,
            find(series, name),
            64,
            raw,
            64,
        ));
        if let Some(floor) = paced_raw {
            out.push(ratio_goal(
                format!("uds{suffix} 64 B p50 <= 1.3x {}", floor.name),
                1.3,
                find(series, name),
                64,
                Some(floor),
                64,
            ));
        }
    }
    // Every same-host path through the API beats Cyclone at every size: the worst ratio.
    let cyclone = series
        .iter()
        .find(|s| s.kind == Kind::Peer && s.name.starts_with("Cyclone"));
    for path in ["intra", "shm", "uds"] {
        let text = format!("{path} p50 < Cyclone p50 at every size");
        let Some(ours) = find(series, path) else {
            continue;
        };
        let Some(cyclone) = cyclone else {
            out.push(Goal {
                text,
                ratio: None,
                why_not: Some("not measured (no Cyclone)".to_owned()),
                rounds: None,
                bound: None,
            });
            continue;
        };
        if !ours.on_requested_path() {
            out.push(ratio_goal(text, 1.0, Some(ours), 0, Some(cyclone), 0));
            continue;
        }
        let worst = ours
            .points
            .iter()
            .filter_map(|p| Some(p.summary?.p50_us / cyclone.p50(p.size)?))
            .fold(None, |w: Option<f64>, r| Some(w.map_or(r, |w| w.max(r))));
        out.push(Goal {
            text: format!("{text} (worst ratio shown)"),
            ratio: worst.map(|r| (r, 0.999_999)),
            why_not: worst.is_none().then(|| "not measured".to_owned()),
            rounds: None,
            bound: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::toolkit::pingpong::Point;
    use crate::toolkit::stats::Summary;

    fn series(name: &str, kind: Kind, observed: Option<&str>, p50: &[(usize, f64)]) -> Series {
        Series {
            name: name.to_owned(),
            kind,
            requested: observed.map(|_| match name {
                "shm" => "shm",
                "uds" => "uds",
                _ => "intra",
            }),
            observed: observed.map(str::to_owned),
            points: p50
                .iter()
                .map(|&(size, us)| Point {
                    size,
                    summary: Summary::of(&[Duration::from_secs_f64(us / 1e6)]),
                    lost: 0,
                    sender_rss_kib: None,
                    echo_pages: None,
                })
                .collect(),
        }
    }

    #[test]
    fn goals_are_ratios_and_fallbacks_are_not_counted() {
        let all = vec![
            series(
                "shm",
                Kind::Api,
                Some("shm"),
                &[(64, 12.0), (4 << 20, 20.0)],
            ),
            series("uds", Kind::Api, Some("udp"), &[(64, 30.0)]),
            series("futex floor", Kind::Floor, None, &[(64, 10.0)]),
            series("raw UDS floor", Kind::Floor, None, &[(64, 15.0)]),
            series(
                "Cyclone 0.10.2",
                Kind::Peer,
                None,
                &[(64, 24.0), (4 << 20, 10.0)],
            ),
        ];
        let goals = goals(&all);
        let by = |text: &str| goals.iter().find(|g| g.text.starts_with(text)).unwrap();
        let shm = by("shm 64 B p50 <= 1.3x futex");
        assert_eq!(shm.met(), Some(true));
        assert!((shm.ratio.unwrap().0 - 1.2).abs() < 1e-9);
        assert_eq!(by("shm 4 MiB").met(), Some(true));
        // uds fell back to UDP: not evaluated.
        let uds = by("uds 64 B");
        assert_eq!(uds.met(), None);
        assert!(uds.why_not.as_deref().unwrap().contains("fell back to udp"));
        // shm is slower than Cyclone at 4 MiB: 20 / 10.
        let cyclone = by("shm p50 < Cyclone");
        assert_eq!(cyclone.met(), Some(false));
        assert!((cyclone.ratio.unwrap().0 - 2.0).abs() < 1e-9);
        // No transport-only series in this run.
        assert_eq!(by("shm (transport only) 64 B").met(), None);
        // No memcpy floor in this run: no bound.
        assert!(by("shm 4 MiB").bound.is_none());
    }

    #[test]
    fn the_owned_4_mib_goal_carries_the_bound_of_its_two_copies() {
        let all = vec![
            series(
                "shm",
                Kind::Api,
                Some("shm"),
                &[(64, 10.0), (4 << 20, 700.0)],
            ),
            series("memcpy", Kind::Floor, None, &[(64, 0.02), (4 << 20, 285.0)]),
        ];
        let goals = goals(&all);
        let owned = goals
            .iter()
            .find(|g| g.text == "shm 4 MiB p50 <= 2x shm 64 B")
            .unwrap();
        assert_eq!(owned.met(), Some(false));
        // (10 + 2 x 285) / 10.
        let bound = owned.bound.as_ref().unwrap();
        assert!((bound.ratio - 58.0).abs() < 1e-9, "{}", bound.ratio);
        assert!(bound.why.contains("285.0 us"));
        // The bare transport copies nothing: no bound on its goal.
        let bare = goals
            .iter()
            .find(|g| g.text.starts_with("shm (transport only) 4 MiB"))
            .unwrap();
        assert!(bare.bound.is_none());
    }
}
