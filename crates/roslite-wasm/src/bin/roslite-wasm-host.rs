//! `roslite-wasm-host`: `roslite run` as a program of its own, for small boards and for the
//! benches' memory figures. Built without the `compiler` feature it holds only wasmtime's
//! runtime (it runs `.cwasm` files on wasmtime, and `.wasm` files on wasmi).

use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "roslite-wasm-host",
    version,
    about = "Run ROS 2 nodes compiled to WebAssembly (roslite run)"
)]
struct Cli {
    #[command(flatten)]
    run: roslite_wasm::cli::RunArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match roslite_wasm::cli::run(&cli.run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("Error: {message}");
            ExitCode::FAILURE
        }
    }
}
