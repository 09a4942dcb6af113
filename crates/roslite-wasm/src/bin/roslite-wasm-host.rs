//! `roslite-wasm-host`: `roslite run` as a program of its own, for small boards and for the
//! benches' memory figures. Built without the default features it holds only wasmtime's
//! runtime (it runs `.cwasm` files); with `--features wasmi` it also interprets `.wasm` files.
//!
//! It reads its command line by hand rather than with clap, which would add a quarter of a
//! megabyte to a program whose resident memory follows its size; the flags and their meaning
//! are `roslite run`'s (`roslite run --help`).
//!
//! `--migration-stdio` (not in the usage text: a stand-in for tests until `roslite host` and
//! `roslite migrate` exist, docs/migration.md) keeps the host running with the NODEs given,
//! possibly none, and takes migration commands on standard input, one a line, answering each
//! with one line `migration: ok` or `migration: error: WHY` on standard output. File paths may
//! not hold spaces.
//!
//! - `snapshot NAME FILE`: freezes node NAME between callbacks and writes its snapshot to FILE
//!   (it stays frozen here until `end` or `thaw`);
//! - `journal NAME FILE`: writes the journal of node NAME to FILE;
//! - `end NAME`: ends the frozen node NAME (it runs elsewhere now); `thaw NAME` lets it go on;
//! - `restore NODE FILE`: resumes NODE (the `.wasm` or `.cwasm` the snapshot was taken of)
//!   from the snapshot in FILE;
//! - `prepare NODE FILE`: makes NODE's objects from the journal in FILE, before the node is
//!   frozen on its old host; `complete FILE` then resumes it from the snapshot in FILE;
//! - `stop` (or the end of the input): stops every node and ends the program.
//!
//! A test of the cross-architecture moves runs this program for aarch64 under qemu-user and
//! drives it this way (crates/roslite-wasm/tests/cross_arch.rs).

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use roslite_wasm::cli::RunArgs;
use roslite_wasm::host::{MigrateError, Prepared};
use roslite_wasm::{GuestSpec, Host, Limits};

const USAGE: &str =
    "usage: roslite-wasm-host [--engine wasmtime|wasmi] [--deadline-ms MS] [--fuel N] \
[--max-memory-mib MIB] [--allow-env VAR]... [--allow-dir DIR[:GUEST][:rw]]... [--stop-on-stdin] \
NODE... [--ros-args ARGS...] [-- NODE_ARGS...]
(the flags of `roslite run`; see `roslite run --help`)";

/// The command line: `roslite run`'s arguments, and whether migration commands come on stdin.
struct Args {
    run: RunArgs,
    migration_stdio: bool,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut migration_stdio = false;
    let mut run = RunArgs {
        nodes: Vec::new(),
        engine: Default::default(),
        deadline_ms: Limits::DEFAULT_DEADLINE.as_millis() as u64,
        fuel: Limits::DEFAULT_FUEL,
        max_memory_mib: (Limits::DEFAULT_MAX_MEMORY_BYTES >> 20) as u64,
        allow_env: Vec::new(),
        allow_dir: Vec::new(),
        stop_on_stdin: false,
        ros_args: Vec::new(),
        node_args: Vec::new(),
    };
    let number = |flag: &str, value: Option<String>| -> Result<u64, String> {
        value
            .ok_or_else(|| format!("{flag} needs a value"))?
            .parse()
            .map_err(|_| format!("{flag} takes a whole number"))
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--engine" => run.engine = args.next().ok_or("--engine needs a value")?.parse()?,
            "--deadline-ms" => run.deadline_ms = number("--deadline-ms", args.next())?,
            "--fuel" => run.fuel = number("--fuel", args.next())?,
            "--max-memory-mib" => run.max_memory_mib = number("--max-memory-mib", args.next())?,
            "--allow-env" => run
                .allow_env
                .push(args.next().ok_or("--allow-env needs a value")?),
            "--allow-dir" => run
                .allow_dir
                .push(args.next().ok_or("--allow-dir needs a value")?),
            "--stop-on-stdin" => run.stop_on_stdin = true,
            "--migration-stdio" => migration_stdio = true,
            "--ros-args" => {
                for a in args.by_ref() {
                    if a == "--" {
                        run.node_args.extend(args.by_ref());
                        break;
                    }
                    run.ros_args.push(a);
                }
            }
            "--" => run.node_args.extend(args.by_ref()),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            flag if flag.starts_with('-') => return Err(format!("unknown flag {flag}\n{USAGE}")),
            node => run.nodes.push(PathBuf::from(node)),
        }
    }
    if run.nodes.is_empty() && !migration_stdio {
        return Err(format!("no NODE given\n{USAGE}"));
    }
    if migration_stdio && run.stop_on_stdin {
        return Err(
            "--migration-stdio reads `stop` on stdin itself: leave out --stop-on-stdin".into(),
        );
    }
    Ok(Args {
        run,
        migration_stdio,
    })
}

/// Runs `run`'s nodes, taking migration commands on stdin (see the module docs) until `stop`.
fn run_with_migration_stdio(run: &RunArgs) -> Result<(), String> {
    let options = run.options()?;
    let specs: Vec<GuestSpec> = run
        .nodes
        .iter()
        .map(|p| GuestSpec { path: p.clone() })
        .collect();
    let host = Host::start(&specs, &options).map_err(|e| e.to_string())?;
    let mut prepared: Option<Prepared> = None;
    let mut stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("reading stdin: {e}"))?;
        let words: Vec<&str> = line.split_whitespace().collect();
        if words == ["stop"] {
            break;
        }
        let answer = match migration_command(&host, &mut prepared, &words) {
            Ok(()) => "migration: ok".to_owned(),
            Err(why) => format!("migration: error: {why}"),
        };
        writeln!(stdout, "{answer}")
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("writing stdout: {e}"))?;
    }
    drop(prepared);
    host.shutdown();
    host.wait();
    Ok(())
}

fn migration_command(
    host: &Host,
    prepared: &mut Option<Prepared>,
    words: &[&str],
) -> Result<(), String> {
    let read = |file: &str| std::fs::read(file).map_err(|e| format!("{file}: {e}"));
    let write = |file: &str, bytes: Vec<u8>| {
        std::fs::write(file, bytes).map_err(|e| format!("{file}: {e}"))
    };
    let spec = |node: &str| GuestSpec {
        path: Path::new(node).to_owned(),
    };
    let failed = |e: MigrateError| e.to_string();
    match *words {
        ["snapshot", name, file] => write(file, host.freeze_and_snapshot(name).map_err(failed)?),
        ["journal", name, file] => write(file, host.journal_of(name).map_err(failed)?),
        ["end", name] => host.end_migrated(name).map_err(failed),
        ["thaw", name] => host.thaw(name).map_err(failed),
        ["restore", node, file] => host
            .start_restored(&spec(node), &read(file)?)
            .map_err(failed),
        ["prepare", node, file] => {
            *prepared = Some(
                host.prepare_restore(&spec(node), &read(file)?)
                    .map_err(failed)?,
            );
            Ok(())
        }
        ["complete", file] => {
            let snapshot = read(file)?;
            let ready = prepared
                .take()
                .ok_or("`complete` without a `prepare` before it")?;
            host.complete_restore(ready, &snapshot).map_err(failed)
        }
        _ => Err(format!(
            "unknown command {:?}: snapshot NAME FILE, journal NAME FILE, end NAME, thaw NAME, \
             restore NODE FILE, prepare NODE FILE, complete FILE or stop",
            words.join(" ")
        )),
    }
}

fn main() -> ExitCode {
    // As roslite's other lean node programs: one malloc arena for all threads (a guest's
    // thread would otherwise get an arena of its own).
    // SAFETY: mallopt only tunes the allocator.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let ran = if args.migration_stdio {
        run_with_migration_stdio(&args.run)
    } else {
        roslite_wasm::cli::run(&args.run)
    };
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("Error: {message}");
            ExitCode::FAILURE
        }
    }
}
