//! A process's memory as `/proc` reports it: [`ProcMemory`] from `/proc/<pid>/status`, the
//! resident set by kind of mapping from `/proc/<pid>/smaps` ([`smaps_breakdown`]), PSS from
//! `smaps_rollup`, the pages a process touches per message ([`TouchedPages`]), and what the
//! mapping under an address is ([`mapping_of`]).

use anyhow::Context as _;

/// A process's memory as `/proc/<pid>/status` reports it, in KiB (the kernel's "kB").
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcMemory {
    pub vm_rss_kib: u64,
    pub vm_hwm_kib: u64,
    pub rss_anon_kib: u64,
    pub rss_file_kib: u64,
    pub rss_shmem_kib: u64,
    pub threads: u64,
}

impl ProcMemory {
    /// Reads `/proc/<pid>/status`, or `/proc/self/status` for `None`.
    pub fn of(pid: Option<u32>) -> anyhow::Result<Self> {
        let path = match pid {
            Some(pid) => format!("/proc/{pid}/status"),
            None => "/proc/self/status".to_owned(),
        };
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        let mut memory = Self::default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let number = value
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0);
            match key {
                "VmRSS" => memory.vm_rss_kib = number,
                "VmHWM" => memory.vm_hwm_kib = number,
                "RssAnon" => memory.rss_anon_kib = number,
                "RssFile" => memory.rss_file_kib = number,
                "RssShmem" => memory.rss_shmem_kib = number,
                "Threads" => memory.threads = number,
                _ => {}
            }
        }
        anyhow::ensure!(memory.vm_rss_kib > 0, "no VmRSS in {path}");
        Ok(memory)
    }
}

/// KiB to MB (10^6 bytes), the unit of the goals.
pub fn mb(kib: u64) -> f64 {
    kib as f64 * 1024.0 / 1e6
}

/// Resident memory of one kind of mapping.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub name: String,
    pub rss_kib: u64,
}

/// One mapping of `/proc/<pid>/smaps`.
#[derive(Clone, Debug, PartialEq)]
pub struct SmapsMapping {
    pub start: u64,
    pub end: u64,
    pub perms: String,
    pub path: String,
    pub rss_kib: u64,
}

pub fn parse_smaps(text: &str) -> Vec<SmapsMapping> {
    let mut mappings: Vec<SmapsMapping> = Vec::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(first) = fields.next() else {
            continue;
        };
        if let Some((start, end)) = first.split_once('-').and_then(|(s, e)| {
            Some((
                u64::from_str_radix(s, 16).ok()?,
                u64::from_str_radix(e, 16).ok()?,
            ))
        }) {
            let perms = fields.next().unwrap_or("").to_owned();
            // offset, dev, inode, then the path (which may contain spaces).
            let path = fields.skip(3).collect::<Vec<_>>().join(" ");
            mappings.push(SmapsMapping {
                start,
                end,
                perms,
                path,
                rss_kib: 0,
            });
        } else if first == "Rss:" {
            if let (Some(mapping), Some(value)) = (mappings.last_mut(), fields.next()) {
                mapping.rss_kib = value.parse().unwrap_or(0);
            }
        }
    }
    mappings
}

/// Sums resident memory by what each mapping is. Anonymous read-write mappings are told apart
/// by their neighbours, as glibc lays them out: a thread stack sits right above its
/// inaccessible guard page; a malloc arena's heap is the accessible start of a 64 MiB
/// reservation whose inaccessible rest follows it.
pub fn classify(mappings: &[SmapsMapping], exe: &str) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    let mut add = |name: String, kib: u64| {
        if kib == 0 {
            return;
        }
        match parts.iter_mut().find(|p| p.name == name) {
            Some(part) => part.rss_kib += kib,
            None => parts.push(Part { name, rss_kib: kib }),
        }
    };
    let inaccessible = |m: Option<&SmapsMapping>| m.is_some_and(|m| m.perms.starts_with("---"));
    for (i, m) in mappings.iter().enumerate() {
        let below = i.checked_sub(1).and_then(|j| mappings.get(j));
        let above = mappings.get(i + 1);
        let name = match m.path.as_str() {
            "[heap]" => "heap (brk: main arena)".to_owned(),
            "[stack]" => "main thread stack".to_owned(),
            "[vdso]" | "[vvar]" | "[vsyscall]" | "[vvar_vclock]" => "vdso/vvar".to_owned(),
            "" if inaccessible(below) && below.is_some_and(|b| b.end == m.start) => {
                "thread stacks".to_owned()
            }
            "" if inaccessible(above) && above.is_some_and(|a| a.start == m.end) => {
                "malloc arenas (threads)".to_owned()
            }
            "" => "other anonymous mmap".to_owned(),
            path if path == exe => format!("binary {}", file_name(path)),
            path => format!("file {}", file_name(path)),
        };
        add(name, m.rss_kib);
    }
    parts.sort_by(|a, b| b.rss_kib.cmp(&a.rss_kib).then(a.name.cmp(&b.name)));
    parts
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `Pss` from `/proc/<pid>/smaps_rollup`.
pub fn read_pss_kib(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("Pss:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
}

pub fn smaps_breakdown(pid: u32) -> anyhow::Result<Vec<Part>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps"))?;
    let exe = std::fs::read_link(format!("/proc/{pid}/exe"))?;
    Ok(classify(&parse_smaps(&text), &exe.to_string_lossy()))
}

/// Counts the pages of another process's memory touched between two moments, from the
/// kernel's accessed bits: writing `1` to `/proc/<pid>/clear_refs` clears them, and the
/// `Referenced:` lines of `/proc/<pid>/smaps` then sum, per mapping, what was touched since.
///
/// Why count pages: at a rate, every ping meets cold caches and TLBs, and on this kind of VM
/// each distinct page a path touches costs a few hundred nanoseconds then (a TLB walk and
/// cache misses), against about ten back to back. The count is code, data, stacks and shared
/// memory alike; it is the echo's footprint per message, and it varies far less between runs
/// than the latency it explains.
///
/// What it cannot see: the CPU sets a page's accessed bit when it walks the page tables, and
/// on this kernel clearing the bits does not flush the TLB, so a page whose translation is
/// still cached is touched without being counted (a process touching the same 64 pages right
/// after a clear was credited with 3 to 58). After a sleep of a period the translations are
/// gone (the same process, 100 ms later: all 64 plus its own). At a rate the echo sleeps a
/// whole period between pings, so the count is the pages a ping touches cold; back to back it
/// would undercount, which is why only rate mode counts.
///
/// Each window should hold exactly one ping: open one right before a ping and the next right
/// before the following ping. Pages the process touches on its own in between (a discovery
/// announcement) land in some windows; [`Self::median`] sets those aside. When `/proc` refuses
/// (the process is gone, or not ours), counting stops and the figure is missing, not wrong.
pub struct TouchedPages {
    pid: u32,
    open: bool,
    failed: bool,
    windows: Vec<u64>,
}

impl TouchedPages {
    pub fn of(pid: u32) -> Self {
        Self {
            pid,
            open: false,
            failed: false,
            windows: Vec::new(),
        }
    }

    /// Right before ping number `index` (from 0) of a series whose first `warmup` pings are
    /// not measured: one window per warm-up ping, the last closed as the first measured ping
    /// goes out, none after.
    pub fn before_ping(&mut self, index: usize, warmup: usize) {
        match index.cmp(&warmup) {
            std::cmp::Ordering::Less => self.next_window(),
            std::cmp::Ordering::Equal => self.close_window(),
            std::cmp::Ordering::Greater => {}
        }
    }

    /// Closes the window the previous call opened, if any, and opens the next.
    pub fn next_window(&mut self) {
        self.close_window();
        if self.failed {
            return;
        }
        let clear = std::fs::write(format!("/proc/{}/clear_refs", self.pid), "1");
        self.open = clear.is_ok();
        self.failed = clear.is_err();
    }

    /// Closes the open window, if any, and keeps its count.
    pub fn close_window(&mut self) {
        if !std::mem::take(&mut self.open) {
            return;
        }
        match std::fs::read_to_string(format!("/proc/{}/smaps", self.pid)) {
            Ok(smaps) => self.windows.push(referenced_pages(&smaps)),
            Err(_) => self.failed = true,
        }
    }

    /// The count of each closed window, in order.
    pub fn counts(&self) -> &[u64] {
        &self.windows
    }

    /// The median count over the closed windows (the upper middle of an even count).
    pub fn median(&self) -> Option<u64> {
        let mut counts = self.windows.clone();
        counts.sort_unstable();
        counts.get(counts.len() / 2).copied()
    }
}

/// The pages touched since the accessed bits were last cleared, from a `/proc/<pid>/smaps`
/// text: each mapping's `Referenced:` kB over its `KernelPageSize:` (which comes first in the
/// mapping's block; 4 kB when the block has none).
pub fn referenced_pages(smaps: &str) -> u64 {
    let mut page_kib = 4;
    let mut pages = 0;
    for line in smaps.lines() {
        let kib = |rest: &str| rest.split_whitespace().next()?.parse::<u64>().ok();
        let starts_mapping = line.split_whitespace().next().is_some_and(|range| {
            range.contains('-') && range.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
        });
        if starts_mapping {
            page_kib = 4;
        } else if let Some(rest) = line.strip_prefix("KernelPageSize:") {
            page_kib = kib(rest).filter(|&k| k > 0).unwrap_or(4);
        } else if let Some(rest) = line.strip_prefix("Referenced:") {
            pages += kib(rest).unwrap_or(0) / page_kib;
        }
    }
    pages
}

/// What the mapping holding `ptr` is, from `/proc/self/maps`: `memfd` (a shared-memory
/// segment), `heap`, `anon` (a private anonymous mapping: large heap allocations), or the
/// mapping's name.
pub fn mapping_of(ptr: *const u8) -> String {
    let addr = ptr as usize;
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return "unknown".into();
    };
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let Some((start, end)) = fields.next().and_then(|r| r.split_once('-')) else {
            continue;
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        if !(start..end).contains(&addr) {
            continue;
        }
        let name = fields.nth(4).unwrap_or("");
        return if name.starts_with("/memfd:") {
            "memfd".into()
        } else if name == "[heap]" {
            "heap".into()
        } else if name.is_empty() {
            "anon".into()
        } else {
            name.replace(' ', "_")
        };
    }
    "unmapped".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smaps_mappings_are_classified_by_neighbours() {
        let smaps = "\
55d0a0000000-55d0a0100000 r-xp 00000000 08:01 123 /usr/bin/roslite
Rss:                 900 kB
55d0a1000000-55d0a1021000 rw-p 00000000 00:00 0 [heap]
Rss:                 132 kB
7f0000000000-7f0000021000 rw-p 00000000 00:00 0
Rss:                  40 kB
7f0000021000-7f0004000000 ---p 00000000 00:00 0
Rss:                   0 kB
7f1000000000-7f1000001000 ---p 00000000 00:00 0
Rss:                   0 kB
7f1000001000-7f1000201000 rw-p 00000000 00:00 0
Rss:                  16 kB
7f2000000000-7f2000010000 rw-p 00000000 00:00 0
Rss:                   8 kB
7f3000000000-7f3000100000 r-xp 00000000 08:01 456 /usr/lib/x86_64-linux-gnu/libc.so.6
Rss:                 700 kB
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]
Rss:                  12 kB
";
        let mappings = parse_smaps(smaps);
        assert_eq!(mappings.len(), 9);
        let parts = classify(&mappings, "/usr/bin/roslite");
        let kib = |name: &str| parts.iter().find(|p| p.name == name).map(|p| p.rss_kib);
        assert_eq!(kib("binary roslite"), Some(900));
        assert_eq!(kib("file libc.so.6"), Some(700));
        assert_eq!(kib("heap (brk: main arena)"), Some(132));
        assert_eq!(kib("malloc arenas (threads)"), Some(40));
        assert_eq!(kib("thread stacks"), Some(16));
        assert_eq!(kib("other anonymous mmap"), Some(8));
        assert_eq!(kib("main thread stack"), Some(12));
        assert_eq!(parts[0].name, "binary roslite");
    }

    /// Each mapping's `Referenced:` counts in its own page size; other lines (including `Rss:`
    /// and the `VmFlags:` line) are not counted.
    #[test]
    fn referenced_pages_sums_each_mapping_in_its_page_size() {
        let smaps = "\
55d0c0000000-55d0c0400000 r-xp 00000000 fe:01 123 /usr/bin/roslite
Size:               4096 kB
KernelPageSize:        4 kB
Rss:                1200 kB
Referenced:          188 kB
VmFlags: rd ex mr mw me
7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Size:               4096 kB
KernelPageSize:     2048 kB
Referenced:         4096 kB
7f0000400000-7f0000401000 rw-s 00000000 00:01 9 /memfd:roslite-shm-channel (deleted)
Size:                  4 kB
Referenced:            4 kB
";
        // 188/4 + 4096/2048 + 4/4 (a block without KernelPageSize: 4 kB, not the last one's).
        assert_eq!(referenced_pages(smaps), 47 + 2 + 1);
        assert_eq!(referenced_pages(""), 0);
    }

    /// Windows counted on this very process: each holds what was touched in it (the test's
    /// own pages plus whatever reading `/proc` and the harness touch), and the median sets
    /// aside the one window that touched far more. Each window writes pages never touched
    /// before: their first write faults them in young, whatever the TLB still holds (a page
    /// whose translation is cached is touched without being counted, see [`TouchedPages`]).
    ///
    /// The other tests of this binary run on threads of the same process and touch pages of
    /// their own in any window (in CI one window gained 80), so the windows are counted in a
    /// second run of this binary that runs this test alone.
    #[test]
    fn touched_pages_counts_what_each_window_touched() {
        const ALONE: &str = "ROSLITE_TEST_TOUCHED_PAGES_ALONE";
        const NAME: &str = "toolkit::memory::tests::touched_pages_counts_what_each_window_touched";
        if std::env::var_os(ALONE).is_none() {
            let run = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--test-threads=1", "--nocapture"])
                .env(ALONE, "1")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&run.stdout);
            assert!(
                run.status.success() && stdout.contains("1 passed"),
                "the test alone: {}\n{stdout}{}",
                run.status,
                String::from_utf8_lossy(&run.stderr)
            );
            return;
        }
        const PAGES: usize = 64;
        // The middle window touches 16 x PAGES more than the others. Counting its own process,
        // the counter can also see the pages its own smaps reads allocate (the smaps text grows
        // with the mappings the suite's other tests make meanwhile): a clean-clone run saw
        // [79, 207, 123] when the middle window touched 128 more, and twelve runs of the
        // crate's tests up to 91 pages of noise in one window. The signal must dwarf that.
        const MORE: usize = 16 * PAGES;
        // One page more than the windows use: the first page of the allocation holds the
        // allocator's header, written (and its translation cached) before any window, so a
        // window's write to it may go uncounted (a clean-clone run counted [63, 1100, 65]).
        let mut memory = vec![0u8; (1 + 3 * PAGES + MORE) * 4096];
        // One window first, not counted: the first use of each call on the way (the dynamic
        // linker binding a libc function, the allocator growing for the smaps text) touches
        // pages once (a clean-clone run credited the first window with 38 pages too many).
        let mut warm_up = TouchedPages::of(std::process::id());
        warm_up.next_window();
        warm_up.close_window();
        let mut counter = TouchedPages::of(std::process::id());
        assert_eq!(counter.median(), None);
        let mut fresh = 1;
        for window in 0..3 {
            let pages = if window == 1 { PAGES + MORE } else { PAGES };
            counter.next_window();
            for page in fresh..fresh + pages {
                memory[page * 4096] = 1;
            }
            fresh += pages;
            std::hint::black_box(&mut memory);
        }
        counter.close_window();
        let &[first, big, last] = counter.counts() else {
            panic!(
                "/proc/self/clear_refs or smaps unusable: {:?}",
                counter.counts()
            );
        };
        assert!(
            first >= PAGES as u64 && last >= PAGES as u64,
            "{:?}",
            counter.counts()
        );
        // The extra pages show, less what the other windows' own noise may add (up to half).
        assert!(
            big >= first.max(last) + (MORE / 2) as u64,
            "the window that touched {MORE} more pages: {:?}",
            counter.counts()
        );
        assert_eq!(counter.median(), Some(first.max(last)));
        // Closing again counts nothing more.
        counter.close_window();
        assert_eq!(counter.counts().len(), 3);
    }

    #[test]
    fn heap_memory_is_not_memfd() {
        let v = vec![0u8; 4096];
        let mapping = mapping_of(v.as_ptr());
        assert!(mapping == "heap" || mapping == "anon", "{mapping}");
    }
}
