//! `cargo run --release -p roslite --example loaned_pointcloud -- [--count N] [--mb SIZE]`:
//! publishes large sensor_msgs/PointCloud2 frames (55 MB by default) through loans: the
//! publisher loans a shared-memory chunk with the cloud's header already serialized into it,
//! writes the points straight into the chunk, and `publish` only hands the chunk over. A
//! subscriber in a second context of this process (loopback discovery, a domain of its own)
//! reads the points in place and prints the one-way latency from the `publish` call.

use std::sync::mpsc;
use std::time::Duration;

use roslite::msgs::cdr::Seq;
use roslite::msgs::sensor_msgs::msg::{PointCloud2, PointField};
use roslite::{Context, ContextOptions, Executor, Instant};

const POINT_STEP: usize = 16;

fn context(domain_id: u32) -> Context {
    Context::new(ContextOptions::localhost(domain_id)).expect("start an RTPS network on loopback")
}

/// An x/y/z/intensity cloud of `points` points whose data is reserved, to be written in place.
fn reserved_cloud(points: usize) -> PointCloud2 {
    let field = |name: &str, offset| PointField {
        name: name.into(),
        offset,
        datatype: 7, // FLOAT32
        count: 1,
    };
    PointCloud2 {
        height: 1,
        width: points as u32,
        fields: vec![
            field("x", 0),
            field("y", 4),
            field("z", 8),
            field("intensity", 12),
        ],
        // The loan is encoded in this machine's byte order, so are the points written into it.
        is_bigendian: cfg!(target_endian = "big"),
        point_step: POINT_STEP as u32,
        row_step: (points * POINT_STEP) as u32,
        data: Seq::reserved(points * POINT_STEP),
        is_dense: true,
        ..Default::default()
    }
}

/// Prints an error as its message (`Error: p.yaml:3: ...`); returning it from `main` would print
/// its `Debug` form.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut count = 10usize;
    let mut megabytes = 55usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--count", Some(v)) => count = v,
            ("--mb", Some(v)) => megabytes = v,
            _ => {
                eprintln!("usage: loaned_pointcloud [--count N] [--mb SIZE]");
                std::process::exit(2);
            }
        }
    }
    let points = megabytes * 1_000_000 / POINT_STEP;
    let domain = 60 + std::process::id() % 50;

    let listener_ctx = context(domain);
    let listener = listener_ctx.create_node("cloud_listener")?;
    let (tx, rx) = mpsc::channel();
    let _sub = listener.create_subscription("points", 2, move |cloud: &PointCloud2| {
        let now = Instant::monotonic_now();
        let _ = tx.send((now, cloud.data.is_view(), cloud.data.len()));
    })?;
    let spinner = {
        let (ctx, node) = (listener_ctx.clone(), listener.clone());
        std::thread::spawn(move || {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin();
        })
    };

    let talker_ctx = context(domain);
    let publisher = talker_ctx
        .create_node("cloud_talker")?
        .create_publisher::<PointCloud2>("points", 2)?;
    // Until the listener is matched over shared memory, loans are heap buffers.
    let matching = std::time::Instant::now();
    while !publisher.loan(reserved_cloud(0))?.is_shared_memory() {
        if matching.elapsed() > Duration::from_secs(30) {
            return Err("the listener did not match over shared memory within 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    for frame in 0..count {
        let mut loan = publisher.loan(reserved_cloud(points))?;
        let fill_start = std::time::Instant::now();
        for (i, point) in loan
            .sequence_mut::<u8>(0)?
            .chunks_exact_mut(POINT_STEP)
            .enumerate()
        {
            let x = i as f32 * 0.001;
            for (slot, value) in point.chunks_exact_mut(4).zip([x, -x, 1.5, frame as f32]) {
                slot.copy_from_slice(&value.to_ne_bytes());
            }
        }
        let fill = fill_start.elapsed();
        let shared_memory = loan.is_shared_memory();
        let sent = Instant::monotonic_now();
        loan.publish()?;
        let (received, view, len) = rx.recv_timeout(Duration::from_secs(10))?;
        println!(
            "frame {frame}: {len} bytes, filled in place in {:.1} ms (shared memory: \
             {shared_memory}), publish -> callback {:.3} ms, received as a {}",
            fill.as_secs_f64() * 1e3,
            (received - sent).as_secs_f64() * 1e3,
            if view { "view" } else { "copy" }
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    listener_ctx.shutdown();
    spinner.join().map_err(|_| "the listener thread panicked")?;
    Ok(())
}
