//! `roslite-wasm-host`: `roslite run` as a program of its own, for small boards and for the
//! benches' memory figures. Built without the default features it holds only wasmtime's
//! runtime (it runs `.cwasm` files); with `--features wasmi` it also interprets `.wasm` files.
//!
//! It reads its command line by hand rather than with clap, which would add a quarter of a
//! megabyte to a program whose resident memory follows its size; the flags and their meaning
//! are `roslite run`'s (`roslite run --help`). With `--name` it is a host nodes can move to
//! and from (`roslite host --help`: `--name`, `--accept-from`, `--module-dir`).

use std::path::PathBuf;
use std::process::ExitCode;

use roslite_wasm::cli::{HostArgs, RunArgs};
use roslite_wasm::Limits;

const USAGE: &str =
    "usage: roslite-wasm-host [--engine wasmtime|wasmi] [--deadline-ms MS] [--fuel N] \
[--max-memory-mib MIB] [--allow-env VAR]... [--allow-dir DIR[:GUEST][:rw]]... [--stop-on-stdin] \
[--name NAME [--accept-from HOST[,HOST...]]... [--module-dir DIR]...] \
[NODE...] [--ros-args ARGS...] [-- NODE_ARGS...]
(the flags of `roslite run`, and with --name those of `roslite host`; see their --help)";

fn parse(mut args: impl Iterator<Item = String>) -> Result<HostArgs, String> {
    let mut host = HostArgs {
        name: None,
        accept_from: Vec::new(),
        module_dir: Vec::new(),
        exit_on_snapshot: false,
        run: RunArgs {
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
        },
    };
    let run = &mut host.run;
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
            "--name" => host.name = Some(args.next().ok_or("--name needs a value")?),
            "--accept-from" => host.accept_from.extend(
                args.next()
                    .ok_or("--accept-from needs a value")?
                    .split(',')
                    .map(str::to_owned),
            ),
            "--module-dir" => host.module_dir.push(PathBuf::from(
                args.next().ok_or("--module-dir needs a value")?,
            )),
            "--exit-on-snapshot" => host.exit_on_snapshot = true,
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
    if run.nodes.is_empty() && host.name.is_none() {
        return Err(format!("no NODE given\n{USAGE}"));
    }
    Ok(host)
}

fn main() -> ExitCode {
    // As roslite's other lean node programs: one malloc arena for all threads (a guest's
    // thread would otherwise get an arena of its own). musl's allocator has no arenas.
    // SAFETY: mallopt only tunes the allocator.
    #[cfg(target_env = "gnu")]
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let host = match parse(std::env::args().skip(1)) {
        Ok(host) => host,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let outcome = if host.name.is_some() {
        roslite_wasm::cli::host(&host)
    } else {
        roslite_wasm::cli::run(&host.run)
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("Error: {message}");
            ExitCode::FAILURE
        }
    }
}
