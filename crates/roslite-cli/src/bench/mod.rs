//! `roslite bench ...`: figures, not tests. Each prints a table, or one JSON object with
//! `--json`.

mod intra;

#[derive(clap::Subcommand)]
pub enum BenchCommand {
    /// One-way intra-process latency (publish -> callback start) for 64 B, 4 MiB and 64 MiB
    /// messages; shows that delivery cost does not grow with message size.
    Intra(intra::IntraArgs),
}

pub fn run(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Intra(args) => intra::run(&args),
    }
}
