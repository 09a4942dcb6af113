//! Real-time settings for executor threads: SCHED_FIFO priority, CPU affinity, `mlockall`,
//! timer slack. Each one either takes effect or returns an error saying what the system lacks;
//! none is ignored silently.

use std::fmt;
use std::num::NonZeroU64;

/// What to apply to a thread (and, for `mlockall`, the process).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RealtimeOptions {
    /// SCHED_FIFO with this priority (1..=99).
    pub fifo_priority: Option<u8>,
    /// Pin the thread to these CPUs.
    pub cpus: Option<Vec<usize>>,
    /// Lock current and future memory (no page faults on the hot path).
    pub mlockall: bool,
    /// Timer slack in nanoseconds (Linux default 50 000 for normal threads); 1 is the minimum.
    pub timer_slack_ns: Option<u64>,
}

/// Environment variables read by [`RealtimeOptions::from_env`].
pub const ENV_PRIORITY: &str = "ROSLITE_RT_PRIORITY";
pub const ENV_CPUS: &str = "ROSLITE_CPU_AFFINITY";
pub const ENV_MLOCKALL: &str = "ROSLITE_MLOCKALL";
pub const ENV_TIMER_SLACK: &str = "ROSLITE_TIMER_SLACK_NS";

/// A setting the system refused or a value that makes no sense.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RtError {
    /// A value from the environment or command line is malformed.
    Invalid {
        setting: &'static str,
        value: String,
        expected: &'static str,
    },
    /// SCHED_FIFO was refused.
    Priority {
        priority: u8,
        errno: i32,
        rtprio_limit: Option<u64>,
    },
    /// The CPU set was refused.
    Affinity {
        cpus: Vec<usize>,
        errno: i32,
        available: usize,
    },
    /// `mlockall` was refused.
    Mlockall {
        errno: i32,
        memlock_limit: Option<u64>,
    },
    /// Setting the timer slack was refused.
    TimerSlack { errno: i32 },
    /// `mlockall` only locks the calling process's own memory.
    MlockallOtherProcess,
}

fn limit_text(limit: Option<u64>) -> String {
    match limit {
        None => "unlimited".to_owned(),
        Some(l) => l.to_string(),
    }
}

impl fmt::Display for RtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid {
                setting,
                value,
                expected,
            } => {
                write!(f, "{setting}='{value}' is invalid: expected {expected}")
            }
            Self::Priority {
                priority,
                errno,
                rtprio_limit,
            } => write!(
                f,
                "SCHED_FIFO priority {priority} refused ({}): needs CAP_SYS_NICE or an \
                 RLIMIT_RTPRIO of at least {priority} (current limit: {}); run as root, grant \
                 cap_sys_nice, or raise 'rtprio' in /etc/security/limits.conf",
                std::io::Error::from_raw_os_error(*errno),
                limit_text(*rtprio_limit)
            ),
            Self::Affinity {
                cpus,
                errno,
                available,
            } => write!(
                f,
                "CPU affinity {cpus:?} refused ({}): this process may use {available} CPU(s), \
                 numbered from 0; pick CPUs from `taskset -p $$`",
                std::io::Error::from_raw_os_error(*errno)
            ),
            Self::Mlockall {
                errno,
                memlock_limit,
            } => write!(
                f,
                "mlockall refused ({}): needs CAP_IPC_LOCK or an RLIMIT_MEMLOCK large enough for \
                 the whole process (current limit: {} bytes); run as root or raise 'memlock' in \
                 /etc/security/limits.conf",
                std::io::Error::from_raw_os_error(*errno),
                limit_text(*memlock_limit)
            ),
            Self::MlockallOtherProcess => f.write_str(
                "mlockall cannot be applied to another process; have that process call it",
            ),
            Self::TimerSlack { errno } => write!(
                f,
                "setting the timer slack refused ({})",
                std::io::Error::from_raw_os_error(*errno)
            ),
        }
    }
}

impl std::error::Error for RtError {}

impl RealtimeOptions {
    /// True if nothing is requested.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Reads `ROSLITE_RT_PRIORITY` (1-99), `ROSLITE_CPU_AFFINITY` (e.g. `1` or `0,1` or `0-3`),
    /// `ROSLITE_MLOCKALL` (`1`/`true`) and `ROSLITE_TIMER_SLACK_NS`.
    ///
    /// # Errors
    /// [`RtError::Invalid`] naming the variable and the expected form.
    pub fn from_env() -> Result<Self, RtError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// As [`Self::from_env`], reading variables through `get`.
    ///
    /// # Errors
    /// [`RtError::Invalid`] naming the variable and the expected form.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self, RtError> {
        let var = |name| get(name).filter(|v: &String| !v.trim().is_empty());
        let mut options = Self::default();
        if let Some(v) = var(ENV_PRIORITY) {
            options.fifo_priority = Some(parse_priority(ENV_PRIORITY, &v)?);
        }
        if let Some(v) = var(ENV_CPUS) {
            options.cpus = Some(parse_cpu_list(ENV_CPUS, &v)?);
        }
        if let Some(v) = var(ENV_MLOCKALL) {
            options.mlockall = match v.trim() {
                "1" | "true" | "yes" | "on" => true,
                "0" | "false" | "no" | "off" => false,
                _ => {
                    return Err(RtError::Invalid {
                        setting: ENV_MLOCKALL,
                        value: v,
                        expected: "1/true or 0/false",
                    })
                }
            };
        }
        if let Some(v) = var(ENV_TIMER_SLACK) {
            options.timer_slack_ns = Some(v.trim().parse().ok().filter(|n| *n > 0).ok_or(
                RtError::Invalid {
                    setting: ENV_TIMER_SLACK,
                    value: v,
                    expected: "a positive number of nanoseconds",
                },
            )?);
        }
        Ok(options)
    }

    /// Applies the settings to the calling thread (and `mlockall` to the process).
    ///
    /// # Errors
    /// The first setting the system refuses.
    pub fn apply_to_current_thread(&self) -> Result<(), RtError> {
        if let Some(slack) = self.timer_slack_ns {
            rustix::thread::set_current_timer_slack(NonZeroU64::new(slack)).map_err(|e| {
                RtError::TimerSlack {
                    errno: e.raw_os_error(),
                }
            })?;
        }
        if let Some(cpus) = &self.cpus {
            let mut set = rustix::thread::CpuSet::new();
            for &cpu in cpus {
                if cpu < rustix::thread::CpuSet::MAX_CPU {
                    set.set(cpu);
                }
            }
            rustix::thread::sched_setaffinity(None, &set).map_err(|e| RtError::Affinity {
                cpus: cpus.clone(),
                errno: e.raw_os_error(),
                available: std::thread::available_parallelism().map_or(1, |n| n.get()),
            })?;
        }
        if self.mlockall {
            use rustix::mm::MlockAllFlags;
            rustix::mm::mlockall(MlockAllFlags::CURRENT | MlockAllFlags::FUTURE).map_err(|e| {
                RtError::Mlockall {
                    errno: e.raw_os_error(),
                    memlock_limit: rustix::process::getrlimit(rustix::process::Resource::Memlock)
                        .current,
                }
            })?;
        }
        if let Some(priority) = self.fifo_priority {
            set_fifo_priority(priority)?;
        }
        Ok(())
    }
}

impl RealtimeOptions {
    /// Applies the settings to another process's main thread (threads it creates afterwards
    /// inherit them): priority, affinity and timer slack (`/proc/<pid>/timerslack_ns`).
    ///
    /// # Errors
    /// The first setting the system refuses; [`RtError::MlockallOtherProcess`] if `mlockall` is
    /// requested.
    pub fn apply_to_process(&self, pid: u32) -> Result<(), RtError> {
        if self.mlockall {
            return Err(RtError::MlockallOtherProcess);
        }
        if let Some(slack) = self.timer_slack_ns {
            std::fs::write(format!("/proc/{pid}/timerslack_ns"), slack.to_string()).map_err(
                |e| RtError::TimerSlack {
                    errno: e.raw_os_error().unwrap_or(0),
                },
            )?;
        }
        if let Some(cpus) = &self.cpus {
            let mut set = rustix::thread::CpuSet::new();
            for &cpu in cpus
                .iter()
                .filter(|c| **c < rustix::thread::CpuSet::MAX_CPU)
            {
                set.set(cpu);
            }
            let target = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw);
            rustix::thread::sched_setaffinity(target, &set).map_err(|e| RtError::Affinity {
                cpus: cpus.clone(),
                errno: e.raw_os_error(),
                available: std::thread::available_parallelism().map_or(1, |n| n.get()),
            })?;
        }
        if let Some(priority) = self.fifo_priority {
            set_fifo_priority_of(i32::try_from(pid).unwrap_or(-1), priority)?;
        }
        Ok(())
    }
}

fn set_fifo_priority(priority: u8) -> Result<(), RtError> {
    set_fifo_priority_of(0, priority)
}

/// `pid` 0 is the calling thread.
fn set_fifo_priority_of(pid: i32, priority: u8) -> Result<(), RtError> {
    // SAFETY: sched_param is plain integers (musl's has more fields than glibc's); zero is
    // valid for each.
    let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
    param.sched_priority = i32::from(priority);
    // The system call itself: musl's sched_setscheduler() is a stub that fails with ENOSYS
    // (Linux sets the policy per thread, POSIX per process).
    // SAFETY: the kernel reads `param` only during the call. rustix has no wrapper.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setscheduler,
            libc::c_long::from(pid),
            libc::c_long::from(libc::SCHED_FIFO),
            &raw const param,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    Err(RtError::Priority {
        priority,
        errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        rtprio_limit: rustix::process::getrlimit(rustix::process::Resource::Rtprio).current,
    })
}

/// Parses a SCHED_FIFO priority.
///
/// # Errors
/// [`RtError::Invalid`] unless `text` is 1..=99.
pub fn parse_priority(setting: &'static str, text: &str) -> Result<u8, RtError> {
    text.trim()
        .parse::<u8>()
        .ok()
        .filter(|p| (1..=99).contains(p))
        .ok_or(RtError::Invalid {
            setting,
            value: text.to_owned(),
            expected: "a SCHED_FIFO priority from 1 to 99",
        })
}

/// Parses `1`, `0,2` or `0-3` (and mixes such as `0,2-3`).
///
/// # Errors
/// [`RtError::Invalid`] for anything else.
pub fn parse_cpu_list(setting: &'static str, text: &str) -> Result<Vec<usize>, RtError> {
    let invalid = || RtError::Invalid {
        setting,
        value: text.to_owned(),
        expected: "CPU numbers like '1', '0,2' or '0-3'",
    };
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (
                    a.trim().parse().map_err(|_| invalid())?,
                    b.trim().parse().map_err(|_| invalid())?,
                );
                if a > b || b >= 1024 {
                    return Err(invalid());
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().map_err(|_| invalid())?),
        }
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_priority_is_set_or_refused_for_want_of_permission() {
        // On a thread of its own, so the test runner's threads keep their policy.
        std::thread::spawn(|| match set_fifo_priority(1) {
            Ok(()) => {
                // SAFETY: the system call only reads the calling thread's policy.
                let policy = unsafe { libc::syscall(libc::SYS_sched_getscheduler, 0) };
                assert_eq!(policy, libc::c_long::from(libc::SCHED_FIFO));
            }
            // Without CAP_SYS_NICE or RLIMIT_RTPRIO: EPERM, never ENOSYS (musl's libc
            // function, which the system call replaces).
            Err(RtError::Priority { errno, .. }) => assert_eq!(errno, libc::EPERM),
            Err(other) => panic!("{other}"),
        })
        .join()
        .unwrap();
    }

    #[test]
    fn options_from_variables() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(RealtimeOptions::from_vars(vars(&[])).unwrap().is_empty());
        let options = RealtimeOptions::from_vars(vars(&[
            (ENV_PRIORITY, "80"),
            (ENV_CPUS, "1"),
            (ENV_MLOCKALL, "true"),
            (ENV_TIMER_SLACK, "1000"),
        ]))
        .unwrap();
        assert_eq!(
            options,
            RealtimeOptions {
                fifo_priority: Some(80),
                cpus: Some(vec![1]),
                mlockall: true,
                timer_slack_ns: Some(1000)
            }
        );
        let e = RealtimeOptions::from_vars(vars(&[(ENV_MLOCKALL, "maybe")])).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("ROSLITE_MLOCKALL='maybe' is invalid"),
            "{e}"
        );
        let e = RealtimeOptions::from_vars(vars(&[(ENV_PRIORITY, "high")])).unwrap_err();
        assert!(e.to_string().contains("1 to 99"), "{e}");
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("x", "1").unwrap(), [1]);
        assert_eq!(parse_cpu_list("x", "0, 2-3").unwrap(), [0, 2, 3]);
        assert!(parse_cpu_list("x", "3-1").is_err());
        assert!(parse_cpu_list("x", "a")
            .unwrap_err()
            .to_string()
            .contains("'0-3'"));
    }

    #[test]
    fn priorities() {
        assert_eq!(parse_priority("x", "80").unwrap(), 80);
        assert!(parse_priority("x", "0").is_err());
        assert!(parse_priority("x", "100")
            .unwrap_err()
            .to_string()
            .contains("1 to 99"));
    }

    #[test]
    fn timer_slack_applies_to_this_thread() {
        std::thread::spawn(|| {
            RealtimeOptions {
                timer_slack_ns: Some(1000),
                ..Default::default()
            }
            .apply_to_current_thread()
            .unwrap();
            assert_eq!(rustix::thread::current_timer_slack().unwrap(), 1000);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn an_impossible_cpu_is_refused_with_an_explanation() {
        let err = std::thread::spawn(|| {
            RealtimeOptions {
                cpus: Some(vec![1000]),
                ..Default::default()
            }
            .apply_to_current_thread()
        })
        .join()
        .unwrap()
        .unwrap_err();
        assert!(matches!(err, RtError::Affinity { .. }), "{err:?}");
        assert!(
            err.to_string().contains("CPU affinity [1000] refused"),
            "{err}"
        );
    }

    #[test]
    fn fifo_priority_takes_effect_or_explains_why_not() {
        let result = std::thread::spawn(|| {
            let outcome = RealtimeOptions {
                fifo_priority: Some(10),
                ..Default::default()
            }
            .apply_to_current_thread();
            // SAFETY: plain query of the calling thread's policy.
            let policy = unsafe { libc::sched_getscheduler(0) };
            (outcome, policy)
        })
        .join()
        .unwrap();
        match result {
            (Ok(()), policy) => assert_eq!(policy, libc::SCHED_FIFO),
            (Err(e), policy) => {
                assert_ne!(policy, libc::SCHED_FIFO);
                assert!(e.to_string().contains("CAP_SYS_NICE"), "{e}");
            }
        }
    }
}
