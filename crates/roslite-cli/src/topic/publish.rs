//! `roslite topic pub`: ros2topic's `pub` verb over a serialized publisher and the dynamic
//! codec.

use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use roslite::Executor;
use roslite_cdr::Endianness;
use roslite_msg_gen::dynamic;

use super::{pyrepr, QosArgs};

/// How long `--once`/`--times` wait for a subscription unless `--max-wait-time-secs` says
/// otherwise. ros2 waits forever; a script that publishes into an empty graph should learn
/// about it instead.
const DEFAULT_MAX_WAIT: f64 = 10.0;
/// What `--stdin` reads at most unless `--max-stdin-bytes` says otherwise: message values as
/// YAML are rarely more than a few megabytes (a 640x480 RGB image written out is about 4 MiB).
const MAX_STDIN_BYTES: usize = 16 << 20;
/// How often the subscription count is checked while waiting.
const WAIT_POLL: Duration = Duration::from_millis(100);

#[derive(clap::Args)]
pub struct PubArgs {
    /// Name of the ROS topic to publish to (e.g. '/chatter')
    topic_name: String,
    /// Type of the ROS message (e.g. 'std_msgs/msg/String')
    message_type: String,
    /// Values to fill the message with in YAML format (e.g. 'data: Hello World'); by default
    /// the message is published with default values
    #[arg(default_value = "{}", conflicts_with = "stdin")]
    values: String,
    /// Read values from standard input
    #[arg(long)]
    stdin: bool,
    /// The most bytes --stdin reads (default 16 MiB); more is an error, so that an endless
    /// or wrong input stops early instead of filling memory
    #[arg(long, value_name = "BYTES", default_value_t = MAX_STDIN_BYTES, requires = "stdin")]
    max_stdin_bytes: usize,
    /// Publishing rate in Hz
    #[arg(short = 'r', long, value_name = "N", default_value_t = 1.0,
          value_parser = super::positive_float)]
    rate: f64,
    /// Only print every N-th published message (0: none)
    #[arg(short = 'p', long = "print", value_name = "N", default_value_t = 1)]
    print_nth: u64,
    /// Publish one message and exit
    #[arg(short = '1', long, conflicts_with = "times")]
    once: bool,
    /// Publish this number of times and then exit (0: until interrupted)
    #[arg(short = 't', long, default_value_t = 0)]
    times: u64,
    /// Wait until finding this number of matching subscriptions; defaults to 1 with --once or
    /// --times, otherwise 0
    #[arg(short = 'w', long, value_name = "N")]
    wait_matching_subscriptions: Option<usize>,
    /// The longest wait in seconds for those subscriptions (default: 10)
    #[arg(long, value_name = "S", value_parser = super::positive_float)]
    max_wait_time_secs: Option<f64>,
    /// Keep the publishing node alive for N seconds after the last message
    #[arg(long, value_name = "N", default_value_t = 0.1, value_parser = non_negative_float)]
    keep_alive: f64,
    /// Name of the created publishing node; by default, a hidden node name
    #[arg(short = 'n', long)]
    node_name: Option<String>,
    #[command(flatten)]
    qos: QosArgs,
}

/// The message values piped to `--stdin`, at most `limit` bytes of them.
fn read_stdin(input: impl std::io::Read, limit: usize) -> anyhow::Result<String> {
    roslite_yaml::read_text(input, limit).map_err(|e| match e {
        roslite_yaml::InputError::TooLarge { limit } => anyhow::anyhow!(
            "the message values on standard input are larger than {}, the most --stdin reads \
             by default; pass --max-stdin-bytes <BYTES> to read more",
            roslite_yaml::bytes(limit)
        ),
        other => anyhow::anyhow!("cannot read the message values from standard input: {other}"),
    })
}

fn non_negative_float(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("'{text}' is not a number of seconds of at least 0")),
    }
}

pub fn run(args: &PubArgs) -> anyhow::Result<()> {
    let topic = super::resolve_topic(&args.topic_name)?;
    let set = crate::interface::load_interfaces()?;
    let ty = super::parse_message_type(&args.message_type)?;
    let type_info = super::type_info(&set, &ty)?;
    let qos = args.qos.profile("default")?;
    let values = if args.stdin {
        read_stdin(std::io::stdin().lock(), args.max_stdin_bytes)?
    } else {
        args.values.clone()
    };
    // `from_yaml` errors name the field and what is wrong with it; they are shown as they are.
    let value = dynamic::from_yaml(&set, &ty, &values).map_err(|e| anyhow::anyhow!("{e}"))?;
    let payload = dynamic::encode(&set, &ty, &value, Endianness::Little)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let shown = pyrepr::message_repr(&set, &ty, &value, pyrepr::Origin::Typed);

    let times = if args.once { 1 } else { args.times };
    let wait_for = args
        .wait_matching_subscriptions
        .unwrap_or(usize::from(times != 0));
    if wait_for == 0 && args.max_wait_time_secs.is_some() {
        bail!(
            "--max-wait-time-secs option is only effective with --wait-matching-subscriptions, \
             --once or --times"
        );
    }

    let ctx = super::networked_context()?;
    let net = super::network(&ctx);
    let node = super::tool_node(&ctx, args.node_name.as_deref())?;
    let publisher = node
        .create_serialized_publisher(&topic, type_info, qos)
        .with_context(|| format!("cannot publish on '{topic}'"))?;
    let matched =
        || publisher.local_subscription_count() + net.matched_remote_subscriptions(&topic);
    // The node is spun between messages, as ros2's is: its parameter services answer
    // (`roslite param list /talker`) and its events run.
    let executor = Executor::new(&ctx);
    executor.add_node(&node);

    let max_wait = Duration::from_secs_f64(args.max_wait_time_secs.unwrap_or(DEFAULT_MAX_WAIT));
    let wait_start = Instant::now();
    let mut polls = 0u32;
    while matched() < wait_for {
        if polls.is_multiple_of(10) {
            println!("Waiting for at least {wait_for} matching subscription(s)...");
        }
        if wait_start.elapsed() >= max_wait {
            bail!(
                "Timed out waiting for subscribers: expected {wait_for} matching \
                 subscription(s) on '{topic}' within {} s but found {}; start the \
                 subscriber, raise --max-wait-time-secs, or pass -w 0 to publish without \
                 waiting",
                max_wait.as_secs_f64(),
                matched()
            );
        }
        polls += 1;
        executor.spin_for(WAIT_POLL);
    }

    println!("publisher: beginning loop");
    let period = Duration::from_secs_f64(1.0 / args.rate);
    let start = Instant::now();
    let mut count: u64 = 0;
    let mut timeouts: u64 = 0;
    loop {
        count += 1;
        if args.print_nth != 0 && count.is_multiple_of(args.print_nth) {
            println!("publishing #{count}: {shown}\n");
        }
        match publisher.publish(&payload) {
            // A reliable keep-all subscriber that stopped taking messages does not get this
            // one (after max_blocking_time); the others did. Go on, as a stalled subscriber
            // must not stop the publisher.
            Err(roslite::pubsub::PublishError::Timeout) => {
                timeouts += 1;
                if timeouts.is_power_of_two() {
                    eprintln!(
                        "publisher: message #{count} timed out for a keep-all subscriber that \
                         is not taking messages ({timeouts} so far); it does not get them"
                    );
                }
            }
            other => other.with_context(|| format!("cannot publish on '{topic}'"))?,
        }
        if times != 0 && count >= times {
            break;
        }
        // Drift-free: message n goes out at start + n * period.
        let next = start + period.mul_f64(count as f64);
        executor.spin_for(next.saturating_duration_since(Instant::now()));
    }
    // Give the last messages time to reach the wire (and be repaired) before exiting.
    executor.spin_for(Duration::from_secs_f64(args.keep_alive));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_is_read_up_to_its_limit() {
        assert_eq!(read_stdin(&b"data: 1\n"[..], 8).unwrap(), "data: 1\n");
        let e = read_stdin(std::io::repeat(b' '), 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(e.contains("larger than 1 MiB (1048576 bytes)"), "{e}");
        assert!(e.contains("--max-stdin-bytes"), "{e}");
    }
}
