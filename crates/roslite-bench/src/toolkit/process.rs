//! Helper processes: this binary again in a helper role (`roslite bench rtt-pong`, say), or a
//! peer's program (`ddsperf`, a Python script). Each is stopped and reaped when its [`Helper`]
//! is dropped: SIGINT first, so that an rclpy peer's Fast DDS removes its shared-memory files
//! from `/dev/shm`, then SIGKILL if it is still running 2 s later. A helper of this binary
//! dies with the bench ([`die_with_parent`]), so an interrupted bench leaves no participant
//! behind.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{bail, Context as _};
use roslite_transport::netns::{stop_gracefully, STOP_GRACE};

/// Makes a helper process die with the process that started it, so an interrupted bench
/// leaves no participant behind.
pub fn die_with_parent() {
    // Ignoring an error: the parent still kills its helpers itself when it ends normally.
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
}

/// A process this bench started; stopped (SIGINT, then SIGKILL) and reaped when dropped.
pub struct Helper {
    pub child: Child,
    pub name: String,
}

impl Helper {
    /// Starts `command` with the standard streams it was given (stderr shows the helper's
    /// errors unless the caller silenced it).
    pub fn spawn(name: &str, command: &mut Command) -> anyhow::Result<Self> {
        let child = command
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        Ok(Self {
            child,
            name: name.to_owned(),
        })
    }

    /// Starts `command` with its stdout collected line by line (see [`collect_lines`]).
    pub fn spawn_reading(
        name: &str,
        command: &mut Command,
    ) -> anyhow::Result<(Self, Arc<Mutex<Vec<String>>>)> {
        let mut helper = Self::spawn(name, command.stdout(Stdio::piped()))?;
        let stdout = helper
            .child
            .stdout
            .take()
            .context("internal bug: stdout not piped")?;
        Ok((helper, collect_lines(stdout)))
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Asks the process to stop (SIGINT, as Ctrl-C), without waiting: to stop many at once
    /// before they are dropped one by one.
    pub fn interrupt(&self) {
        roslite_transport::netns::interrupt(&self.child);
    }

    /// Fails if the process has already exited.
    pub fn check_running(&mut self) -> anyhow::Result<()> {
        if let Some(status) = self.child.try_wait()? {
            bail!("{} exited early with {status}", self.name);
        }
        Ok(())
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = stop_gracefully(&mut self.child, STOP_GRACE);
    }
}

/// A helper spoken to line by line: commands on its stdin, its stdout read on a thread into a
/// channel, so [`Self::expect`] can wait for one line with a timeout. Killed and reaped when
/// dropped.
pub struct Conversation {
    helper: Helper,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Conversation {
    /// Starts `command` with stdin and stdout piped (stderr as the command has it).
    pub fn spawn(name: &str, command: &mut Command) -> anyhow::Result<Self> {
        let mut helper = Helper::spawn(name, command.stdin(Stdio::piped()).stdout(Stdio::piped()))?;
        let stdout = helper
            .child
            .stdout
            .take()
            .context("internal bug: stdout not piped")?;
        let stdin = helper.child.stdin.take();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            helper,
            stdin,
            lines,
        })
    }

    pub fn pid(&self) -> u32 {
        self.helper.pid()
    }

    /// As [`Helper::interrupt`].
    pub fn interrupt(&self) {
        self.helper.interrupt();
    }

    pub fn name(&self) -> &str {
        &self.helper.name
    }

    /// What follows `prefix` on the next line that starts with it (other lines are skipped),
    /// within `timeout`.
    ///
    /// # Errors
    /// When no such line came in time, or the helper ended first.
    pub fn expect(&mut self, prefix: &str, timeout: Duration) -> anyhow::Result<String> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return Ok(rest.trim().to_owned());
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    bail!("{} said no {prefix:?} within {timeout:?}", self.helper.name)
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.helper.child.wait()?;
                    bail!(
                        "{} exited ({status}) before saying {prefix:?}",
                        self.helper.name
                    )
                }
            }
        }
    }

    /// Writes one line to the helper's stdin.
    ///
    /// # Errors
    /// When the helper's stdin is closed.
    pub fn say(&mut self, line: &str) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().context("internal bug: stdin closed")?;
        writeln!(stdin, "{line}").with_context(|| format!("writing to {}", self.helper.name))?;
        stdin.flush()?;
        Ok(())
    }
}

/// This binary with `args`, for a helper role.
pub fn self_command(args: &[&str]) -> anyhow::Result<Command> {
    let exe = std::env::current_exe().context("locating the roslite binary")?;
    let mut command = Command::new(exe);
    command.args(args);
    Ok(command)
}

/// Collects a child's stdout lines on a thread, so its pipe never fills.
pub fn collect_lines(stdout: impl Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            sink.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(line);
        }
    });
    lines
}
