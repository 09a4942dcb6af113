//! Randomized round trips of a few deeply nested generated types in both byte orders, and
//! truncated or random input that must fail cleanly instead of panicking.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use roslite_msgs::builtin_interfaces::msg::Time;
use roslite_msgs::cdr::{from_bytes, from_shared, to_vec, Endianness, Prim, Seq, SharedBuf};
use roslite_msgs::geometry_msgs::msg::{
    Point, Pose, PoseWithCovariance, Quaternion, Twist, TwistWithCovariance, Vector3,
};
use roslite_msgs::nav_msgs::msg::Odometry;
use roslite_msgs::rcl_interfaces::msg::{Parameter, ParameterEvent, ParameterValue};
use roslite_msgs::sensor_msgs::msg::{PointCloud2, PointField};
use roslite_msgs::std_msgs::msg::Header;
use roslite_msgs::Message;

/// A random value of a type, small enough to keep the test fast.
trait Random {
    fn random(rng: &mut SmallRng) -> Self;
}

macro_rules! random_numbers {
    ($($t:ty),*) => {$(
        impl Random for $t {
            fn random(rng: &mut SmallRng) -> Self {
                rng.gen()
            }
        }
    )*};
}

random_numbers!(bool, u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

impl Random for String {
    fn random(rng: &mut SmallRng) -> Self {
        // Any character but NUL, which CDR strings cannot carry; multi-byte ones included.
        let len = rng.gen_range(0..12);
        (0..len)
            .map(|_| match rng.gen_range(0..4) {
                0 => rng.gen_range('\u{80}'..='\u{10ffff}'),
                _ => rng.gen_range('\u{1}'..='\u{7f}'),
            })
            .collect()
    }
}

impl<T: Prim + Random> Random for Seq<T> {
    fn random(rng: &mut SmallRng) -> Self {
        // Empty sequences are common on purpose: their alignment is a classic interop bug.
        let len = if rng.gen() { 0 } else { rng.gen_range(0..20) };
        (0..len).map(|_| T::random(rng)).collect()
    }
}

impl<T: Random> Random for Vec<T> {
    fn random(rng: &mut SmallRng) -> Self {
        let len = if rng.gen() { 0 } else { rng.gen_range(0..4) };
        (0..len).map(|_| T::random(rng)).collect()
    }
}

impl<T: Random, const N: usize> Random for [T; N] {
    fn random(rng: &mut SmallRng) -> Self {
        std::array::from_fn(|_| T::random(rng))
    }
}

macro_rules! random_struct {
    ($($t:ident { $($field:ident),* $(,)? })*) => {$(
        impl Random for $t {
            fn random(rng: &mut SmallRng) -> Self {
                Self { $($field: Random::random(rng)),* }
            }
        }
    )*};
}

random_struct! {
    Time { sec, nanosec }
    Header { stamp, frame_id }
    PointField { name, offset, datatype, count }
    PointCloud2 {
        header, height, width, fields, is_bigendian, point_step, row_step, data, is_dense,
    }
    Point { x, y, z }
    Quaternion { x, y, z, w }
    Pose { position, orientation }
    PoseWithCovariance { pose, covariance }
    Vector3 { x, y, z }
    Twist { linear, angular }
    TwistWithCovariance { twist, covariance }
    Odometry { header, child_frame_id, pose, twist }
    ParameterValue {
        r#type, bool_value, integer_value, double_value, string_value, byte_array_value,
        bool_array_value, integer_array_value, double_array_value, string_array_value,
    }
    Parameter { name, value }
    ParameterEvent { stamp, node, new_parameters, changed_parameters, deleted_parameters }
}

/// Round trips in both byte orders, through a copy and through a shared buffer, and checks that
/// every strict prefix of the encoding is refused.
fn check<T: Message + Random>(seed: u64, iterations: usize) {
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..iterations {
        let value = T::random(&mut rng);
        for endianness in [Endianness::Little, Endianness::Big] {
            let bytes = to_vec(&value, endianness).unwrap();
            // NaN payloads compare unequal, so compare encodings rather than values.
            let decoded: T = from_bytes(&bytes).unwrap();
            assert_eq!(
                to_vec(&decoded, endianness).unwrap(),
                bytes,
                "{}",
                T::TYPE_NAME
            );
            let shared: T = from_shared(&SharedBuf::from_vec(bytes.clone())).unwrap();
            assert_eq!(to_vec(&shared, endianness).unwrap(), bytes);
            for cut in 0..bytes.len() {
                assert!(
                    from_bytes::<T>(&bytes[..cut]).is_err(),
                    "{}: a {cut}-byte prefix of {} bytes decoded",
                    T::TYPE_NAME,
                    bytes.len()
                );
            }
        }
    }
}

#[test]
fn point_cloud2_round_trips() {
    check::<PointCloud2>(1, 200);
}

#[test]
fn odometry_round_trips() {
    check::<Odometry>(2, 200);
}

#[test]
fn parameter_event_round_trips() {
    check::<ParameterEvent>(3, 200);
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = SmallRng::seed_from_u64(4);
    for _ in 0..2000 {
        let len = rng.gen_range(0..200);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if bytes.len() >= 4 {
            // A valid plain-CDR header, so decoding gets past it.
            bytes[..4].copy_from_slice(&[0, rng.gen_range(0..2), 0, 0]);
        }
        let _ = from_bytes::<PointCloud2>(&bytes);
        let _ = from_bytes::<Odometry>(&bytes);
        let _ = from_bytes::<ParameterEvent>(&bytes);
        let _ = from_bytes::<roslite_msgs::rmw_dds_common::msg::ParticipantEntitiesInfo>(&bytes);
    }
}

#[test]
fn empty_eight_byte_sequences_are_not_aligned() {
    // Fast CDR's `serialize_array` returns before aligning when there are no elements, and
    // Cyclone does the same, so an empty `int64[]` after an odd offset adds no padding.
    let value = ParameterValue {
        byte_array_value: Seq::from(vec![7u8]),
        bool_array_value: vec![true],
        ..Default::default()
    };
    let bytes = to_vec(&value, Endianness::Little).unwrap();
    let body = &bytes[4..];
    // type, bool_value, pad, integer_value, double_value, string "" (len 1), pad,
    // byte[] {7}, pad, bool[] {true}, pad.
    assert_eq!(&body[40..48], &[1, 0, 0, 0, 1, 0, 0, 0]);
    // int64[] len 0 at 48, float64[] len 0 at 52 (no padding to 56), string[] len 0 at 56.
    assert_eq!(&body[48..], &[0; 12]);
    assert_eq!(from_bytes::<ParameterValue>(&bytes).unwrap(), value);
}

#[test]
fn large_sequence_counts_are_refused_before_allocating() {
    // A PointField[] claiming u32::MAX elements in a 20-byte payload.
    let mut w = roslite_msgs::cdr::CdrWriter::new(Endianness::Little);
    roslite_msgs::cdr::CdrEncode::encode(&Header::default(), &mut w).unwrap();
    w.write_u32(1);
    w.write_u32(1);
    w.write_u32(u32::MAX);
    assert!(from_bytes::<PointCloud2>(&w.finish()).is_err());
}
