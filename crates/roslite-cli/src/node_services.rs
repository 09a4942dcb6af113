//! Calling the services a node serves about itself (`<node>/get_parameters`,
//! `<node>/get_state`, ...), as `roslite param` and `roslite lifecycle` do.

use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite::{Node, ServiceType};

/// The tool's own node, in a context on the ROS network.
pub(crate) fn tool_node() -> anyhow::Result<Node> {
    let ctx = crate::topic::networked_context()?;
    let name = crate::topic::default_node_name();
    ctx.create_node(&name)
        .with_context(|| format!("cannot create node '{name}'"))
}

/// `talker` → `/talker`, as ros2cli reads node names.
pub(crate) fn absolute_node_name(name: &str) -> String {
    if name.starts_with('/') {
        name.to_owned()
    } else {
        format!("/{name}")
    }
}

/// Calls `<node>/<service>` once, waiting up to `timeout` for it to appear and to answer.
/// `kind` names the service family in the error when it does not appear ("parameter"), and
/// `hint` says what to check then.
pub(crate) fn call<S: ServiceType>(
    tool: &Node,
    node: &str,
    service: &str,
    request: S::Request,
    timeout: Duration,
    (kind, hint): (&str, &str),
) -> anyhow::Result<S::Response> {
    let name = format!("{node}/{service}");
    let client = tool
        .create_client::<S>(&name)
        .with_context(|| format!("cannot create a client of '{name}'"))?;
    if !client.wait_for_service(timeout) {
        bail!(
            "Node not found: no {kind} service '{name}' within {} s ({hint})",
            timeout.as_secs_f64()
        );
    }
    client
        .call(request, timeout)
        .map_err(|e| anyhow::anyhow!("{e}"))
}
