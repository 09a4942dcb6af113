//! One process of the application: `roslite linetrace-node robot|follower|both ...`, the
//! command line the launcher starts (the rclpy script takes the same options).
//!
//! The process runs until a line `stop` (or the end) arrives on standard input, then writes its
//! trace and exits; it also dies with its parent.

use std::io::BufRead as _;
use std::path::PathBuf;
use std::time::Duration;

use roslite::{Context, ContextOptions, Executor, NetworkMode};

use crate::nodes::{Event, FollowerNode, NodeOptions, RobotNode, Trace};

const USAGE: &str =
    "usage: roslite-linetrace-node (or roslite linetrace-node) robot|follower|both --trace FILE \
[--domain D] [--speed K] [--seed S] [--twist-stamped]";

/// Which nodes this process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Robot,
    Follower,
    /// Both in one context (intra-process delivery, no network).
    Both,
}

/// Parsed command line.
#[derive(Clone, Debug)]
pub struct Args {
    pub role: Role,
    pub trace: PathBuf,
    pub domain: u32,
    pub node: NodeOptions,
}

impl Args {
    /// Parses the arguments after `linetrace-node`.
    ///
    /// # Errors
    /// A message naming the bad argument, with the usage.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut it = args.iter();
        let role = match it.next().map(String::as_str) {
            Some("robot") => Role::Robot,
            Some("follower") => Role::Follower,
            Some("both") => Role::Both,
            other => return Err(format!("unknown role {other:?}; {USAGE}")),
        };
        let mut trace = None;
        let mut domain = 0;
        let mut node = NodeOptions::default();
        while let Some(flag) = it.next() {
            if flag == "--twist-stamped" {
                node.twist_stamped = true;
                continue;
            }
            let value = it
                .next()
                .ok_or_else(|| format!("{flag} needs a value; {USAGE}"))?;
            let bad = |what: &str| format!("{flag} {value}: expected {what}; {USAGE}");
            match flag.as_str() {
                "--trace" => trace = Some(PathBuf::from(value)),
                "--domain" => domain = value.parse().map_err(|_| bad("a domain id 0..=232"))?,
                "--speed" => {
                    node.speed = value
                        .parse()
                        .ok()
                        .filter(|s: &f64| s.is_finite() && *s > 0.0)
                        .ok_or_else(|| bad("a positive number"))?;
                }
                "--seed" => node.seed = value.parse().map_err(|_| bad("an unsigned integer"))?,
                _ => return Err(format!("unknown option {flag}; {USAGE}")),
            }
        }
        Ok(Self {
            role,
            trace: trace.ok_or_else(|| format!("--trace is required; {USAGE}"))?,
            domain,
            node,
        })
    }
}

/// A context that only talks to this host: LOCALHOST discovery (unicast to 127.0.0.1, no
/// multicast, sockets on 127.0.0.1) and no static peers, whatever the environment says.
///
/// # Errors
/// The context cannot start (bad domain, no sockets).
pub fn localhost_context(domain_id: u32) -> Result<Context, String> {
    let mut config = roslite_transport::TransportConfig::default();
    config.discovery.range = roslite_transport::DiscoveryRange::Localhost;
    config.discovery.domain_id = domain_id;
    config.discovery.static_peers.clear();
    config.discovery.interface = None;
    if !config.discovery.range.probes_localhost() || config.discovery.range.uses_multicast() {
        return Err("internal bug: LOCALHOST discovery would use multicast".into());
    }
    Context::new(ContextOptions {
        domain_id,
        network: NetworkMode::Rtps(config),
        ..Default::default()
    })
    .map_err(|e| e.to_string())
}

/// Runs the process described by `args` until told to stop.
///
/// # Errors
/// A message saying what could not be set up or written.
pub fn run(args: &Args) -> Result<(), String> {
    // Die with the launcher, so an interrupted run leaves no participant behind.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    let ctx = match args.role {
        Role::Both => Context::new(ContextOptions::default()).map_err(|e| e.to_string())?,
        _ => localhost_context(args.domain)?,
    };
    let trace = Trace::create(&args.trace)
        .map_err(|e| format!("cannot create {}: {e}", args.trace.display()))?;
    let print_event: Box<dyn FnMut(Event) + Send> = Box::new(|event| println!("{event}"));
    let executor = Executor::new(&ctx);
    let robot_node;
    let follower_node;
    let mut robot = None;
    let mut follower = None;
    if args.role != Role::Follower {
        robot_node = ctx.create_node("raspimouse").map_err(|e| e.to_string())?;
        robot = Some(
            RobotNode::new(&robot_node, args.node, trace.clone(), print_event)
                .map_err(|e| e.to_string())?,
        );
        executor.add_node(&robot_node);
    }
    if args.role != Role::Robot {
        follower_node = ctx.create_node("follower").map_err(|e| e.to_string())?;
        let f = FollowerNode::new(&follower_node, args.node, trace.clone())
            .map_err(|e| e.to_string())?;
        // Upstream's on_configure fails if motor_power is not there within 5 s.
        if args.role == Role::Follower && !f.wait_for_motor_power(Duration::from_secs(10)) {
            return Err("follower: /motor_power is not available after 10 s".into());
        }
        follower = Some(f);
        executor.add_node(&follower_node);
    }
    let stopper = ctx.clone();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(l) if l.trim() == "stop" => break,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        stopper.shutdown();
    });
    if args.role == Role::Both {
        // Like upstream's MultiThreadedExecutor: the follower's blocking beeps must not stall
        // the robot's sensor timer (each node's callbacks stay mutually exclusive).
        executor.spin_threads(2).map_err(|e| e.to_string())?;
    } else {
        executor.spin();
    }
    if let Some(r) = &robot {
        r.finish();
    }
    if let Some(f) = &follower {
        f.finish();
    }
    trace
        .finish()
        .map_err(|e| format!("cannot write {}: {e}", args.trace.display()))
}
