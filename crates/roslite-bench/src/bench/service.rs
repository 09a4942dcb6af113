//! Service round trips, the experiment of the ROS 2 service round-trip over local 5G study
//! (AddTwoInts): a client sends two integers on a fixed period, the server returns their sum; per request, the *response time* (send to reply) and the *send
//! jitter* (actual send time minus scheduled time, both on `CLOCK_MONOTONIC`).
//!
//! Each configuration is two processes on 127.0.0.1 in a ROS domain of its own:
//! - `roslite`: this binary twice, as the hidden `roslite bench service-peer --role server` and
//!   `--role client` (LOCALHOST discovery, example_interfaces/srv/AddTwoInts). The client loops
//!   as the study's did: `Rate::sleep` to an absolute deadline, timestamp, blocking `call`,
//!   timestamp.
//! - `roslite, impaired link`: the same with `ROSLITE_FAULT_INJECTION` set in both processes, so
//!   each direction goes through roslite's fault-injecting link (`--impair`).
//! - `rclpy (ROS 2)`: interop/python/bench_service_{server,client}.py on rmw_fastrtps_cpp with the
//!   loopback-only profile; std_srvs/srv/SetBool, because the venv has no example_interfaces. Its
//!   client sends from a steady-clock timer with `call_async` (jitter = send time minus the
//!   timer's expected call time) and takes the reply in the future's done callback.
//!
//! The configurations of one period run at the same time, their send times offset by
//! period / (number of configurations), so a 1000-request run at 500 ms and 100 ms takes ten
//! minutes instead of thirty and background load falls on all of them alike. Every client
//! first waits for its service, makes a few warm-up calls and says `READY`; this process then
//! hands each the CLOCK_MONOTONIC time of its first deadline (`START <ns>` on stdin) and reads
//! back one `SAMPLE <i> <jitter_ns> <response_ns or -1> <ok>` line per request.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write as _};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::backends::rtps::{FaultConfig, FAULT_INJECTION_ENV};
use roslite::msgs::example_interfaces::srv::{AddTwoInts, AddTwoInts_Request, AddTwoInts_Response};
use roslite::{Executor, Instant, LocalTransports, Rate, RealtimeOptions};
use roslite_executor::SteadyClock;

use model::{period_label, Kind, Run, Sample};
use report::{Report, Settings};

use crate::toolkit::context::localhost_context;
use crate::toolkit::json;
use crate::toolkit::process::{collect_lines, die_with_parent, self_command, Helper};
use crate::toolkit::rclpy::{find_python, FASTDDS_LOOPBACK_PROFILE};
use crate::toolkit::units::parse_period;

mod model;
mod plot;
mod report;

const IMPAIR_HELP: &str = "\
Fault injection: `--impair SPEC` runs a third configuration, roslite with the environment \
variable ROSLITE_FAULT_INJECTION=SPEC in both of its processes. Any roslite process reads that \
variable when its RTPS network starts and then delays, drops or duplicates each outgoing \
datagram (see docs/fault-injection.md). SPEC is comma-separated key=value items: delay_ms / \
delay_us (fixed delay), jitter_ms / jitter_us (uniform +-jitter added to the delay), loss and \
duplicate (probabilities, 0.01 or 1%), seed (the random draws are deterministic from it), \
limit (datagrams held at once, default 1000). Example: --impair \
delay_ms=10,jitter_ms=3,loss=0.0 emulates a 10 ms +- 3 ms link (a local 5G hop) in each \
direction. The rclpy baseline cannot be impaired (no tc netem here) and always runs on the \
plain loopback.";

#[derive(clap::Args)]
#[command(after_long_help = IMPAIR_HELP)]
pub struct ServiceArgs {
    /// Short CI run: 100 requests at 20 ms and 10 ms (unless --requests or --periods say
    /// otherwise). Without it the run is the study's: 1000 requests at 500 ms and at 100 ms,
    /// about ten minutes.
    #[arg(long)]
    quick: bool,
    /// Requests per configuration and period [default: 1000; with --quick: 100].
    #[arg(long)]
    requests: Option<usize>,
    /// Request periods, comma-separated; a bare number is milliseconds, or give a unit (500us,
    /// 1s) [default: 500,100; with --quick: 20,10].
    #[arg(long, value_delimiter = ',', value_parser = parse_period)]
    periods: Option<Vec<Duration>>,
    /// Also run roslite over an impaired link, e.g. delay_ms=10,jitter_ms=3,loss=0.0 (see the
    /// fault-injection notes at the end of --help; sets ROSLITE_FAULT_INJECTION, which also
    /// keeps the pair off the same-host links).
    #[arg(long, value_parser = parse_impairment)]
    impair: Option<FaultConfig>,
    /// Timer slack in ns of both clients (roslite's and rclpy's); Linux's default is 50000,
    /// which alone puts about 60 us into every wake-up.
    #[arg(long, default_value_t = 1)]
    timer_slack_ns: u64,
    /// Run the roslite clients (their sending thread and the network thread) under
    /// SCHED_FIFO with this priority (1..=99; needs root or CAP_SYS_NICE), as a real-time
    /// robot controller would; the rclpy client keeps normal scheduling.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=99))]
    rt_priority: Option<u8>,
    /// ROS domain of the roslite pair; the impaired pair uses the next one, rclpy the one
    /// after, and the roslite pair over UDP the one after that.
    #[arg(long, default_value_t = 220)]
    domain: u32,
    /// Python interpreter with rclpy for the ROS 2 baseline (default: $ROSLITE_PYTHON, else
    /// ./.venv/bin/python as created by `cargo xtask test`).
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the rclpy baseline.
    #[arg(long)]
    no_rclpy: bool,
    /// Where to write the SVG plots.
    #[arg(long, default_value = "target/bench-service")]
    out: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PeerRole {
    Server,
    Client,
}

/// The hidden `roslite bench service-peer`: one side of a roslite configuration.
#[derive(clap::Args)]
pub struct PeerArgs {
    #[arg(long, value_enum)]
    role: PeerRole,
    #[arg(long)]
    domain: u32,
    /// Client only: the request period in nanoseconds.
    #[arg(long, default_value_t = 0)]
    period_ns: u64,
    /// Client only.
    #[arg(long, default_value_t = 0)]
    requests: usize,
    /// Client only: 0 leaves the system default.
    #[arg(long, default_value_t = 0)]
    timer_slack_ns: u64,
    /// Client only: SCHED_FIFO priority, 0 for normal scheduling.
    #[arg(long, default_value_t = 0)]
    rt_priority: u8,
}

fn parse_impairment(text: &str) -> Result<FaultConfig, String> {
    text.parse()
        .map_err(|e: roslite::backends::rtps::FaultParseError| e.to_string())
}

const ROSLITE_SERVICE: &str = "roslite_bench/add_two_ints";
const RCLPY_SERVICE: &str = "roslite_bench/set_bool";
/// A request whose reply has not come back by then is lost.
const REPLY_TIMEOUT: Duration = Duration::from_secs(5);
const WARMUP_CALLS: usize = 5;
/// How long a client may take to start, discover its server and make its warm-up calls.
const READY_TIMEOUT: Duration = Duration::from_secs(90);
/// Between the last client saying READY and the first deadline.
const START_MARGIN: Duration = Duration::from_millis(300);

// ---------------------------------------------------------------------------------------------
// The roslite peers.

pub fn peer(args: &PeerArgs) -> anyhow::Result<()> {
    die_with_parent();
    match args.role {
        PeerRole::Server => serve(args),
        PeerRole::Client => call(args),
    }
}

fn serve(args: &PeerArgs) -> anyhow::Result<()> {
    let ctx = localhost_context(args.domain)?;
    let node = ctx.create_node("roslite_bench_service_server")?;
    let _service =
        node.create_service::<AddTwoInts, _>(ROSLITE_SERVICE, |req: AddTwoInts_Request| {
            AddTwoInts_Response {
                sum: req.a.wrapping_add(req.b),
            }
        })?;
    let executor = Executor::new(&ctx);
    executor.add_node(&node);
    executor.spin();
    Ok(())
}

fn request(i: usize) -> AddTwoInts_Request {
    AddTwoInts_Request {
        a: i as i64,
        b: 2 * i as i64 + 1,
    }
}

fn call(args: &PeerArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.period_ns > 0 && args.requests > 0,
        "a client needs --period-ns and --requests"
    );
    // Before the context starts its threads, so they inherit it.
    RealtimeOptions {
        timer_slack_ns: (args.timer_slack_ns > 0).then_some(args.timer_slack_ns),
        fifo_priority: (args.rt_priority > 0).then_some(args.rt_priority),
        ..Default::default()
    }
    .apply_to_current_thread()
    .context("setting the timer slack and scheduling")?;
    let ctx = localhost_context(args.domain)?;
    let node = ctx.create_node("roslite_bench_service_client")?;
    let client = node.create_client::<AddTwoInts>(ROSLITE_SERVICE)?;
    anyhow::ensure!(
        client.wait_for_service(Duration::from_secs(60)),
        "no server for {ROSLITE_SERVICE} within 60 s"
    );
    for i in 0..WARMUP_CALLS {
        client
            .call(request(i), Duration::from_secs(10))
            .context("warm-up call")?;
    }
    // The path the calls take, as the graph shows the server's endpoints.
    let name = client.service_name().to_owned();
    let path = ctx
        .graph()
        .endpoints()
        .into_iter()
        .find(|e| !e.local && e.topic == name)
        .map_or("unknown", |e| e.transport);
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "PATH {path}")?;
    writeln!(stdout, "READY")?;
    stdout.flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    let start_ns: u64 = match line.split_whitespace().collect::<Vec<_>>()[..] {
        ["START", ns] => ns.parse().context("START time")?,
        _ => bail!("expected START <ns> on stdin, got '{}'", line.trim()),
    };
    let period = Duration::from_nanos(args.period_ns);
    // A Rate's first deadline is one period after it is made: make it one period before START.
    let make_at = Instant::from_nanos(start_ns.saturating_sub(args.period_ns));
    std::thread::sleep(make_at - Instant::monotonic_now());
    let mut rate = Rate::new(Arc::new(SteadyClock), period);
    let mut samples = Vec::with_capacity(args.requests);
    for i in 0..args.requests {
        let firing = rate.sleep();
        let sent = Instant::monotonic_now();
        let reply = client.call(request(i), REPLY_TIMEOUT);
        let replied = Instant::monotonic_now();
        let jitter_ns = sent.as_nanos() as i64 - firing.scheduled.as_nanos() as i64;
        let (response_ns, ok) = match reply {
            Ok(response) => (
                (replied - sent).as_nanos() as i64,
                response.sum == 3 * i as i64 + 1,
            ),
            Err(_) => (-1, false),
        };
        samples.push((jitter_ns, response_ns, ok));
    }
    let mut text = String::new();
    for (i, (jitter_ns, response_ns, ok)) in samples.iter().enumerate() {
        let _ = writeln!(
            text,
            "SAMPLE {i} {jitter_ns} {response_ns} {}",
            u8::from(*ok)
        );
    }
    text.push_str("DONE\n");
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    ctx.shutdown();
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Configurations and their processes.

/// A started configuration: its two processes and the client's stdin.
struct Launched {
    // Held to be killed on drop; field order is drop order: the client before its server.
    _client: Helper,
    _server: Helper,
    stdin: ChildStdin,
    stderr: Vec<Arc<Mutex<Vec<String>>>>,
}

impl Launched {
    /// The last lines the two processes wrote to stderr, for an error message.
    fn stderr_tail(&self) -> String {
        let mut lines = Vec::new();
        for buffer in &self.stderr {
            let buffer = buffer.lock().unwrap_or_else(PoisonError::into_inner);
            lines.extend(buffer.iter().rev().take(3).rev().cloned());
        }
        if lines.is_empty() {
            String::new()
        } else {
            format!(": {}", lines.join(" | "))
        }
    }
}

enum Output {
    Line(usize, String),
    Closed(usize),
}

/// Forwards a client's stdout lines, tagged with its index, to one channel.
fn forward_lines(index: usize, stdout: impl Read + Send + 'static, tx: mpsc::Sender<Output>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(Output::Line(index, line)).is_err() {
                return;
            }
        }
        let _ = tx.send(Output::Closed(index));
    });
}

struct Setup<'a> {
    args: &'a ServiceArgs,
    requests: usize,
    python: Option<PathBuf>,
    scripts: Option<PathBuf>,
}

impl Setup<'_> {
    fn domain(&self, kind: Kind) -> u32 {
        self.args.domain
            + match kind {
                Kind::Roslite => 0,
                Kind::RosliteImpaired => 1,
                Kind::Rclpy => 2,
                Kind::RosliteUdp => 3,
            }
    }

    fn launch(
        &self,
        index: usize,
        kind: Kind,
        period: Duration,
        tx: &mpsc::Sender<Output>,
    ) -> anyhow::Result<Launched> {
        let domain = self.domain(kind).to_string();
        let (mut server, mut client) = match kind {
            Kind::Roslite | Kind::RosliteUdp | Kind::RosliteImpaired => {
                let mut server =
                    self_command(&["bench", "service-peer", "--role", "server", "--domain"])?;
                server.arg(&domain);
                let mut client =
                    self_command(&["bench", "service-peer", "--role", "client", "--domain"])?;
                client.arg(&domain).args([
                    "--period-ns",
                    &period.as_nanos().to_string(),
                    "--requests",
                    &self.requests.to_string(),
                    "--timer-slack-ns",
                    &self.args.timer_slack_ns.to_string(),
                    "--rt-priority",
                    &self.args.rt_priority.unwrap_or(0).to_string(),
                ]);
                for command in [&mut server, &mut client] {
                    match (&self.args.impair, kind) {
                        (Some(fault), Kind::RosliteImpaired) => {
                            command.env(FAULT_INJECTION_ENV, fault.to_string())
                        }
                        _ => command.env_remove(FAULT_INJECTION_ENV),
                    };
                    // The UDP pair is kept off the same-host links; the impaired pair needs
                    // no such setting, as fault injection turns them off by itself.
                    if kind == Kind::RosliteUdp {
                        command.env(LocalTransports::ENV, "udp");
                    }
                }
                (server, client)
            }
            Kind::Rclpy => {
                let python = self
                    .python
                    .as_ref()
                    .context("internal bug: rclpy launched without a Python")?;
                let scripts = self
                    .scripts
                    .as_ref()
                    .context("internal bug: rclpy launched without its scripts")?;
                let mut server = Command::new(python);
                server
                    .arg(scripts.join("bench_service_server.py"))
                    .arg(RCLPY_SERVICE);
                let mut client = Command::new(python);
                client
                    .arg(scripts.join("bench_service_client.py"))
                    .arg(RCLPY_SERVICE)
                    .arg(period.as_secs_f64().to_string())
                    .arg(self.requests.to_string())
                    .arg(self.args.timer_slack_ns.to_string());
                for command in [&mut server, &mut client] {
                    command
                        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
                        .env(
                            "FASTDDS_DEFAULT_PROFILES_FILE",
                            scripts.join("fastdds-loopback.xml"),
                        )
                        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
                        .env("ROS_DOMAIN_ID", &domain)
                        .env("PYTHONUNBUFFERED", "1");
                }
                (server, client)
            }
        };
        let mut server = Helper::spawn(
            &format!("the {} server", kind.name()),
            server
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped()),
        )?;
        let mut client = Helper::spawn(
            &format!("the {} client", kind.name()),
            client
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        )?;
        let mut stderr = Vec::new();
        for helper in [&mut server, &mut client] {
            if let Some(pipe) = helper.child.stderr.take() {
                stderr.push(collect_lines(pipe));
            }
        }
        let stdout = client
            .child
            .stdout
            .take()
            .context("internal bug: stdout not piped")?;
        forward_lines(index, stdout, tx.clone());
        let stdin = client
            .child
            .stdin
            .take()
            .context("internal bug: stdin not piped")?;
        Ok(Launched {
            _client: client,
            _server: server,
            stdin,
            stderr,
        })
    }
}

/// Parses `SAMPLE <i> <jitter_ns> <response_ns or -1> <ok>`.
fn parse_sample(line: &str) -> Option<(usize, Sample)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let ["SAMPLE", i, jitter, response, ok] = words[..] else {
        return None;
    };
    let response: i64 = response.parse().ok()?;
    Some((
        i.parse().ok()?,
        Sample {
            jitter_ns: jitter.parse().ok()?,
            response_ns: (response >= 0).then_some(response),
            ok: ok == "1",
        },
    ))
}

/// Runs every configuration at one period, at the same time.
fn run_period(setup: &Setup<'_>, kinds: &[(Kind, Option<String>)], period: Duration) -> Vec<Run> {
    let (tx, rx) = mpsc::channel();
    let mut runs: Vec<Run> = kinds
        .iter()
        .map(|(kind, note)| Run {
            kind: *kind,
            period,
            samples: Vec::new(),
            path: None,
            note: note.clone(),
        })
        .collect();
    let mut launched: Vec<Option<Launched>> = runs
        .iter_mut()
        .enumerate()
        .map(|(index, run)| {
            if run.note.is_some() {
                return None;
            }
            match setup.launch(index, run.kind, period, &tx) {
                Ok(l) => Some(l),
                Err(e) => {
                    run.note = Some(format!("not run: {e:#}"));
                    None
                }
            }
        })
        .collect();
    drop(tx);
    let fail = |runs: &mut [Run], launched: &mut [Option<Launched>], index: usize, why: &str| {
        if let Some(l) = launched[index].take() {
            runs[index].note = Some(format!("{why}{}", l.stderr_tail()));
        }
    };
    // Everyone READY (or given up on).
    let mut ready = vec![false; runs.len()];
    let deadline = Instant::monotonic_now() + READY_TIMEOUT;
    while (0..runs.len()).any(|i| launched[i].is_some() && !ready[i]) {
        let wait = deadline - Instant::monotonic_now();
        match rx.recv_timeout(wait) {
            Ok(Output::Line(i, line)) if line.trim() == "READY" => ready[i] = true,
            Ok(Output::Line(i, line)) if line.starts_with("PATH ") => {
                runs[i].path = Some(line["PATH ".len()..].trim().to_owned());
            }
            Ok(Output::Line(..)) => {}
            Ok(Output::Closed(i)) => fail(&mut runs, &mut launched, i, "the client ended early"),
            Err(_) => {
                let late: Vec<usize> = (0..runs.len()).filter(|&i| !ready[i]).collect();
                for i in late {
                    let why = format!("not ready within {READY_TIMEOUT:?}");
                    fail(&mut runs, &mut launched, i, &why);
                }
            }
        }
    }
    // Staggered first deadlines: the configurations' requests never coincide.
    let active: Vec<usize> = (0..runs.len()).filter(|&i| launched[i].is_some()).collect();
    let start = Instant::monotonic_now() + START_MARGIN.max(period);
    for (k, &i) in active.iter().enumerate() {
        let offset = period * k as u32 / active.len().max(1) as u32;
        let at = (start + offset).as_nanos();
        let sent = launched[i]
            .as_mut()
            .map(|l| writeln!(l.stdin, "START {at}").and_then(|()| l.stdin.flush()));
        if let Some(Err(e)) = sent {
            fail(&mut runs, &mut launched, i, &format!("cannot start: {e}"));
        }
    }
    // Their samples.
    let requests = setup.requests as u32;
    let deadline = start + period * (requests + 1) + REPLY_TIMEOUT + Duration::from_secs(30);
    let mut done = vec![false; runs.len()];
    while (0..runs.len()).any(|i| launched[i].is_some() && !done[i]) {
        let wait = deadline - Instant::monotonic_now();
        match rx.recv_timeout(wait) {
            Ok(Output::Line(i, line)) => {
                if line.trim() == "DONE" {
                    done[i] = true;
                } else if let Some((_, sample)) = parse_sample(&line) {
                    runs[i].samples.push(sample);
                }
            }
            Ok(Output::Closed(i)) if !done[i] => {
                fail(&mut runs, &mut launched, i, "the client ended early")
            }
            Ok(Output::Closed(_)) => {}
            Err(_) => {
                let late: Vec<usize> = (0..runs.len()).filter(|&i| !done[i]).collect();
                for i in late {
                    fail(&mut runs, &mut launched, i, "no result in time");
                }
            }
        }
    }
    // Every client has reported (or been given up on): the processes are killed when
    // `launched` is dropped.
    for run in &mut runs {
        if run.note.is_none() && run.samples.len() != setup.requests {
            run.note = Some(format!(
                "the client reported {} of {} requests",
                run.samples.len(),
                setup.requests
            ));
        }
    }
    runs
}

// ---------------------------------------------------------------------------------------------
// The bench.

pub fn run(args: &ServiceArgs) -> anyhow::Result<()> {
    let requests = args.requests.unwrap_or(if args.quick { 100 } else { 1000 });
    anyhow::ensure!(requests >= 1, "--requests must be at least 1");
    let periods = args.periods.clone().unwrap_or_else(|| {
        if args.quick {
            vec![Duration::from_millis(20), Duration::from_millis(10)]
        } else {
            vec![Duration::from_millis(500), Duration::from_millis(100)]
        }
    });
    anyhow::ensure!(!periods.is_empty(), "--periods is empty");
    anyhow::ensure!(
        args.domain + 3 <= roslite::context::MAX_DOMAIN_ID,
        "--domain must be at most {} (the impaired pair, rclpy and roslite over UDP use the \
         next three)",
        roslite::context::MAX_DOMAIN_ID - 3
    );
    let mut kinds = vec![(Kind::Roslite, None), (Kind::RosliteUdp, None)];
    if args.impair.is_some() {
        kinds.push((Kind::RosliteImpaired, None));
    }
    let scratch =
        std::env::temp_dir().join(format!("roslite-bench-service-{}", std::process::id()));
    let mut setup = Setup {
        args,
        requests,
        python: None,
        scripts: None,
    };
    if args.no_rclpy {
        kinds.push((Kind::Rclpy, Some("skipped (--no-rclpy)".to_owned())));
    } else {
        match prepare_rclpy(args, &scratch) {
            Ok(python) => {
                setup.python = Some(python);
                setup.scripts = Some(scratch.clone());
                kinds.push((Kind::Rclpy, None));
            }
            Err(e) => kinds.push((Kind::Rclpy, Some(format!("not run: {e:#}")))),
        }
    }
    let total: Duration = periods.iter().map(|p| *p * requests as u32).sum();
    eprintln!(
        "roslite bench service: {requests} requests at {} with {} configuration(s) running side \
         by side; about {} (plus start-up)",
        periods
            .iter()
            .map(|p| period_label(*p))
            .collect::<Vec<_>>()
            .join(" and "),
        kinds.iter().filter(|k| k.1.is_none()).count(),
        human(total)
    );
    let load_before = load_average();
    let mut runs = Vec::new();
    for &period in &periods {
        runs.extend(run_period(&setup, &kinds, period));
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if let Some(run) = runs
        .iter()
        .find(|r| r.kind == Kind::Roslite && r.note.is_some())
    {
        bail!(
            "the roslite configuration at {} failed: {}",
            period_label(run.period),
            run.note.as_deref().unwrap_or("")
        );
    }
    let svgs = plot::write_svgs(&args.out, &runs)?;
    let report = Report {
        settings: Settings {
            timer_slack_ns: args.timer_slack_ns,
            rt_priority: args.rt_priority,
            impair: args.impair.clone(),
            out: args.out.clone(),
        },
        load: [load_before, load_average()],
        requests,
        periods: &periods,
        runs: &runs,
        svgs: &svgs,
    };
    if args.json {
        json::print(&report.json());
    } else {
        print!("{}", report.table());
    }
    Ok(())
}

/// Writes the rclpy scripts and the Fast DDS profile to `dir`; the Python to run them with.
fn prepare_rclpy(args: &ServiceArgs, dir: &Path) -> anyhow::Result<PathBuf> {
    let python = find_python(args.python.as_deref())?;
    std::fs::create_dir_all(dir)?;
    for (name, text) in [
        (
            "bench_service_server.py",
            include_str!("../../../../interop/python/bench_service_server.py"),
        ),
        (
            "bench_service_client.py",
            include_str!("../../../../interop/python/bench_service_client.py"),
        ),
        ("fastdds-loopback.xml", FASTDDS_LOOPBACK_PROFILE),
    ] {
        std::fs::write(dir.join(name), text)?;
    }
    let probe = Command::new(&python)
        .args(["-c", "import rclpy, std_srvs.srv"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("starting {}", python.display()))?;
    anyhow::ensure!(
        probe.success(),
        "{} cannot import rclpy and std_srvs",
        python.display()
    );
    Ok(python)
}

/// The 1-minute load average from /proc/loadavg.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 90.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.0} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impairment_errors_are_readable() {
        assert!(parse_impairment("delay_ms=10,jitter_ms=3,loss=0.0").is_ok());
        let e = parse_impairment("delay=10").unwrap_err();
        assert!(e.contains("unknown key 'delay'"), "{e}");
    }

    #[test]
    fn samples_parse() {
        let (i, s) = parse_sample("SAMPLE 3 -1500 250000 1").unwrap();
        assert_eq!(
            (i, s.jitter_ns, s.response_ns, s.ok),
            (3, -1500, Some(250_000), true)
        );
        assert_eq!(
            parse_sample("SAMPLE 4 10 -1 0").unwrap().1.response_ns,
            None
        );
        assert!(parse_sample("READY").is_none());
    }
}
