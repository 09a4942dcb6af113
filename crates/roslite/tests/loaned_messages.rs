//! Loaned messages (`Publisher::loan`): the publisher serializes a message with reserved
//! sequences into a shared-memory chunk, the application fills them in place, and same-host
//! subscribers read the very bytes written; without a shared-memory subscriber the loan lives
//! on the heap and reaches UDP and local subscribers. Contexts of this process on loopback
//! stand in for processes on one host (LOCALHOST discovery), a domain per test.

use std::sync::{mpsc, Arc};
use std::time::Duration;

use roslite::msgs::cdr::{EncodeError, Seq};
use roslite::msgs::sensor_msgs::msg::PointCloud2;
use roslite::msgs::std_msgs::msg::{
    MultiArrayDimension, MultiArrayLayout, UInt64MultiArray, UInt8MultiArray,
};
use roslite::{
    Context, ContextOptions, LoanError, LocalTransports, Message, MessageInfo, PublishError,
    Publisher, QosProfile,
};

mod common;
use common::shm_stats;

fn test_domain(offset: u32) -> u32 {
    debug_assert!(offset < 5);
    120 + (std::process::id() % 4) * 5 + offset
}

const UDP_ONLY: LocalTransports = LocalTransports::UDP_ONLY;

/// A context in another "process" with one subscription on `topic` that forwards every
/// message and its info.
struct Listener<T: Message> {
    ctx: Context,
    rx: mpsc::Receiver<(Arc<T>, MessageInfo)>,
    spinner: std::thread::JoinHandle<()>,
    _sub: roslite::Subscription<T>,
}

impl<T: Message> Listener<T> {
    fn start(domain: u32, transports: LocalTransports, topic: &str, qos: QosProfile) -> Self {
        let ctx = common::localhost_context(domain, transports);
        let node = ctx.create_node("consumer").unwrap();
        let (tx, rx) = mpsc::channel();
        let sub = node
            .create_subscription(topic, qos, move |m: Arc<T>, info: &MessageInfo| {
                let _ = tx.send((m, *info));
            })
            .unwrap();
        let spinner = common::spin_in_background(&ctx, &node);
        Self {
            ctx,
            rx,
            spinner,
            _sub: sub,
        }
    }

    fn next(&self) -> (Arc<T>, MessageInfo) {
        self.rx
            .recv_timeout(Duration::from_secs(20))
            .expect("a message did not arrive")
    }

    fn stop(self) {
        self.ctx.shutdown();
        self.spinner.join().unwrap();
    }
}

/// A publisher in its own context once `matched` `(over RTPS, over a same-host link)`
/// subscriptions of `topic` are there.
fn talker<T: Message>(
    domain: u32,
    transports: LocalTransports,
    topic: &str,
    qos: QosProfile,
    matched: (usize, usize),
) -> (Context, Publisher<T>) {
    let ctx = common::localhost_context(domain, transports);
    let publisher = ctx
        .create_node("talker")
        .unwrap()
        .create_publisher::<T>(topic, qos)
        .unwrap();
    let net = ctx.graph();
    let path = format!("/{topic}");
    assert!(
        common::wait_until(Duration::from_secs(20), || {
            net.remote_subscriptions_by_path(&path) == matched
        }),
        "the listener did not match as {matched:?} (rtps, same-host): {:?}",
        net.remote_subscriptions_by_path(&path)
    );
    (ctx, publisher)
}

/// 64-bit FNV-1a: any changed, shifted or reordered byte changes it.
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The cloud `common::xyzi_cloud(bytes, salt)` describes, with its data reserved, not filled.
fn reserved_cloud(bytes: usize) -> PointCloud2 {
    let shape = common::xyzi_cloud(0, 0);
    let points = (bytes / shape.point_step as usize) as u32;
    PointCloud2 {
        width: points,
        row_step: points * shape.point_step,
        data: Seq::reserved(points as usize * shape.point_step as usize),
        ..shape
    }
}

/// Writes `common::xyzi_cloud`'s data pattern into `data`.
fn fill_cloud(data: &mut [u8], salt: u8) {
    for (i, b) in data.iter_mut().enumerate() {
        *b = (i % 251) as u8 ^ salt;
    }
}

const LARGE: usize = 55_000_000;

#[test]
fn a_loaned_55_mb_point_cloud_is_written_in_place_and_read_in_place() {
    let domain = test_domain(0);
    let qos = QosProfile::keep_last(4);
    let listener =
        Listener::<PointCloud2>::start(domain, LocalTransports::default(), "points", qos);
    let (_ctx, publisher) =
        talker::<PointCloud2>(domain, LocalTransports::default(), "points", qos, (0, 1));
    let before = shm_stats(&publisher);
    let expected = common::xyzi_cloud(LARGE, 5);
    let mut loan = publisher.loan(reserved_cloud(LARGE)).unwrap();
    assert!(loan.is_shared_memory(), "a shared-memory reader is matched");
    let wire_len = loan.as_bytes().len();
    assert_eq!(
        wire_len,
        roslite_cdr::encoded_len(&expected, roslite_cdr::Endianness::NATIVE).unwrap()
    );
    let data = loan.sequence_mut::<u8>(0).unwrap();
    assert_eq!(data.len(), expected.data.len());
    fill_cloud(data, 5);
    loan.publish().unwrap();

    let (got, info) = listener.next();
    assert!(got.data.is_view(), "decoded as a copy, not in place");
    assert_eq!(checksum(&got.data), checksum(&expected.data));
    assert_eq!(
        (got.width, got.row_step, &got.fields, got.is_dense),
        (expected.width, expected.row_step, &expected.fields, true)
    );
    assert_eq!(info.publication_sequence_number, 1);
    let shm = shm_stats(&publisher);
    assert_eq!(shm.sent - before.sent, 1);
    assert_eq!(shm.copied_bytes, 0, "the chunk was filled by copying");
    // The chunk holds a 4-byte lead before the message (it aligns the CDR body to 8 bytes).
    assert_eq!(
        shm.in_place_bytes - before.in_place_bytes,
        wire_len as u64 + 4
    );
    let stats = publisher.send_stats();
    assert_eq!(
        (
            stats.loans_published,
            stats.serialized_in_place,
            stats.copied_out_bytes
        ),
        (1, 1, 0),
        "one loan, sent in place, nothing copied out for other outlets"
    );
    drop(got);
    listener.stop();
}

#[test]
fn a_reserved_uint64_array_is_handed_out_aligned_and_arrives_as_a_view() {
    let domain = test_domain(1);
    let qos = QosProfile::keep_last(4);
    let listener =
        Listener::<UInt64MultiArray>::start(domain, LocalTransports::default(), "words", qos);
    let (_ctx, publisher) =
        talker::<UInt64MultiArray>(domain, LocalTransports::default(), "words", qos, (0, 1));
    let layout = MultiArrayLayout {
        // A label of odd length: the array's alignment padding is not trivially zero.
        dim: vec![MultiArrayDimension {
            label: "w".into(),
            size: 1000,
            stride: 1000,
        }],
        data_offset: 0,
    };
    let mut loan = publisher
        .loan(UInt64MultiArray {
            layout: layout.clone(),
            data: Seq::reserved(1000),
        })
        .unwrap();
    assert!(loan.is_shared_memory());
    assert_eq!(loan.reserved().len(), 1);
    let words = loan.sequence_mut::<u64>(0).unwrap();
    assert_eq!(words.as_ptr() as usize % 8, 0);
    for (i, w) in words.iter_mut().enumerate() {
        *w = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    loan.publish().unwrap();
    let (got, _) = listener.next();
    assert!(got.data.is_view(), "u64 array decoded as a copy");
    assert_eq!(got.layout, layout);
    let expected: Vec<u64> = (0..1000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    assert_eq!(got.data, expected);
    drop(got);
    listener.stop();
}

#[test]
fn without_a_shared_memory_subscriber_a_loan_is_on_the_heap_and_reaches_udp_and_local() {
    let domain = test_domain(2);
    let qos = QosProfile::keep_last(4);
    let remote = Listener::<UInt8MultiArray>::start(domain, UDP_ONLY, "bytes", qos);
    let (ctx, publisher) =
        talker::<UInt8MultiArray>(domain, LocalTransports::default(), "bytes", qos, (1, 0));
    // A subscription in the publisher's own context.
    let (tx, local_rx) = mpsc::channel();
    let local_node = ctx.create_node("local").unwrap();
    let _local_sub = local_node
        .create_subscription(
            "bytes",
            qos,
            move |m: Arc<UInt8MultiArray>, info: &MessageInfo| {
                let _ = tx.send((m, *info));
            },
        )
        .unwrap();
    let local_spinner = common::spin_in_background(&ctx, &local_node);

    let len = 200_000;
    let mut loan = publisher
        .loan(UInt8MultiArray {
            data: Seq::reserved(len),
            ..Default::default()
        })
        .unwrap();
    assert!(!loan.is_shared_memory(), "no reader over shared memory");
    let wire_len = loan.as_bytes().len();
    fill_cloud(loan.sequence_mut::<u8>(0).unwrap(), 3);
    loan.publish().unwrap();
    let mut expected = vec![0u8; len];
    fill_cloud(&mut expected, 3);

    let (got, info) = remote.next();
    assert_eq!(checksum(&got.data), checksum(&expected));
    assert!(!info.from_intra_process);
    let (got, info) = local_rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the local subscription got nothing");
    assert_eq!(checksum(&got.data), checksum(&expected));
    assert!(
        got.data.is_view(),
        "the local subscription should view the heap loan, not copy it"
    );
    assert!(info.from_intra_process);
    assert_eq!(info.publication_sequence_number, 1);
    let stats = publisher.send_stats();
    assert_eq!(
        (
            stats.loans_published,
            stats.serialized,
            stats.serialized_in_place
        ),
        (1, 1, 0)
    );
    assert_eq!(
        stats.copied_out_bytes, wire_len as u64,
        "the RTPS outlet gets one copy of the loan"
    );
    assert_eq!(shm_stats(&publisher).sent, 0);
    remote.stop();
    ctx.shutdown();
    local_spinner.join().unwrap();
}

#[test]
fn misusing_a_loan_is_an_error_that_says_what_is_wrong() {
    // No network: every loan is a heap loan; the checks do not depend on the buffer.
    let ctx = Context::new(ContextOptions::default()).unwrap();
    let node = ctx.create_node("talker").unwrap();
    let publisher = node
        .create_publisher::<UInt64MultiArray>("words", 4)
        .unwrap();
    let mut loan = publisher
        .loan(UInt64MultiArray {
            data: Seq::reserved(3),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        loan.sequence_mut::<u64>(1).map(|s| s.len()),
        Err(LoanError::NoSuchSequence {
            index: 1,
            reserved: 1
        })
    );
    let wrong_type = loan.sequence_mut::<u32>(0).map(|s| s.len());
    assert_eq!(
        wrong_type,
        Err(LoanError::ElementType {
            index: 0,
            reserved: "u64",
            requested: "u32"
        })
    );
    assert!(
        wrong_type.unwrap_err().to_string().contains("u64"),
        "the message names the reserved type"
    );
    assert_eq!(loan.sequence_mut::<u64>(0).map(|s| s.len()), Ok(3));
    drop(loan);

    // A message without reserved sequences loans fine and has nothing to hand out.
    let mut plain = publisher.loan(UInt64MultiArray::default()).unwrap();
    assert!(matches!(
        plain.sequence_mut::<u64>(0),
        Err(LoanError::NoSuchSequence { reserved: 0, .. })
    ));
    plain.publish().unwrap();
}

#[test]
fn publishing_a_reserved_sequence_without_a_loan_fails_where_it_must_be_serialized() {
    let domain = test_domain(3);
    let qos = QosProfile::keep_last(4);
    let listener = Listener::<UInt64MultiArray>::start(domain, UDP_ONLY, "words", qos);
    let (_ctx, publisher) = talker::<UInt64MultiArray>(domain, UDP_ONLY, "words", qos, (1, 0));
    let result = publisher.publish(UInt64MultiArray {
        data: Seq::reserved(3),
        ..Default::default()
    });
    assert_eq!(
        result,
        Err(PublishError::Serialize(EncodeError::ReservedSequence {
            len: 3
        }))
    );
    listener.stop();
}

#[test]
fn dropped_loans_return_their_chunks_and_take_no_sequence_number() {
    let domain = test_domain(4);
    let qos = QosProfile::keep_last(8);
    let listener =
        Listener::<UInt8MultiArray>::start(domain, LocalTransports::default(), "bytes", qos);
    let (_ctx, publisher) =
        talker::<UInt8MultiArray>(domain, LocalTransports::default(), "bytes", qos, (0, 1));
    let len = 1 << 20;
    let mut published = 0u64;
    for round in 0..60u32 {
        let salt = round as u8;
        // Regular publishes in between: loans and publishes share one numbering.
        if round % 7 == 0 {
            let mut data = vec![0u8; 1024];
            fill_cloud(&mut data, salt);
            publisher
                .publish(UInt8MultiArray {
                    data: data.into(),
                    ..Default::default()
                })
                .unwrap();
        } else {
            let mut loan = publisher
                .loan(UInt8MultiArray {
                    data: Seq::reserved(len),
                    ..Default::default()
                })
                .unwrap();
            assert!(loan.is_shared_memory());
            fill_cloud(loan.sequence_mut::<u8>(0).unwrap(), salt);
            if round % 3 == 0 {
                drop(loan);
                continue;
            }
            loan.publish().unwrap();
        }
        published += 1;
        let (got, info) = listener.next();
        assert_eq!(
            info.publication_sequence_number, published,
            "a dropped loan used up a sequence number"
        );
        let mut expected = vec![0u8; got.data.len()];
        fill_cloud(&mut expected, salt);
        assert_eq!(checksum(&got.data), checksum(&expected), "round {round}");
    }
    assert!(
        listener.rx.try_recv().is_err(),
        "a dropped loan was delivered"
    );
    assert!(
        common::wait_until(Duration::from_secs(10), || {
            shm_stats(&publisher).buffers_in_use == 0
        }),
        "chunks still in use after every message was released: {:?}",
        shm_stats(&publisher)
    );
    listener.stop();
}
