//! The Wasm follower moved between two roslite hosts while it follows the line (`roslite demo
//! --migrate`, `roslite bench migrate`; docs/migration.md).
//!
//! The robot runs as in [`crate::launch::run`]; the follower runs as a WebAssembly node in one
//! of two lean Wasm hosts (`roslite-wasm-host --name linetrace_a|linetrace_b`, wasmtime on the
//! `.cwasm`, each accepting nodes from the other), and writes its trace to its standard output
//! (`--trace -`: a node with files it opened does not move), which each host's process writes
//! to its own trace file. Once the motors are on, this process moves the follower from host to
//! host through the hosts' `migrate_node` service, `plan.moves` times, and after each move asks
//! the target when the follower ran its first callback there: the downtime is from its last
//! callback on the source to that one (CLOCK_MONOTONIC, shared by the processes of one
//! machine). The two hosts' traces together must hold every `/light_sensors` message the robot
//! published while the follower ran, each once.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use roslite::msgs::roslite_interfaces::srv::{
    ListNodes, ListNodes_Request, MigrateNode, MigrateNode_Request,
};

use crate::launch::{self, LaunchError, LaunchOptions, RunResult, Setup, Side, TraceTo};

/// The two hosts' names.
pub const HOSTS: [&str; 2] = ["linetrace_a", "linetrace_b"];

/// How many moves, how far apart, and where.
#[derive(Clone, Debug)]
pub struct MigrationPlan {
    pub moves: u32,
    /// From one move's end to the next move's start.
    pub interval: Duration,
    /// The second host as another CPU architecture under qemu-user; None: both on this one.
    pub emulated: Option<EmulatedHost>,
}

/// An aarch64 host run under qemu-user (`roslite_wasm::cross`).
#[derive(Clone, Debug)]
pub struct EmulatedHost {
    /// The aarch64 lean host (`roslite_wasm::cross::build_host`).
    pub program: std::path::PathBuf,
    /// A directory with the follower compiled for aarch64's wasmtime, under its name
    /// (`linetrace-follower.cwasm`).
    pub module_dir: std::path::PathBuf,
}

/// One move as measured.
#[derive(Clone, Debug, Default)]
pub struct MoveRecord {
    pub from: String,
    pub to: String,
    /// From the follower's last callback on the source to its first on the target, in
    /// microseconds.
    pub downtime_us: f64,
    /// What the source reported: the node held between callbacks until it ran on the target,
    /// taking its snapshot, restoring it (microseconds), and the snapshot's size.
    pub paused_us: u64,
    pub capture_us: u64,
    pub restore_us: u64,
    pub snapshot_bytes: u64,
    /// CLOCK_MONOTONIC ns of the follower's last callback on the source, and of its first on
    /// the target.
    pub at_ns: u64,
    pub first_on_target_ns: u64,
    /// How far the follower's clock was behind the target's once it ran there (ns): the time
    /// its moves so far took, which its clock skipped.
    pub guest_clock_behind_ns: i64,
    /// The index in the run's path of the robot's pose at the move.
    pub path_index: Option<usize>,
}

/// A run with moves.
#[derive(Clone, Debug, Default)]
pub struct MigratingResult {
    pub run: RunResult,
    pub moves: Vec<MoveRecord>,
    /// `/light_sensors` messages the robot published that neither host's follower received,
    /// lost in a move (the follower received the one before on one host and the one after on
    /// the other; a node that moves writes its trace a line at a time, so each line is in the
    /// output of the host that ran it), and those received more than once.
    pub light_sensors_lost: u64,
    pub light_sensors_duplicated: u64,
    pub light_sensors_received: u64,
    /// Those it did not receive between two it received on one host: its subscription keeps
    /// the last message only (depth 1, as upstream's), so a message is overwritten when the
    /// follower is busy, moving or not (its start, sampling the floor).
    pub light_sensors_overwritten_elsewhere: u64,
}

/// Runs the roslite robot and the Wasm follower (wasmtime, AOT) moving between two hosts.
///
/// # Errors
/// As [`launch::run`], and [`LaunchError::Program`] for a move that failed (its reason).
pub fn run(options: &LaunchOptions, plan: &MigrationPlan) -> Result<MigratingResult, LaunchError> {
    std::fs::create_dir_all(&options.work_dir)?;
    let options = &LaunchOptions {
        work_dir: std::fs::canonicalize(&options.work_dir)?,
        ..options.clone()
    };
    let files = options.wasm_follower.as_ref().ok_or_else(|| {
        LaunchError::Program("no Wasm follower (host and modules) was given".into())
    })?;
    let module_dir = files
        .cwasm
        .parent()
        .ok_or_else(|| LaunchError::Program("the .cwasm has no directory".into()))?;
    let setup = Setup::WASM_WASMTIME;
    let started = Instant::now();
    let (events_tx, events) = mpsc::channel();
    let robot_name = format!("raspimouse ({})", setup.robot.name());
    let mut procs = vec![launch::spawn(
        &robot_name,
        launch::command_for(Side::Roslite, "robot", options, &options.work_dir)?,
        options,
        &events_tx,
    )?];
    for (i, name) in HOSTS.iter().enumerate() {
        let (mut c, module_dir) = match (&plan.emulated, i) {
            (Some(emulated), 1) => {
                let mut c = roslite_wasm::cross::command(&emulated.program);
                // Between this machine's processes and the emulated one, RTPS over UDP.
                c.env("ROSLITE_TRANSPORTS", "udp");
                (c, emulated.module_dir.as_path())
            }
            _ => (Command::new(&files.wasmtime_host), module_dir),
        };
        c.args(["--engine", "wasmtime", "--stop-on-stdin", "--name", name])
            .args(["--accept-from", HOSTS[1 - i]])
            .arg("--module-dir")
            .arg(module_dir);
        if i == 0 {
            c.arg(&files.cwasm);
        }
        c.arg("--")
            .arg("follower")
            .arg("--domain")
            .arg(options.domain.to_string());
        procs.push(launch::spawn_tracing(
            &format!("follower host {name}"),
            c,
            options,
            &events_tx,
            TraceTo::Stdout,
        )?);
    }
    drop(events_tx);

    let powered = Arc::new(AtomicBool::new(false));
    let moves = Arc::new(Mutex::new(Vec::new()));
    let mover = {
        let (powered, moves, plan, domain) =
            (powered.clone(), moves.clone(), plan.clone(), options.domain);
        std::thread::spawn(move || move_follower(domain, &plan, &powered, &moves))
    };
    let mut mover = Some(mover);
    let mut mover_outcome = None;
    let outcome = launch::watch(
        &mut procs,
        &events,
        &robot_name,
        options,
        started,
        &mut |on| {
            powered.store(on, Ordering::SeqCst);
            if mover.as_ref().is_some_and(|m| m.is_finished()) {
                let m = mover.take().expect("checked");
                mover_outcome = Some(
                    m.join()
                        .unwrap_or_else(|_| Err("the mover panicked".into())),
                );
            }
            mover_outcome.is_some()
        },
    );
    launch::stop(&mut procs);
    let memory = outcome?;
    if let Some(Err(why)) = mover_outcome {
        return Err(LaunchError::Program(why));
    }
    let moved = std::mem::take(&mut *moves.lock().unwrap_or_else(|e| e.into_inner()));
    // The follower's clock skips the time each move took: its traced times are put on the
    // machine's clock (which the robot's are on) with what each target reported. The follower
    // ran nothing on a target before its first callback there, so its times from that
    // callback on, on its own clock, are from that move on.
    let steps: Vec<(u64, u64)> = moved
        .iter()
        .map(|m| {
            let behind = u64::try_from(m.guest_clock_behind_ns).unwrap_or(0);
            (m.first_on_target_ns.saturating_sub(behind), behind)
        })
        .collect();
    let host_clock = |process: usize, t: u64| {
        if process == 0 {
            return t;
        }
        let behind = steps
            .iter()
            .rev()
            .find(|(from, _)| t >= *from)
            .map_or(0, |(_, behind)| *behind);
        t.saturating_add(behind)
    };
    // Every sample from the start on: they span the moves.
    let mut run = launch::join_traces_on(&procs, options.samples, usize::MAX, &host_clock)?;
    run.label =
        "roslite Wasm follower (wasmtime AOT), moving between two hosts <-> roslite robot".into();
    run.memory = memory;
    run.wall_s = started.elapsed().as_secs_f64();
    let mut result = MigratingResult {
        moves: moved,
        ..Default::default()
    };
    count_light_sensors(&procs, &mut result)?;
    place_moves(&procs[0].trace, &mut result.moves)?;
    run.path_marks = result
        .moves
        .iter()
        .filter_map(|m| run.path.get(m.path_index?).copied())
        .collect();
    result.run = run;
    Ok(result)
}

/// Moves the follower back and forth once the motors are on.
fn move_follower(
    domain: u32,
    plan: &MigrationPlan,
    powered: &AtomicBool,
    moves: &Mutex<Vec<MoveRecord>>,
) -> Result<(), String> {
    let context = roslite::Context::new(roslite::ContextOptions::localhost(domain))
        .map_err(|e| format!("the mover's context: {e}"))?;
    let node = context
        .create_node("linetrace_mover")
        .map_err(|e| e.to_string())?;
    let service = |host: &str, name: &str| format!("/roslite_host/{host}/{name}");
    let migrate: Vec<roslite::Client<MigrateNode>> = HOSTS
        .iter()
        .map(|h| node.create_client(&service(h, "migrate_node")))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let list: Vec<roslite::Client<ListNodes>> = HOSTS
        .iter()
        .map(|h| node.create_client(&service(h, "list_nodes")))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let until = Instant::now() + Duration::from_secs(60);
    while !powered.load(Ordering::SeqCst) {
        if Instant::now() > until {
            return Err("the robot's motors did not come on within 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for (i, client) in migrate.iter().enumerate() {
        if !client.wait_for_service(Duration::from_secs(20)) {
            return Err(format!("host {} did not appear within 20 s", HOSTS[i]));
        }
    }
    // Let the follower sample the floor and start following first.
    std::thread::sleep(plan.interval.max(Duration::from_secs(1)));
    for n in 0..plan.moves as usize {
        let (from, to) = (n % 2, 1 - n % 2);
        let response = migrate[from]
            .call(
                MigrateNode_Request {
                    node: crate::wasm_build::NAME.into(),
                    to: HOSTS[to].into(),
                },
                Duration::from_secs(40),
            )
            .map_err(|e| format!("move {}: host {} did not answer: {e}", n + 1, HOSTS[from]))?;
        if !response.success {
            return Err(format!("move {} failed: {}", n + 1, response.message));
        }
        // The target runs the follower now; its first callback comes with the next message.
        let (first, behind) = first_callback_on(&list[to]).ok_or_else(|| {
            format!(
                "move {}: the follower ran no callback on {}",
                n + 1,
                HOSTS[to]
            )
        })?;
        moves
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(MoveRecord {
                from: HOSTS[from].into(),
                to: HOSTS[to].into(),
                downtime_us: first.saturating_sub(response.last_callback_ns) as f64 / 1e3,
                paused_us: response.paused_us,
                capture_us: response.capture_us,
                restore_us: response.restore_us,
                snapshot_bytes: response.snapshot_bytes,
                at_ns: response.last_callback_ns,
                first_on_target_ns: first,
                guest_clock_behind_ns: behind,
                path_index: None,
            });
        std::thread::sleep(plan.interval);
    }
    Ok(())
}

/// When the follower ran its first callback on the host `list` asks (waiting up to 5 s), and
/// how far its clock is behind that host's.
fn first_callback_on(list: &roslite::Client<ListNodes>) -> Option<(u64, i64)> {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        let nodes = list
            .call(ListNodes_Request::default(), Duration::from_secs(5))
            .ok()?
            .nodes;
        let (first, behind) = nodes
            .iter()
            .find(|n| n.guest == crate::wasm_build::NAME)
            .map_or((0, 0), |n| {
                (n.first_callback_after_restore_ns, n.guest_clock_behind_ns)
            });
        if first != 0 {
            return Some((first, behind));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// `/light_sensors` as the robot published it and the follower received it on either host.
fn count_light_sensors(
    procs: &[launch::Proc],
    result: &mut MigratingResult,
) -> Result<(), LaunchError> {
    let read = |p: &launch::Proc| {
        std::fs::read_to_string(&p.trace)
            .map_err(|e| LaunchError::Trace(format!("{}: {e}", p.trace.display())))
    };
    // (seq, CLOCK_MONOTONIC ns) of `kind light_sensors SEQ NS` lines.
    let timed = |text: &str, kind: &str| -> Vec<(u64, u64)> {
        text.lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                if w.next() != Some(kind) || w.next() != Some("light_sensors") {
                    return None;
                }
                Some((w.next()?.parse().ok()?, w.next()?.parse().ok()?))
            })
            .collect()
    };
    let published = timed(&read(&procs[0])?, "pub");
    // Each number received, with the hosts (by index) that received it.
    let mut received: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (host, p) in procs[1..].iter().enumerate() {
        for (seq, _) in timed(&read(p)?, "sub") {
            received.entry(seq).or_default().push(host);
        }
    }
    let (Some(&first), Some(&last)) = (received.keys().next(), received.keys().next_back()) else {
        return Err(LaunchError::Trace(
            "the follower received no /light_sensors".into(),
        ));
    };
    result.light_sensors_received = received.values().map(|h| h.len() as u64).sum();
    result.light_sensors_duplicated = received
        .values()
        .map(|h| h.len().saturating_sub(1) as u64)
        .sum();
    // A message neither host received is lost in a move when the follower received the one
    // before it on one host and the one after it on the other; between two it received on
    // one host, its depth-1 queue overwrote it while it was busy there.
    for &(seq, _) in &published {
        if seq < first || seq > last || received.contains_key(&seq) {
            continue;
        }
        let before = received.range(..seq).next_back().map(|(_, h)| h[0]);
        let after = received.range(seq..).next().map(|(_, h)| h[0]);
        if before != after {
            result.light_sensors_lost += 1;
        } else {
            result.light_sensors_overwritten_elsewhere += 1;
        }
    }
    Ok(())
}

/// Where on the path the robot was at each move: the last pose whose `/light_sensors` number
/// was published before the follower's last callback on the source.
fn place_moves(robot_trace: &std::path::Path, moves: &mut [MoveRecord]) -> Result<(), LaunchError> {
    let text = std::fs::read_to_string(robot_trace)
        .map_err(|e| LaunchError::Trace(format!("{}: {e}", robot_trace.display())))?;
    let mut published_at: Vec<(u64, u64)> = Vec::new();
    let mut poses: Vec<u64> = Vec::new();
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match (w.first().copied(), w.get(1).copied()) {
            (Some("pub"), Some("light_sensors")) => {
                if let (Some(seq), Some(t)) = (
                    w.get(2).and_then(|s| s.parse().ok()),
                    w.get(3).and_then(|s| s.parse().ok()),
                ) {
                    published_at.push((t, seq));
                }
            }
            (Some("pose"), _) => poses.push(w.get(5).and_then(|s| s.parse().ok()).unwrap_or(0)),
            _ => {}
        }
    }
    published_at.sort_unstable();
    for m in moves {
        let at = published_at.partition_point(|&(t, _)| t <= m.at_ns);
        let Some(&(_, seq)) = at.checked_sub(1).and_then(|i| published_at.get(i)) else {
            continue;
        };
        m.path_index = poses.iter().rposition(|&s| s <= seq);
    }
    Ok(())
}
