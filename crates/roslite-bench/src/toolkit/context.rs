//! roslite contexts for the benches: confined to this host, and asked which path a remote
//! endpoint's samples take.
//!
//! The path comes from the context's graph (`roslite::Context::graph`): the benches print it next to
//! their figures, because a build without the same-host wiring falls back to UDP silently.

use std::thread::JoinHandle;

use roslite::graph::GraphEndpointKind;
use roslite::{Context, ContextOptions, Executor, Node};

/// A context whose RTPS participant only looks for peers on this host: the
/// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` semantics (unicast SPDP probes to 127.0.0.1, no
/// multicast socket, sockets bound to 127.0.0.1) and no static peers, whatever the environment
/// says.
pub fn localhost_context(domain_id: u32) -> anyhow::Result<Context> {
    localhost_context_with(domain_id, roslite::LocalTransports::default())
}

/// [`localhost_context`] with only the given same-host transports (`UDP_ONLY` keeps two
/// roslite processes on RTPS/UDP, which they would otherwise leave for shared memory).
pub fn localhost_context_with(
    domain_id: u32,
    local_transports: roslite::LocalTransports,
) -> anyhow::Result<Context> {
    Ok(Context::new(ContextOptions {
        local_transports,
        ..ContextOptions::localhost(domain_id)
    })?)
}

/// The path the samples of the remote publisher on `topic` take to `ctx` (`shm`, `uds`,
/// `udp`; `intra` without a network, `unknown` before it is discovered).
pub fn remote_publisher_path(ctx: &Context, topic: &str) -> String {
    if !ctx.has_network() {
        return "intra".to_owned();
    }
    let topic = format!("/{topic}");
    ctx.graph()
        .endpoints()
        .into_iter()
        .find(|e| e.topic == topic && e.kind == GraphEndpointKind::Publisher && !e.local)
        .map_or_else(|| "unknown".to_owned(), |e| e.transport.to_owned())
}

/// Spins `node` on an executor of its own thread until `ctx` shuts down.
pub fn spin_on_thread(ctx: &Context, node: Node) -> JoinHandle<()> {
    let ctx = ctx.clone();
    std::thread::spawn(move || {
        let executor = Executor::new(&ctx);
        executor.add_node(&node);
        executor.spin();
    })
}
