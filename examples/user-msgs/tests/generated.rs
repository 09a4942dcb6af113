//! The types `build.rs` generated from `msg/` and `srv/`: defaults, constants, trait constants,
//! bounds, and CDR round trips that go through built-in nested types.

use roslite_cdr::{from_bytes, from_shared, to_vec, EncodeError, Endianness, SharedBuf};
use roslite_msgs::builtin_interfaces::msg::Time;
use roslite_msgs::geometry_msgs::msg::Point;
use roslite_msgs::std_msgs::msg::Header;
use roslite_msgs::{Message, Service};
use user_msgs::msg::{Beacon, Fleet, RobotStatus};
use user_msgs::srv::{SetMode, SetMode_Event, SetMode_Request, SetMode_Response};

fn sample() -> RobotStatus {
    RobotStatus {
        header: Header {
            stamp: Time {
                sec: 12,
                nanosec: 345,
            },
            frame_id: "base_link".into(),
        },
        position: Point {
            x: 1.0,
            y: -2.5,
            z: 0.125,
        },
        mode: RobotStatus::MODE_RUNNING,
        samples: vec![0.5, 1.5, f64::MAX].into(),
        covariance: std::array::from_fn(|i| i as f64),
        waypoints: vec![
            Point {
                x: 3.0,
                ..Default::default()
            },
            Point::default(),
        ],
        fence: vec![Point {
            z: 9.0,
            ..Default::default()
        }],
        tags: vec!["indoor".into(), "ünïcode".into()],
        ..Default::default()
    }
}

#[test]
fn defaults_come_from_the_definition() {
    let status = RobotStatus::default();
    assert_eq!(status.mode, 1);
    assert_eq!(status.battery, 0.75);
    assert_eq!(status.name, "raspimouse");
    assert_eq!(status.recent_errors, vec![3, 7]);
    assert!(status.samples.is_empty());
    assert_eq!(status.wheel_ticks, [1, 2, 3]);
    assert_eq!(status.covariance, [0.0; 36]);
    assert_eq!(status.tags, ["a", "b"]);
    assert_eq!(status.switches, [true, false]);
    assert_eq!(status.header, Header::default());
    assert_eq!(SetMode_Request::default().reason, "manual");
}

#[test]
fn constants() {
    assert_eq!(RobotStatus::MODE_IDLE, 0u8);
    assert_eq!(RobotStatus::MODE_RUNNING, 1u8);
    assert_eq!(RobotStatus::ROBOT_KIND, "mouse");
    assert_eq!(RobotStatus::MAX_SPEED, 0.5f64);
}

#[test]
fn trait_constants() {
    assert_eq!(RobotStatus::TYPE_NAME, "user_msgs/msg/RobotStatus");
    assert_eq!(
        RobotStatus::DDS_TYPE_NAME,
        "user_msgs::msg::dds_::RobotStatus_"
    );
    assert_eq!(SetMode_Request::TYPE_NAME, "user_msgs/srv/SetMode_Request");
    assert_eq!(
        SetMode_Response::DDS_TYPE_NAME,
        "user_msgs::srv::dds_::SetMode_Response_"
    );
    assert_eq!(SetMode_Event::TYPE_NAME, "user_msgs/srv/SetMode_Event");
    assert_eq!(<SetMode as Service>::TYPE_NAME, "user_msgs/srv/SetMode");
    let hashes = [
        RobotStatus::TYPE_HASH,
        Fleet::TYPE_HASH,
        SetMode_Request::TYPE_HASH,
        SetMode_Response::TYPE_HASH,
        SetMode_Event::TYPE_HASH,
        <SetMode as Service>::TYPE_HASH,
    ];
    for (i, hash) in hashes.iter().enumerate() {
        let hex = hash.strip_prefix("RIHS01_").unwrap();
        assert_eq!(hex.len(), 64);
        assert!(hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        assert!(!hashes[..i].contains(hash), "{hash} repeats");
    }
    // The service ties its messages together.
    fn request_of<S: Service>(request: S::Request) -> S::Request {
        request
    }
    let request: SetMode_Request = request_of::<SetMode>(SetMode_Request::default());
    assert_eq!(request.mode, 0);
}

#[test]
fn round_trips_in_both_byte_orders() {
    let status = sample();
    let fleet = Fleet {
        robots: vec![status.clone(), RobotStatus::default()],
    };
    let response = SetMode_Response {
        accepted: true,
        status: status.clone(),
    };
    for endianness in [Endianness::Little, Endianness::Big] {
        let bytes = to_vec(&status, endianness).unwrap();
        assert_eq!(from_bytes::<RobotStatus>(&bytes).unwrap(), status);
        let bytes = to_vec(&fleet, endianness).unwrap();
        assert_eq!(from_bytes::<Fleet>(&bytes).unwrap(), fleet);
        let bytes = to_vec(&response, endianness).unwrap();
        assert_eq!(from_bytes::<SetMode_Response>(&bytes).unwrap(), response);
        for cut in 0..bytes.len() {
            assert!(from_bytes::<SetMode_Response>(&bytes[..cut]).is_err());
        }
    }
}

#[test]
fn layout_of_the_first_fields() {
    let bytes = to_vec(&sample(), Endianness::Little).unwrap();
    let mut expected = vec![0x00, 0x01, 0x00, 0x00];
    expected.extend_from_slice(&12i32.to_le_bytes());
    expected.extend_from_slice(&345u32.to_le_bytes());
    expected.extend_from_slice(&10u32.to_le_bytes());
    expected.extend_from_slice(b"base_link\0");
    // Two padding bytes align the first float64 of the Point to offset 24 after the header.
    expected.extend_from_slice(&[0, 0]);
    for v in [1.0f64, -2.5, 0.125] {
        expected.extend_from_slice(&v.to_le_bytes());
    }
    expected.push(RobotStatus::MODE_RUNNING);
    assert_eq!(&bytes[..expected.len()], &expected[..]);
}

#[test]
fn primitive_sequences_decode_as_views() {
    let mut status = sample();
    status.recent_errors = vec![-1, 2, -3].into();
    status.samples = (0..1000).map(f64::from).collect();
    let bytes = to_vec(&status, Endianness::NATIVE).unwrap();
    // Elements are aligned from the end of the 4-byte encapsulation header, so a buffer whose
    // payload starts 4 bytes into an 8-aligned allocation lets even float64 data stay in place.
    let mut backing = vec![0u8; 4];
    backing.extend_from_slice(&bytes);
    let buffer = SharedBuf::from_vec(backing);
    let payload = buffer.slice(4..buffer.len()).unwrap();
    let decoded: RobotStatus = from_shared(&payload).unwrap();
    assert!(decoded.recent_errors.is_view());
    if payload.bytes().as_ptr() as usize % 8 == 4 {
        assert!(decoded.samples.is_view());
    }
    assert_eq!(decoded, status);
}

#[test]
fn bounds_are_enforced() {
    let too_long = RobotStatus {
        name: "x".repeat(17),
        ..Default::default()
    };
    assert_eq!(
        to_vec(&too_long, Endianness::Little),
        Err(EncodeError::StringBoundExceeded {
            bytes: 17,
            chars: 17,
            bound: 16
        })
    );
    let too_many = RobotStatus {
        recent_errors: vec![1, 2, 3, 4, 5].into(),
        ..Default::default()
    };
    assert_eq!(
        to_vec(&too_many, Endianness::Little),
        Err(EncodeError::BoundExceeded { len: 5, bound: 4 })
    );
    let fence = RobotStatus {
        fence: vec![Point::default(); 3],
        ..Default::default()
    };
    assert!(to_vec(&fence, Endianness::Little).is_err());
    let at_bounds = RobotStatus {
        name: "x".repeat(16),
        recent_errors: vec![1, 2, 3, 4].into(),
        fence: vec![Point::default(); 2],
        ..Default::default()
    };
    let bytes = to_vec(&at_bounds, Endianness::Little).unwrap();
    assert_eq!(from_bytes::<RobotStatus>(&bytes).unwrap(), at_bounds);
}

#[test]
fn an_idl_message_is_generated_with_its_key() {
    let beacon = Beacon::default();
    assert_eq!(beacon.kind, Beacon::KIND_MOVING);
    assert_eq!(beacon.variance, [0.1, 0.1, 0.2]);
    assert!(beacon.rssi.is_empty());
    let beacon = Beacon {
        robot: "mouse".into(),
        id: 7,
        rssi: vec![-40.5].into(),
        ..beacon
    };
    let bytes = to_vec(&beacon, Endianness::Big).unwrap();
    assert_eq!(from_bytes::<Beacon>(&bytes).unwrap(), beacon);
    // The key members, little-endian: "mouse" with its length and NUL, then the id.
    let key = Beacon::KEY.expect("Beacon is keyed");
    assert_eq!(
        key.key_of(&bytes).unwrap(),
        [6, 0, 0, 0, b'm', b'o', b'u', b's', b'e', 0, 7, 0]
    );
    assert!(RobotStatus::KEY.is_none());
}
