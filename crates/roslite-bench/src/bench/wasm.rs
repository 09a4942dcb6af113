//! `roslite bench wasm`: what running a node's logic in WebAssembly costs.
//!
//! - **Call round trip**: a native node publishes a 64 B std_msgs/String on
//!   `/wasm_bench/ping`; an echo node republishes the same bytes on `/wasm_bench/pong`; the
//!   native node takes the time from its publish to the pong's callback. The echo is a native
//!   node (serialized subscription and publisher, the same work a guest does), the echo guest
//!   on wasmtime (Cranelift machine code) and the same guest on wasmi. All in one process on an
//!   intra-process context, so the difference is the host -> guest dispatch -> host publish
//!   path, not a network. The guest is prepared for parking (Asyncify, as `roslite wasm build`
//!   prepares every guest); two more rows run it as written, waiting inside its instance. In
//!   one process a message published is handed to the echo's executor, never run on the
//!   publishing thread, so every row pays one hop to the echo's thread and the rows compare
//!   the engines and the parking machinery, not the hops (the line follower's bench, across
//!   processes, shows the hop parking saves). A row runs the native echo with its callbacks
//!   kept on its executor's thread, as a guest that cannot park does. All run in alternating
//!   rounds (the VM drifts); each row is the median of its rounds' medians.
//! - **Start-up**: process start to a node's first callback (a 1 ms wall timer), for a guest
//!   precompiled to a `.cwasm` and run by `roslite run`, and for the same node natively
//!   (a hidden helper of this binary). Both are this binary, so both pay for loading it.
//!
//! The guests are WebAssembly text in `crates/roslite-bench/guests/`, so the bench needs no
//! compiler for guests, only Binaryen's `wasm-opt` to prepare them for parking.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use roslite::msgs::std_msgs::msg::String as StringMsg;
use roslite::{Context, ContextOptions, Executor, Message, TypeInfo};
use roslite_wasm::{EngineKind, GuestSpec, Host, HostOptions};
use serde::Serialize;

use crate::toolkit::json;
use crate::toolkit::stats::{upper_median, Summary};

const ECHO_GUEST: &str = include_str!("../../../roslite-wasm/guests/echo.wat");
const STARTUP_GUEST: &str = include_str!("../../guests/startup.wat");

const PING: &str = "/wasm_bench/ping";
const PONG: &str = "/wasm_bench/pong";

#[derive(clap::Args)]
pub struct WasmArgs {
    /// Round trips per echo and round (after 100 not counted).
    #[arg(long, default_value_t = 2000)]
    samples: usize,
    /// Rounds: each runs the native, wasmtime and wasmi echoes one after another.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Process starts measured per kind (native, .cwasm), alternating.
    #[arg(long, default_value_t = 10)]
    starts: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Echo {
    Native,
    /// The native echo with its callbacks kept on its executor's thread, as a guest's are:
    /// the same thread hop, no engine.
    NativeOwnThread,
    /// The echo guest on an engine, prepared for parking (Asyncify) or not.
    Guest(EngineKind, Parking),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Parking {
    /// The guest waits parked: a callback runs on the thread that brings the message.
    Parks,
    /// The guest waits inside its instance: each callback is a hop to its thread.
    WaitsInside,
}

impl Echo {
    fn name(self) -> &'static str {
        match self {
            Self::Native => "native node",
            Self::NativeOwnThread => "native, own thread",
            Self::Guest(EngineKind::Wasmtime, Parking::Parks) => "Wasm guest on wasmtime",
            Self::Guest(EngineKind::Wasmi, Parking::Parks) => "Wasm guest on wasmi",
            Self::Guest(EngineKind::Wasmtime, Parking::WaitsInside) => "wasmtime, no parking",
            Self::Guest(EngineKind::Wasmi, Parking::WaitsInside) => "wasmi, no parking",
        }
    }
}

const ECHOES: [Echo; 6] = [
    Echo::Native,
    Echo::NativeOwnThread,
    Echo::Guest(EngineKind::Wasmtime, Parking::Parks),
    Echo::Guest(EngineKind::Wasmi, Parking::Parks),
    Echo::Guest(EngineKind::Wasmtime, Parking::WaitsInside),
    Echo::Guest(EngineKind::Wasmi, Parking::WaitsInside),
];

/// The echo guest's two builds: as written, and prepared for parking.
struct EchoGuests {
    waits_inside: PathBuf,
    parks: PathBuf,
}

impl EchoGuests {
    fn path(&self, parking: Parking) -> &Path {
        match parking {
            Parking::Parks => &self.parks,
            Parking::WaitsInside => &self.waits_inside,
        }
    }
}

/// A guest's WebAssembly text with std_msgs/String's hash filled in, compiled to binary and
/// written under the system's temporary directory.
fn guest_file(text: &str, name: &str) -> anyhow::Result<PathBuf> {
    let wasm = wat::parse_str(text.replace("@HASH@", StringMsg::TYPE_HASH))?;
    let path =
        std::env::temp_dir().join(format!("roslite-bench-{name}-{}.wasm", std::process::id()));
    std::fs::write(&path, wasm)?;
    Ok(path)
}

/// One round of `samples` round trips through `echo`; the round-trip times.
fn round_trips(echo: Echo, guests: &EchoGuests, samples: usize) -> anyhow::Result<Vec<Duration>> {
    let context = Context::new(ContextOptions::default())?;
    let node = context.create_node("wasm_bench")?;
    let ty = TypeInfo::of::<StringMsg>();
    let (tx, rx) = mpsc::channel::<Instant>();
    let _pong = node.create_serialized_subscription(PONG, ty, 10, move |_, _| {
        let _ = tx.send(Instant::now());
    })?;
    let ping = node.create_serialized_publisher(PING, ty, 10)?;
    let mut native_echo = None;
    let mut host = None;
    match echo {
        Echo::Native | Echo::NativeOwnThread => {
            let echo_node = context.create_node("native_echo")?;
            let publisher = echo_node.create_serialized_publisher(PONG, ty, 10)?;
            let subscription =
                echo_node.create_serialized_subscription(PING, ty, 10, move |bytes, _| {
                    let _ = publisher.publish(bytes.bytes());
                })?;
            let executor = Executor::new(&context);
            if echo == Echo::NativeOwnThread {
                executor.keep_callbacks_on_own_threads();
            }
            executor.add_node(&echo_node);
            let spinner_context = context.clone();
            let thread = std::thread::spawn(move || {
                executor.spin();
                drop(spinner_context);
            });
            native_echo = Some((echo_node, subscription, thread));
        }
        Echo::Guest(engine, parking) => {
            host = Some(Host::start(
                &[GuestSpec {
                    path: guests.path(parking).to_owned(),
                }],
                &HostOptions {
                    engine,
                    context: Some(context.clone()),
                    ..Default::default()
                },
            )?);
        }
    }
    let measuring = Executor::new(&context);
    measuring.add_node(&node);
    let spinner = {
        let context = context.clone();
        std::thread::spawn(move || {
            measuring.spin();
            drop(context);
        })
    };
    let payload = roslite_cdr::to_vec(
        &StringMsg {
            data: "x".repeat(52),
        },
        roslite_cdr::Endianness::Little,
    )?;
    // Wait for the echo to be up: pings until one comes back.
    let ready_by = Instant::now() + Duration::from_secs(10);
    loop {
        ping.publish(&payload)?;
        if rx.recv_timeout(Duration::from_millis(20)).is_ok() {
            break;
        }
        anyhow::ensure!(
            Instant::now() < ready_by,
            "the {} echo did not answer within 10 s",
            echo.name()
        );
    }
    while rx.try_recv().is_ok() {}
    let warm_up = 100;
    let mut times = Vec::with_capacity(samples);
    for i in 0..samples + warm_up {
        let sent = Instant::now();
        ping.publish(&payload)?;
        let back = rx
            .recv_timeout(Duration::from_secs(5))
            .map_err(|_| anyhow::anyhow!("the {} echo stopped answering", echo.name()))?;
        if i >= warm_up {
            times.push(back - sent);
        }
    }
    context.shutdown();
    spinner.join().ok();
    if let Some(host) = host {
        for end in host.wait() {
            if let Err(fault) = end.outcome {
                anyhow::bail!("the echo guest {fault}");
            }
        }
    }
    if let Some((_node, _subscription, thread)) = native_echo {
        thread.join().ok();
    }
    Ok(times)
}

/// Process start to the first "first callback" line of `command`'s stdout.
fn time_to_first_callback(mut command: Command) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let stdout = child.stdout.take().expect("piped");
    let mut line = String::new();
    let mut reader = BufReader::new(stdout);
    let found = loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break false;
        }
        if line.trim() == "first callback" {
            break true;
        }
    };
    let elapsed = start.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    anyhow::ensure!(found, "the node ended without its first callback");
    Ok(elapsed)
}

/// The hidden helper: a native node whose first callback (1 ms wall timer) prints "first
/// callback" and ends the process.
pub fn startup_peer() -> anyhow::Result<()> {
    let context = Context::new(ContextOptions::default())?;
    let node = context.create_node("native_startup")?;
    let stop = context.clone();
    let _timer = node.create_wall_timer(Duration::from_millis(1), move || {
        println!("first callback");
        stop.shutdown();
    })?;
    roslite::spin(&node);
    Ok(())
}

#[derive(Serialize)]
struct Json {
    bench: &'static str,
    payload_bytes: usize,
    rounds: usize,
    call_round_trip: Vec<JsonEcho>,
    startup: JsonStartup,
}

#[derive(Serialize)]
struct JsonEcho {
    echo: &'static str,
    #[serde(serialize_with = "json::numbers")]
    round_p50_us: Vec<f64>,
    #[serde(serialize_with = "json::fixed3")]
    p50_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    mean_us: f64,
    #[serde(serialize_with = "json::fixed3")]
    p50_ratio_to_native: f64,
}

#[derive(Serialize)]
struct JsonStartup {
    #[serde(serialize_with = "json::numbers")]
    native_ms: Vec<f64>,
    #[serde(serialize_with = "json::numbers")]
    cwasm_ms: Vec<f64>,
    #[serde(serialize_with = "json::fixed3")]
    native_median_ms: f64,
    #[serde(serialize_with = "json::fixed3")]
    cwasm_median_ms: f64,
}

pub fn run(args: &WasmArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.samples >= 10 && args.rounds >= 1 && args.starts >= 1,
        "--samples must be at least 10, --rounds and --starts at least 1"
    );
    let waits_inside = guest_file(ECHO_GUEST, "echo")?;
    let parks = waits_inside.with_extension("parks.wasm");
    roslite_wasm::guest_build::prepare_for_parking(&waits_inside, &parks)?;
    let echo_guests = EchoGuests {
        waits_inside,
        parks,
    };
    let mut rounds: Vec<Vec<(Echo, Summary)>> = Vec::new();
    for round in 0..args.rounds {
        let mut this = Vec::new();
        for echo in ECHOES {
            if !args.json {
                eprintln!("round {}/{}: {}", round + 1, args.rounds, echo.name());
            }
            let times = round_trips(echo, &echo_guests, args.samples)?;
            this.push((echo, Summary::of(&times).expect("samples")));
        }
        rounds.push(this);
    }
    let p50_of = |echo: Echo| -> (Vec<f64>, f64, f64) {
        let per_round: Vec<f64> = rounds
            .iter()
            .map(|r| r.iter().find(|(e, _)| *e == echo).unwrap().1.p50_us)
            .collect();
        let means: Vec<f64> = rounds
            .iter()
            .map(|r| r.iter().find(|(e, _)| *e == echo).unwrap().1.mean_us)
            .collect();
        let p50 = upper_median(per_round.clone()).unwrap_or(f64::NAN);
        (per_round, p50, upper_median(means).unwrap_or(f64::NAN))
    };
    let native_p50 = p50_of(Echo::Native).1;

    // Start-up: the startup guest precompiled for this machine, run by `roslite run`.
    let startup_wasm = std::fs::read(guest_file(STARTUP_GUEST, "startup")?)?;
    let cwasm = std::env::temp_dir().join(format!(
        "roslite-bench-startup-{}.cwasm",
        std::process::id()
    ));
    std::fs::write(
        &cwasm,
        roslite_wasm::engine::wasmtime_engine::precompile(&startup_wasm, None)
            .map_err(anyhow::Error::msg)?,
    )?;
    let exe = std::env::current_exe()?;
    let (mut native_ms, mut cwasm_ms) = (Vec::new(), Vec::new());
    for _ in 0..args.starts {
        let mut native = Command::new(&exe);
        native.args(["bench", "wasm-startup-peer"]);
        native_ms.push(time_to_first_callback(native)?.as_secs_f64() * 1e3);
        let mut guest = Command::new(&exe);
        guest.arg("run").arg(&cwasm);
        cwasm_ms.push(time_to_first_callback(guest)?.as_secs_f64() * 1e3);
    }
    let native_median_ms = upper_median(native_ms.clone()).unwrap_or(f64::NAN);
    let cwasm_median_ms = upper_median(cwasm_ms.clone()).unwrap_or(f64::NAN);

    if args.json {
        json::print(&Json {
            bench: "wasm",
            payload_bytes: 64,
            rounds: args.rounds,
            call_round_trip: ECHOES
                .iter()
                .map(|&echo| {
                    let (round_p50_us, p50_us, mean_us) = p50_of(echo);
                    JsonEcho {
                        echo: echo.name(),
                        round_p50_us,
                        p50_us,
                        mean_us,
                        p50_ratio_to_native: p50_us / native_p50,
                    }
                })
                .collect(),
            startup: JsonStartup {
                native_ms,
                cwasm_ms,
                native_median_ms,
                cwasm_median_ms,
            },
        });
        return Ok(());
    }
    println!("call round trip, 64 B std_msgs/String, one process (native ping -> echo -> native pong callback)");
    println!(
        "median of {} rounds of {} round trips each",
        args.rounds, args.samples
    );
    println!(
        "{:<26} {:>10} {:>10} {:>12}  p50 per round",
        "echo", "p50 us", "mean us", "p50 vs native"
    );
    for echo in ECHOES {
        let (per_round, p50, mean) = p50_of(echo);
        let rounds_text: Vec<String> = per_round.iter().map(|v| format!("{v:.1}")).collect();
        println!(
            "{:<26} {:>10.1} {:>10.1} {:>12.2}x  {}",
            echo.name(),
            p50,
            mean,
            p50 / native_p50,
            rounds_text.join(" ")
        );
    }
    println!();
    println!(
        "start-up: process start to the node's first callback (1 ms wall timer), median of {}",
        args.starts
    );
    println!("{:<26} {:>10}", "node", "ms");
    println!(
        "{:<26} {:>10.1}",
        "native (roslite binary)", native_median_ms
    );
    println!("{:<26} {:>10.1}", ".cwasm on roslite run", cwasm_median_ms);
    Ok(())
}
