//! Fast DDS as a peer: `interop/cpp/fastdds_pingpong.cpp`, compiled on first use against
//! Debian's `libfastrtps-dev` (embedded in this binary, built under the temp directory), UDP
//! on 127.0.0.1 only, no shared memory, no multicast; the same topics, type, QoS and pacing as
//! roslite's ping-pong.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context as _};

use super::pingpong::Point;
use super::process::Helper;
use super::stats::Summary;

const SOURCE: &str = include_str!("../../../../interop/cpp/fastdds_pingpong.cpp");
const PACKAGE: &str = "libfastrtps-dev";

/// The installed version of a Debian package, if dpkg says it is installed.
fn debian_version(package: &str) -> Option<String> {
    let out = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}\t${Version}", package])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let (status, version) = text.split_once('\t')?;
    (out.status.success() && status == "install ok installed").then(|| version.to_owned())
}

/// FNV-1a, to name the build after its source.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Builds the Fast DDS peer (once per source version): its path and Fast DDS's upstream
/// version; `Err` says why it cannot be, as the sweep's table prints it.
pub fn peer() -> Result<(PathBuf, String), String> {
    let version = debian_version(PACKAGE)
        .ok_or_else(|| format!("skipped: Debian {PACKAGE} is not installed"))?;
    let upstream = version
        .split(['+', '-'])
        .next()
        .unwrap_or(&version)
        .to_owned();
    let dir = std::env::temp_dir().join(format!(
        "roslite-bench-rtt-{}",
        rustix::process::getuid().as_raw()
    ));
    let binary = dir.join(format!("fastdds_pingpong-{:016x}", fnv1a(SOURCE)));
    if binary.is_file() {
        return Ok((binary, upstream));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("skipped: {}: {e}", dir.display()))?;
    let source = dir.join("fastdds_pingpong.cpp");
    std::fs::write(&source, SOURCE).map_err(|e| format!("skipped: {}: {e}", source.display()))?;
    let partial = dir.join(format!("fastdds_pingpong.{}.partial", std::process::id()));
    let out = Command::new("c++")
        .args(["-std=c++17", "-O2", "-o"])
        .arg(&partial)
        .arg(&source)
        .args(["-lfastrtps", "-lfastcdr"])
        .output()
        .map_err(|e| format!("skipped: no C++ compiler (`c++`: {e})"))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr.lines().find(|l| l.contains("error")).unwrap_or("");
        return Err(format!("skipped: the peer does not build: {first}"));
    }
    std::fs::rename(&partial, &binary).map_err(|e| format!("skipped: {e}"))?;
    Ok((binary, upstream))
}

/// How the Fast DDS ping sends: `count` pings per size after `warmup`, at `hz` per second or
/// back to back.
#[derive(Clone, Copy, Debug)]
pub struct Pacing {
    pub hz: Option<u32>,
    pub count: usize,
    pub warmup: usize,
}

/// Runs the peer's pong and ping in `domain` over every size; one point per size.
/// `on_size` runs as the ping announces a size, right before its first warm-up ping, given
/// the pong's pid; what it returns is the point's `echo_pages` (the sweep counts them at a
/// rate).
///
/// # Errors
/// When a process cannot be started, the pair does not match, or the ping stops early.
pub fn ping_pong(
    binary: &Path,
    domain: u32,
    sizes: &[usize],
    pacing: Pacing,
    mut on_size: impl FnMut(u32) -> Option<u64>,
) -> anyhow::Result<Vec<Point>> {
    let max = sizes.iter().copied().max().unwrap_or(64);
    let env_clear = |command: &mut Command| {
        command
            .env_remove("FASTDDS_DEFAULT_PROFILES_FILE")
            .env_remove("FASTRTPS_DEFAULT_PROFILES_FILE")
            .env_remove("ROS_DISCOVERY_SERVER");
    };
    let mut pong = Command::new(binary);
    pong.args(["pong", &domain.to_string(), &max.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    env_clear(&mut pong);
    let pong = Helper::spawn("the Fast DDS pong", &mut pong)?;
    let hz = pacing.hz.unwrap_or(0).to_string();
    let list: Vec<String> = sizes.iter().map(ToString::to_string).collect();
    let mut ping = Command::new(binary);
    ping.args([
        "ping",
        &domain.to_string(),
        &hz,
        &pacing.count.to_string(),
        &pacing.warmup.to_string(),
        &list.join(","),
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped());
    env_clear(&mut ping);
    let mut ping = Helper::spawn("the Fast DDS ping", &mut ping)?;
    let stdout = ping
        .child
        .stdout
        .take()
        .context("internal bug: no stdout")?;
    let mut points = Vec::new();
    let mut current: Option<(usize, Vec<Duration>, usize)> = None;
    let mut echo_pages = None;
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line?;
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (Some("SIZE"), Some(n)) => {
                current = Some((n.parse()?, Vec::new(), 0));
                echo_pages = on_size(pong.pid());
            }
            (Some("RTT"), Some(us)) => {
                if let Some((_, series, _)) = &mut current {
                    series.push(Duration::from_secs_f64(us.parse::<f64>()? / 1e6));
                }
            }
            (Some("LOST"), Some(n)) => {
                if let Some((_, _, lost)) = &mut current {
                    *lost = n.parse()?;
                }
            }
            (Some("RSS"), Some(kib)) => {
                if let Some((size, series, lost)) = current.take() {
                    points.push(Point {
                        size,
                        summary: Summary::of(&series),
                        lost,
                        sender_rss_kib: kib.parse().ok(),
                        echo_pages: echo_pages.take(),
                    });
                }
            }
            (Some("NOMATCH"), _) => bail!("the Fast DDS pair did not match within 30 s"),
            (Some("DONE"), _) => break,
            _ => {}
        }
    }
    anyhow::ensure!(
        points.len() == sizes.len(),
        "the Fast DDS ping stopped after {} of {} sizes",
        points.len(),
        sizes.len()
    );
    Ok(points)
}
