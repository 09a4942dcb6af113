//! Test harness: throw-away Linux network namespaces (docs/robustness.md §4).
//!
//! A [`NetNs`] is a namespace made with `ip netns add roslite-<prefix>-<pid>-<n>` holding only
//! `lo`, brought up with multicast enabled and a route for 224.0.0.0/4, so SPDP multicast works
//! inside it and nothing inside can reach the host's networks. It is deleted on drop.
//!
//! Code runs inside it either as a child process ([`NetNs::command`], [`NetNs::spawn`]: `ip
//! netns exec`) or on a thread that moved itself in with `setns(2)` ([`NetNs::run`],
//! [`NetNs::enter_current_thread`]); sockets keep the namespace they were created in.
//!
//! Needs root (or `CAP_SYS_ADMIN` + `CAP_NET_ADMIN`) and the Debian package `iproute2`; the
//! packet-drop helpers also need `nftables`. Missing either is a [`NetNsError`], so a test that
//! needs a namespace fails loudly instead of skipping.

use std::ffi::OsStr;
use std::fmt;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use rustix::thread::{move_into_link_name_space, LinkNameSpaceType};

/// `ip netns` or `nft` could not give us a namespace (or a rule in it).
#[derive(Debug)]
#[non_exhaustive]
pub enum NetNsError {
    /// A command ran and failed.
    CommandFailed {
        command: String,
        status: ExitStatus,
        stderr: String,
    },
    /// `setns(2)` failed.
    Enter { name: String, source: io::Error },
    /// `/run/netns/<name>` could not be opened.
    Open { path: PathBuf, source: io::Error },
    /// The process lacks the privileges to manage namespaces.
    PermissionDenied { command: String, stderr: String },
    /// `program` is not installed.
    ProgramMissing {
        program: &'static str,
        package: &'static str,
    },
    /// A command could not be started for another reason.
    Spawn { command: String, source: io::Error },
    /// The thread running a closure in the namespace panicked; the payload's text.
    ThreadPanicked { message: String },
}

impl fmt::Display for NetNsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetNsError::CommandFailed {
                command,
                status,
                stderr,
            } => {
                write!(f, "`{command}` failed ({status}): {}", stderr.trim())
            }
            NetNsError::Enter { name, source } => write!(
                f,
                "cannot enter network namespace {name}: {source}; the test needs CAP_SYS_ADMIN \
                 (run it as root)"
            ),
            NetNsError::Open { path, source } => {
                write!(f, "cannot open {}: {source}", path.display())
            }
            NetNsError::PermissionDenied { command, stderr } => write!(
                f,
                "`{command}` was refused ({}): network-namespace tests need root or \
                 CAP_SYS_ADMIN + CAP_NET_ADMIN; run them with sudo or in a privileged container",
                stderr.trim()
            ),
            NetNsError::ProgramMissing { program, package } => write!(
                f,
                "`{program}` is not installed: install the Debian package {package} (`cargo \
                 xtask` installs the tools the tests need)"
            ),
            NetNsError::Spawn { command, source } => {
                write!(f, "cannot start `{command}`: {source}")
            }
            NetNsError::ThreadPanicked { message } => {
                write!(f, "the code run in the namespace panicked: {message}")
            }
        }
    }
}

impl std::error::Error for NetNsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NetNsError::Enter { source, .. }
            | NetNsError::Open { source, .. }
            | NetNsError::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A network namespace that exists until this value is dropped.
#[derive(Debug)]
pub struct NetNs {
    name: String,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl NetNs {
    /// Creates `roslite-<prefix>-<pid>-<n>` with `lo` up, multicast on and a 224.0.0.0/4
    /// route on `lo`. Characters of `prefix` other than ASCII letters, digits and '-' become
    /// '-'.
    ///
    /// # Errors
    /// [`NetNsError::ProgramMissing`] without `ip`, [`NetNsError::PermissionDenied`] without
    /// privileges, [`NetNsError::CommandFailed`] otherwise.
    pub fn create(prefix: &str) -> Result<NetNs, NetNsError> {
        let prefix: String = prefix
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("roslite-{prefix}-{}-{n}", std::process::id());
        match run_ip(&["netns", "add", &name]) {
            Ok(()) => {}
            // Left behind by a crashed earlier process with our pid: no live process can
            // own this name, so it is stale.
            Err(NetNsError::CommandFailed { stderr, .. }) if stderr.contains("File exists") => {
                run_ip(&["netns", "del", &name])?;
                run_ip(&["netns", "add", &name])?;
            }
            Err(e) => return Err(e),
        }
        // From here on, dropping `ns` deletes the namespace if a step fails.
        let ns = NetNs { name };
        ns.ip(&["link", "set", "lo", "up"])?;
        ns.ip(&["link", "set", "lo", "multicast", "on"])?;
        // `src`: without it the route's source address is 0.0.0.0 (127.0.0.1 has host scope,
        // the route link scope), and a transport could not learn its address from the route.
        ns.ip(&[
            "route",
            "add",
            "224.0.0.0/4",
            "dev",
            "lo",
            "src",
            "127.0.0.1",
        ])?;
        Ok(ns)
    }

    /// The namespace's name, as `ip netns list` shows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `ip -n <name> <args>`.
    ///
    /// # Errors
    /// As for [`Self::create`].
    pub fn ip(&self, args: &[&str]) -> Result<(), NetNsError> {
        let mut full = vec!["-n", self.name.as_str()];
        full.extend_from_slice(args);
        run_ip(&full)
    }

    /// A [`Command`] that runs `program` inside the namespace (`ip netns exec <name>
    /// program`); add arguments, environment and stdio to it as usual.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.name]).arg(program);
        command
    }

    /// Starts a copy of `cmd` (program, arguments, environment, working directory) inside the
    /// namespace. Stdio settings cannot be copied from a `Command`: the child inherits ours;
    /// use [`Self::command`] to set them.
    ///
    /// # Errors
    /// [`NetNsError::ProgramMissing`] without `ip`, [`NetNsError::Spawn`] otherwise.
    pub fn spawn(&self, cmd: &Command) -> Result<Child, NetNsError> {
        let mut inner = self.command(cmd.get_program());
        inner.args(cmd.get_args());
        for (key, value) in cmd.get_envs() {
            match value {
                Some(value) => inner.env(key, value),
                None => inner.env_remove(key),
            };
        }
        if let Some(dir) = cmd.get_current_dir() {
            inner.current_dir(dir);
        }
        inner
            .spawn()
            .map_err(|source| spawn_error("ip", &describe(&inner), source))
    }

    /// Moves the calling thread into the namespace (`setns(2)` on `/run/netns/<name>`).
    /// Sockets it creates from then on live in the namespace. There is no way back: use a
    /// dedicated thread that ends afterwards, e.g. through [`Self::run`].
    ///
    /// # Errors
    /// [`NetNsError::Open`] or [`NetNsError::Enter`].
    pub fn enter_current_thread(&self) -> Result<(), NetNsError> {
        enter_by_name(&self.name)
    }

    /// What moves a thread of its own into the namespace later, for a thread that outlives
    /// this borrow (a capture running beside the namespace's processes, say): as
    /// [`Self::enter_current_thread`], on the thread that calls it.
    pub fn entry(&self) -> impl FnOnce() -> Result<(), NetNsError> + Send + 'static {
        let name = self.name.clone();
        move || enter_by_name(&name)
    }

    /// Runs `f` on a new thread inside the namespace and returns its result.
    ///
    /// # Errors
    /// As for [`Self::enter_current_thread`], or [`NetNsError::ThreadPanicked`] if `f`
    /// panicked (the panic message is kept, so test assertions stay readable).
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T, NetNsError> {
        std::thread::scope(|scope| {
            let handle = std::thread::Builder::new()
                .name(format!("netns {}", self.name))
                .spawn_scoped(scope, || {
                    self.enter_current_thread()?;
                    Ok(f())
                })
                .map_err(|source| NetNsError::Spawn {
                    command: "thread".into(),
                    source,
                })?;
            handle.join().unwrap_or_else(|payload| {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "(non-string panic payload)".into());
                Err(NetNsError::ThreadPanicked { message })
            })
        })
    }

    /// Loads an nftables ruleset (`nft -f -` inside the namespace).
    ///
    /// # Errors
    /// [`NetNsError::ProgramMissing`] without `nft`, [`NetNsError::CommandFailed`] if `nft`
    /// rejects the rules.
    pub fn nft(&self, ruleset: &str) -> Result<(), NetNsError> {
        // Check for nft ourselves: `ip netns exec` would report a missing program as its own
        // failure.
        if !program_exists("nft") {
            return Err(NetNsError::ProgramMissing {
                program: "nft",
                package: "nftables",
            });
        }
        let mut command = self.command("nft");
        command
            .args(["-f", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        command.stderr(Stdio::piped());
        let text = describe(&command);
        let mut child = command
            .spawn()
            .map_err(|source| spawn_error("ip", &text, source))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(ruleset.as_bytes())
                .map_err(|source| NetNsError::Spawn {
                    command: text.clone(),
                    source,
                })?;
        }
        let output = child
            .wait_with_output()
            .map_err(|source| NetNsError::Spawn {
                command: text.clone(),
                source,
            })?;
        check(text, output.status, &output.stderr)
    }

    /// Drops `percent` % of the UDP datagrams received inside the namespace, chosen at random
    /// (nftables `numgen random` at the `inet` input hook; see docs/robustness.md §4). The drop is
    /// silent for the sender: a drop at the output hook would make `sendto` fail with `EPERM`
    /// instead of losing the datagram. Replaces an earlier drop rule; `0` removes it.
    ///
    /// # Errors
    /// As for [`Self::nft`].
    pub fn drop_udp_percent(&self, percent: u8) -> Result<(), NetNsError> {
        let percent = percent.min(100);
        let rule = match percent {
            0 => String::new(),
            100 => "meta l4proto udp counter drop".to_owned(),
            p => format!("meta l4proto udp numgen random mod 100 < {p} counter drop"),
        };
        // Declaring the table first makes the delete succeed whether or not it exists.
        self.nft(&format!(
            "table inet roslite_faults {{}}\ndelete table inet roslite_faults\n\
             table inet roslite_faults {{\n  chain input {{\n    type filter hook input \
             priority 0; policy accept;\n    {rule}\n  }}\n}}\n"
        ))
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        // Threads and sockets still inside keep the namespace alive until they end; this
        // only removes its name.
        if let Err(e) = run_ip(&["netns", "del", &self.name]) {
            eprintln!(
                "roslite-transport netns: could not delete {}: {e}",
                self.name
            );
        }
    }
}

/// How long [`stop_gracefully`] gives a peer: an rclpy process took 0.19 s from SIGINT to exit.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Stops a peer process as Ctrl-C would (SIGINT), so that it can release what would outlive
/// it, kills it (SIGKILL) if it is still running `grace` later, and reaps it. Fast DDS removes
/// its shared-memory files in `/dev/shm` only when its participant is deleted: an rclpy peer
/// that is killed leaves 8 of them (about 1.3 MiB) there for good.
///
/// # Errors
/// As [`Child::try_wait`], [`Child::kill`] and [`Child::wait`].
pub fn stop_gracefully(child: &mut Child, grace: std::time::Duration) -> io::Result<ExitStatus> {
    if let Some(status) = child.try_wait()? {
        return Ok(status);
    }
    interrupt(child);
    let deadline = std::time::Instant::now() + grace;
    while std::time::Instant::now() < deadline {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill()?;
    child.wait()
}

/// Asks `child` to stop (SIGINT, as Ctrl-C would), without waiting: to stop many at once
/// before [`stop_gracefully`] reaps them one by one.
pub fn interrupt(child: &Child) {
    let pid = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        // Ignoring an error: the process may have exited already, which is what was asked.
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
    }
}

/// Moves the calling thread into the namespace `/run/netns/<name>`.
fn enter_by_name(name: &str) -> Result<(), NetNsError> {
    let path = PathBuf::from("/run/netns").join(name);
    let file = File::open(&path).map_err(|source| NetNsError::Open { path, source })?;
    move_into_link_name_space(file.as_fd(), Some(LinkNameSpaceType::Network)).map_err(|e| {
        NetNsError::Enter {
            name: name.to_owned(),
            source: e.into(),
        }
    })
}

fn run_ip(args: &[&str]) -> Result<(), NetNsError> {
    let mut command = Command::new("ip");
    command.args(args).stdin(Stdio::null());
    let text = describe(&command);
    let output = command
        .output()
        .map_err(|source| spawn_error("ip", &text, source))?;
    check(text, output.status, &output.stderr)
}

fn check(command: String, status: ExitStatus, stderr: &[u8]) -> Result<(), NetNsError> {
    if status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(stderr).into_owned();
    if stderr.contains("Operation not permitted") || stderr.contains("Permission denied") {
        Err(NetNsError::PermissionDenied { command, stderr })
    } else {
        Err(NetNsError::CommandFailed {
            command,
            status,
            stderr,
        })
    }
}

fn spawn_error(program: &'static str, command: &str, source: io::Error) -> NetNsError {
    if source.kind() == io::ErrorKind::NotFound {
        let package = if program == "nft" {
            "nftables"
        } else {
            "iproute2"
        };
        NetNsError::ProgramMissing { program, package }
    } else {
        NetNsError::Spawn {
            command: command.to_owned(),
            source,
        }
    }
}

fn program_exists(program: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .any(|dir| dir.join(program).is_file())
}

fn describe(command: &Command) -> String {
    let mut text = command.get_program().to_string_lossy().into_owned();
    for arg in command.get_args() {
        text.push(' ');
        text.push_str(&arg.to_string_lossy());
    }
    text
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::time::Duration;

    use super::*;

    /// A shell that reports it is ready once its SIGINT disposition is set, so the signal
    /// cannot come before it.
    fn shell(script: &str) -> Child {
        let mut child = Command::new("sh")
            .args(["-c", script])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start sh");
        let mut ready = [0u8; 6];
        std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut ready).unwrap();
        assert_eq!(&ready, b"ready\n");
        child
    }

    #[test]
    fn a_peer_that_takes_sigint_ends_by_itself() {
        let mut child = shell("trap 'exit 3' INT; echo ready; while :; do sleep 0.01; done");
        let status = stop_gracefully(&mut child, STOP_GRACE).unwrap();
        assert_eq!(status.code(), Some(3), "{status}");
    }

    #[test]
    fn a_peer_that_ignores_sigint_is_killed_after_the_grace() {
        let mut child = shell("trap '' INT; echo ready; while :; do sleep 0.01; done");
        let status = stop_gracefully(&mut child, Duration::from_millis(200)).unwrap();
        assert_eq!(status.signal(), Some(9), "{status}");
    }
}
