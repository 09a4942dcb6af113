//! The send side of shared memory is zero-copy: a publisher with same-host readers serializes
//! each message once, straight into a loaned chunk, and copies those bytes out only for other
//! outlets that are active at the same time. Two (or three) contexts of this process, loopback
//! discovery, a domain per test.

use std::sync::{mpsc, Arc};
use std::time::Duration;

use roslite::msgs::sensor_msgs::msg::PointCloud2;
use roslite::{Context, Executor, LocalTransports};

mod common;
use common::shm_stats;

fn test_domain(offset: u32) -> u32 {
    debug_assert!(offset < 4);
    140 + (std::process::id() % 10) * 4 + offset
}

struct Listener {
    ctx: Context,
    rx: mpsc::Receiver<(Arc<PointCloud2>, bool)>,
    spinner: std::thread::JoinHandle<()>,
    _sub: roslite::Subscription<PointCloud2>,
}

impl Listener {
    fn start(domain: u32, transports: LocalTransports) -> Self {
        let ctx = common::localhost_context(domain, transports);
        let node = ctx.create_node("consumer").unwrap();
        let (tx, rx) = mpsc::channel();
        let sub = node
            .create_subscription("points", 4, move |m: Arc<PointCloud2>| {
                let view = m.data.is_view();
                let _ = tx.send((m, view));
            })
            .unwrap();
        let spinner = {
            let (ctx, node) = (ctx.clone(), node.clone());
            std::thread::spawn(move || {
                let executor = Executor::new(&ctx);
                executor.add_node(&node);
                executor.spin();
            })
        };
        Self {
            ctx,
            rx,
            spinner,
            _sub: sub,
        }
    }

    fn expect(&self, sent: &PointCloud2) -> bool {
        let (got, view) = self
            .rx
            .recv_timeout(Duration::from_secs(20))
            .expect("a point cloud did not arrive");
        assert!(*got == *sent, "the point cloud arrived altered");
        view
    }

    fn stop(self) {
        self.ctx.shutdown();
        self.spinner.join().unwrap();
    }
}

const LARGE: usize = 55_000_000;

/// A talker context on `domain` with a `/points` publisher, once `subscriptions` same-host
/// subscriptions matched it (none over RTPS).
fn talker(
    domain: u32,
    transports: LocalTransports,
    subscriptions: usize,
) -> (Context, roslite::Publisher<PointCloud2>) {
    let ctx = common::localhost_context(domain, transports);
    let publisher = ctx
        .create_node("lidar")
        .unwrap()
        .create_publisher::<PointCloud2>("points", 4)
        .unwrap();
    let net = ctx.graph();
    assert!(
        common::wait_until(Duration::from_secs(20), || {
            net.remote_subscriptions_by_path("/points") == (0, subscriptions)
        }),
        "{subscriptions} listener(s) should match over same-host links only"
    );
    (ctx, publisher)
}

#[test]
fn a_55_mb_point_cloud_is_serialized_once_into_shared_memory_and_arrives_intact() {
    let domain = test_domain(0);
    let listener = Listener::start(domain, LocalTransports::default());
    let (_talker_ctx, publisher) = talker(domain, LocalTransports::default(), 1);
    let before = shm_stats(&publisher);
    let mut wire_len = 0;
    for salt in 0..3 {
        let message = Arc::new(common::xyzi_cloud(LARGE, salt));
        wire_len = roslite_cdr::encoded_len(&*message, roslite_cdr::Endianness::Little).unwrap();
        publisher.publish_shared(message.clone()).unwrap();
        assert!(
            listener.expect(&message),
            "the receive side decoded the data as a copy, not a view into shared memory"
        );
    }
    let stats = publisher.send_stats();
    assert_eq!(stats.serialized, 3, "one serialization per publish");
    assert_eq!(stats.serialized_in_place, 3, "each straight into a loan");
    let shm = shm_stats(&publisher);
    assert_eq!(shm.sent - before.sent, 3);
    // Each chunk holds a 4-byte lead before the message (it aligns the CDR body to 8 bytes so
    // 64-bit arrays decode in place).
    assert_eq!(
        shm.in_place_bytes - before.in_place_bytes,
        3 * (wire_len as u64 + 4)
    );
    assert_eq!(
        shm.copied_bytes, 0,
        "no serialized message was copied into shared memory"
    );
    listener.stop();
}

/// With only shared-memory readers, no other outlet is active and nothing is copied out of
/// the loan either. Needs the RTPS outlet (`backends/rtps/endpoints.rs`) to report itself inactive while its writer
/// has no matched RTPS reader and is volatile (`Outlet::is_active`); until then the RTPS
/// outlet takes a copy of every message for its history.
#[test]
fn with_only_shared_memory_readers_nothing_is_copied_on_the_send_side() {
    let domain = test_domain(1);
    let listener = Listener::start(domain, LocalTransports::default());
    let (_talker_ctx, publisher) = talker(domain, LocalTransports::default(), 1);
    for salt in 0..2 {
        let message = Arc::new(common::xyzi_cloud(LARGE, salt));
        publisher.publish_shared(message.clone()).unwrap();
        listener.expect(&message);
    }
    let stats = publisher.send_stats();
    assert_eq!((stats.serialized, stats.serialized_in_place), (2, 2));
    assert_eq!(
        stats.copied_out_bytes, 0,
        "a full-size copy on the send side"
    );
    assert_eq!(shm_stats(&publisher).copied_bytes, 0);
    listener.stop();
}

/// A shared-memory reader and a Unix-socket reader of one publisher: one serialization, into
/// the loan; the Unix socket gets one copy of those bytes; both receive the message intact.
#[test]
fn a_unix_socket_reader_alongside_gets_one_copy_of_the_loaned_bytes() {
    let domain = test_domain(2);
    let shm_listener = Listener::start(domain, LocalTransports::default());
    let uds_listener = Listener::start(
        domain,
        LocalTransports {
            shm: false,
            uds: true,
            ..LocalTransports::default()
        },
    );
    let (_talker_ctx, publisher) = talker(domain, LocalTransports::default(), 2);
    let message = Arc::new(common::xyzi_cloud(1 << 20, 9));
    let wire_len = roslite_cdr::encoded_len(&*message, roslite_cdr::Endianness::Little).unwrap();
    publisher.publish_shared(message.clone()).unwrap();
    assert!(shm_listener.expect(&message));
    uds_listener.expect(&message);
    let stats = publisher.send_stats();
    assert_eq!((stats.serialized, stats.serialized_in_place), (1, 1));
    // One copy out of the loan, shared by the Unix-socket and RTPS outlets.
    assert_eq!(stats.copied_out_bytes, wire_len as u64);
    assert_eq!(shm_stats(&publisher).copied_bytes, 0);
    shm_listener.stop();
    uds_listener.stop();
}

/// Over a Unix socket alone, small messages are serialized into the writer thread's reused
/// buffer (not shared memory, so not in place) and large ones into a shared buffer of their
/// own; every size arrives intact, in turn.
#[test]
fn unix_socket_readers_get_small_and_large_messages_intact() {
    let domain = test_domain(3);
    let uds_only = LocalTransports {
        shm: false,
        uds: true,
        ..LocalTransports::default()
    };
    let listener = Listener::start(domain, uds_only);
    let (_talker_ctx, publisher) = talker(domain, uds_only, 1);
    let sizes = [64, 4096, 256 * 1024, 48, 70 * 1024, 64];
    for (salt, size) in sizes.into_iter().enumerate() {
        let message = Arc::new(common::xyzi_cloud(size, salt as u8));
        publisher.publish_shared(message.clone()).unwrap();
        listener.expect(&message);
    }
    let stats = publisher.send_stats();
    assert_eq!(
        (
            stats.serialized,
            stats.serialized_in_place,
            stats.copied_out_bytes
        ),
        (sizes.len() as u64, 0, 0)
    );
    listener.stop();
}
