//! `roslite bench ...`: figures, not tests. Each prints a table, or one JSON object with
//! `--json`.

mod intra;
pub mod timer;

#[derive(clap::Subcommand)]
pub enum BenchCommand {
    /// One-way intra-process latency (publish -> callback start) for 64 B, 4 MiB and 64 MiB
    /// messages; shows that delivery cost does not grow with message size.
    Intra(intra::IntraArgs),
    /// Timer wake-up latency (callback start minus scheduled time) of a roslite timer, next to
    /// clock_nanosleep, a futex wait and an rclpy timer measured in the same run (seed 004).
    Timer(timer::TimerArgs),
}

pub fn run(command: BenchCommand) -> anyhow::Result<()> {
    match command {
        BenchCommand::Intra(args) => intra::run(&args),
        BenchCommand::Timer(args) => timer::run(&args),
    }
}
