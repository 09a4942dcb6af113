//! `roslite-wasm-host`: `roslite run` as a program of its own, for small boards and for the
//! benches' memory figures. Built without the default features it holds only wasmtime's
//! runtime (it runs `.cwasm` files); with `--features wasmi` it also interprets `.wasm` files.
//!
//! It reads its command line by hand rather than with clap, which would add a quarter of a
//! megabyte to a program whose resident memory follows its size; the flags and their meaning
//! are `roslite run`'s (`roslite run --help`).

use std::path::PathBuf;
use std::process::ExitCode;

use roslite_wasm::cli::RunArgs;
use roslite_wasm::Limits;

const USAGE: &str =
    "usage: roslite-wasm-host [--engine wasmtime|wasmi] [--deadline-ms MS] [--fuel N] \
[--max-memory-mib MIB] [--allow-env VAR]... [--allow-dir DIR[:GUEST][:rw]]... [--stop-on-stdin] \
NODE... [--ros-args ARGS...] [-- NODE_ARGS...]
(the flags of `roslite run`; see `roslite run --help`)";

fn parse(mut args: impl Iterator<Item = String>) -> Result<RunArgs, String> {
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
    if run.nodes.is_empty() {
        return Err(format!("no NODE given\n{USAGE}"));
    }
    Ok(run)
}

fn main() -> ExitCode {
    // As roslite's other lean node programs: one malloc arena for all threads (a guest's
    // thread would otherwise get an arena of its own).
    // SAFETY: mallopt only tunes the allocator.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let run = match parse(std::env::args().skip(1)) {
        Ok(run) => run,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match roslite_wasm::cli::run(&run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("Error: {message}");
            ExitCode::FAILURE
        }
    }
}
