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

/// Which of a node's services a call is to: named in the error when the service does not
/// appear, with what to check then.
pub(crate) struct ServiceFamily {
    kind: &'static str,
    hint: &'static str,
}

pub(crate) const PARAMETER_SERVICES: ServiceFamily = ServiceFamily {
    kind: "parameter",
    hint: "check the name with `roslite node list`; a node started with parameter services \
           disabled has none",
};

pub(crate) const LIFECYCLE_SERVICES: ServiceFamily = ServiceFamily {
    kind: "lifecycle",
    hint: "`roslite lifecycle nodes` lists the managed nodes; a plain node has no lifecycle",
};

impl ServiceFamily {
    /// Calls `<node>/<service>`, one of this family, once, waiting up to `timeout` for it to
    /// appear and to answer.
    pub(crate) fn call<S: ServiceType>(
        &self,
        tool: &Node,
        node: &str,
        service: &str,
        request: S::Request,
        timeout: Duration,
    ) -> anyhow::Result<S::Response> {
        let name = format!("{node}/{service}");
        let client = tool
            .create_client::<S>(&name)
            .with_context(|| format!("cannot create a client of '{name}'"))?;
        if !client.wait_for_service(timeout) {
            bail!(
                "Node not found: no {} service '{name}' within {} s ({})",
                self.kind,
                timeout.as_secs_f64(),
                self.hint
            );
        }
        client
            .call(request, timeout)
            .map_err(|e| anyhow::anyhow!("{e}"))
    }
}
