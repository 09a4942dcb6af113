//! Generated types against byte vectors produced by a stock ROS 2 stack (rclpy
//! `serialize_message`, Kilted, Fast CDR) and against the RIHS01 hashes the Kilted wheels ship.
//! Source: docs/ros2-interop.md §7 (byte vectors) and §14 (hashes).
//!
//! Fast CDR leaves garbage in padding bytes and pads the end of the stream; our writer zeroes
//! padding and writes no trailing padding. So each vector is decoded as captured, and our
//! encoding is compared with the vector's padding replaced by zeros and its tail cut.

use roslite_msgs::cdr::{from_bytes, to_vec, CdrDecode, CdrEncode, Endianness};
use roslite_msgs::geometry_msgs::msg::{Twist, TwistStamped, Vector3};
use roslite_msgs::std_msgs::msg::{Empty, Header, Int16, String as StringMsg};
use roslite_msgs::std_srvs::srv::{SetBool, SetBool_Request, SetBool_Response};
use roslite_msgs::{builtin_interfaces, Message, Service};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Decodes `wire` (as captured, garbage padding included), then checks that encoding the value
/// gives `clean` (the same bytes with zero padding and no trailing padding).
fn check<T: Message>(value: &T, wire: &str, clean: &str) {
    let wire = hex(wire);
    let clean = hex(clean);
    assert_eq!(
        &from_bytes::<T>(&wire).unwrap(),
        value,
        "decoding {}",
        T::TYPE_NAME
    );
    assert_eq!(
        to_vec(value, Endianness::Little).unwrap(),
        clean,
        "encoding {}",
        T::TYPE_NAME
    );
    assert_eq!(&from_bytes::<T>(&clean).unwrap(), value);
    // Any byte order round-trips.
    let big = to_vec(value, Endianness::Big).unwrap();
    assert_eq!(&big[..2], &[0, 0]);
    assert_eq!(&from_bytes::<T>(&big).unwrap(), value);
}

#[test]
fn int16() {
    check(&Int16 { data: 1000 }, "00010000 e8030000", "00010000 e803");
}

#[test]
fn empty_is_one_dummy_byte_with_garbage_padding() {
    check(&Empty {}, "00010000 00 550000", "00010000 00");
}

#[test]
fn set_bool_response_with_garbage_padding() {
    let response = SetBool_Response {
        success: true,
        message: "Motors are on".into(),
    };
    check(
        &response,
        "00010000 01 550000 0e000000 4d6f746f727320617265206f6e00",
        "00010000 01 000000 0e000000 4d6f746f727320617265206f6e00",
    );
}

#[test]
fn twist() {
    let twist = Twist {
        linear: Vector3 {
            x: 0.08,
            y: 0.0,
            z: 0.0,
        },
        angular: Vector3 {
            x: 0.0,
            y: 0.0,
            z: -0.3,
        },
    };
    let bytes = format!(
        "00010000 7b14ae47e17ab43f {} 333333333333d3bf",
        "00".repeat(32)
    );
    check(&twist, &bytes, &bytes);
}

#[test]
fn twist_stamped_aligns_from_after_the_header() {
    let stamped = TwistStamped {
        header: Header {
            stamp: builtin_interfaces::msg::Time { sec: 1, nanosec: 2 },
            frame_id: "base".into(),
        },
        twist: Twist {
            linear: Vector3 {
                x: 0.08,
                ..Default::default()
            },
            angular: Vector3 {
                z: 0.8,
                ..Default::default()
            },
        },
    };
    let zeros = "00".repeat(32);
    // Seven padding bytes bring the first float64 to offset 24 from the origin.
    check(
        &stamped,
        &format!(
            "00010000 01000000 02000000 05000000 6261736500 04f0140b0b02f0 7b14ae47e17ab43f \
             {zeros} 9a9999999999e93f"
        ),
        &format!(
            "00010000 01000000 02000000 05000000 6261736500 00000000000000 7b14ae47e17ab43f \
             {zeros} 9a9999999999e93f"
        ),
    );
}

#[test]
fn string_with_and_without_trailing_padding() {
    let hello = StringMsg {
        data: "hello 15".into(),
    };
    // Fast DDS pads the sample to a multiple of 4, Cyclone does not.
    check(
        &hello,
        "00010000 09000000 68656c6c6f20313500 000000",
        "00010000 09000000 68656c6c6f20313500",
    );
    check(
        &hello,
        "00010000 09000000 68656c6c6f20313500",
        "00010000 09000000 68656c6c6f20313500",
    );
}

#[test]
fn truncated_and_malformed_vectors_are_errors() {
    assert!(from_bytes::<Int16>(&hex("00010000 e8")).is_err());
    assert!(from_bytes::<Empty>(&hex("00010000")).is_err());
    // A bool byte of 2.
    assert!(from_bytes::<SetBool_Request>(&hex("00010000 02")).is_err());
    // XCDR2 is not what ROS 2 sends.
    assert!(from_bytes::<Int16>(&hex("00070000 e803")).is_err());
    let mut r = roslite_msgs::cdr::CdrReader::new(&[0, 1, 0, 0, 9, 0, 0, 0, b'a']).unwrap();
    assert!(StringMsg::decode(&mut r).is_err());
}

#[test]
fn bounded_strings_are_checked_both_ways() {
    use roslite_msgs::rmw_dds_common::msg::NodeEntitiesInfo;
    let mut info = NodeEntitiesInfo {
        node_name: "n".repeat(256),
        ..Default::default()
    };
    let bytes = to_vec(&info, Endianness::Little).unwrap();
    assert_eq!(from_bytes::<NodeEntitiesInfo>(&bytes).unwrap(), info);
    info.node_name.push('n');
    let mut w = roslite_msgs::cdr::CdrWriter::new(Endianness::Little);
    assert!(info.encode(&mut w).is_err());
    // The same 257 characters on the wire are refused when decoding.
    let mut w = roslite_msgs::cdr::CdrWriter::new(Endianness::Little);
    w.write_string("/").unwrap();
    w.write_string(&info.node_name).unwrap();
    w.write_u32(0);
    w.write_u32(0);
    assert!(from_bytes::<NodeEntitiesInfo>(&w.finish()).is_err());
}

#[test]
fn trait_constants() {
    assert_eq!(StringMsg::TYPE_NAME, "std_msgs/msg/String");
    assert_eq!(StringMsg::DDS_TYPE_NAME, "std_msgs::msg::dds_::String_");
    assert_eq!(
        SetBool_Request::DDS_TYPE_NAME,
        "std_srvs::srv::dds_::SetBool_Request_"
    );
    assert_eq!(<SetBool as Service>::TYPE_NAME, "std_srvs/srv/SetBool");
    assert_eq!(
        <roslite_msgs::example_interfaces::action::Fibonacci as roslite_msgs::Action>::TYPE_NAME,
        "example_interfaces/action/Fibonacci"
    );
    assert_eq!(
        roslite_msgs::example_interfaces::action::Fibonacci_FeedbackMessage::DDS_TYPE_NAME,
        "example_interfaces::action::dds_::Fibonacci_FeedbackMessage_"
    );
    assert_eq!(roslite_msgs::sensor_msgs::msg::PointField::FLOAT64, 8);
    assert_eq!(roslite_msgs::sensor_msgs::msg::PointField::INT8, 1);
}

#[test]
fn type_hashes_match_the_kilted_wheels() {
    fn hash<T: Message>() -> &'static str {
        T::TYPE_HASH.strip_prefix("RIHS01_").unwrap()
    }
    use roslite_msgs::{
        geometry_msgs, lifecycle_msgs, rcl_interfaces, rmw_dds_common, sensor_msgs,
    };
    let table: [(&str, &str); 18] = [
        (
            hash::<StringMsg>(),
            "df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
        ),
        (
            hash::<Int16>(),
            "1dcc3464e47c288a55f943a389d337cdb06804de3f5cd7a266b0de718eee17e5",
        ),
        (
            hash::<Header>(),
            "f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01",
        ),
        (
            hash::<builtin_interfaces::msg::Time>(),
            "b106235e25a4c5ed35098aa0a61a3ee9c9b18d197f398b0e4206cea9acf9c197",
        ),
        (
            hash::<Twist>(),
            "9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a",
        ),
        (
            hash::<geometry_msgs::msg::TwistStamped>(),
            "5f0fcd4f81d5d06ad9b4c4c63e3ea51b82d6ae4d0558f1d475229b1121db6f64",
        ),
        (
            hash::<sensor_msgs::msg::Image>(),
            "d31d41a9a4c4bc8eae9be757b0beed306564f7526c88ea6a4588fb9582527d47",
        ),
        (
            hash::<sensor_msgs::msg::LaserScan>(),
            "64c191398013af96509d518dac71d5164f9382553fce5c1f8cca5be7924bd828",
        ),
        (
            hash::<sensor_msgs::msg::PointCloud2>(),
            "9198cabf7da3796ae6fe19c4cb3bdd3525492988c70522628af5daa124bae2b5",
        ),
        (
            hash::<SetBool_Request>(),
            "c62fbb99d94e1b25e8ef9e109f9581956bb1b3361a45a4e5810c36a90d29932e",
        ),
        (
            hash::<SetBool_Response>(),
            "d0814e7f7b4880ab77e9c57426c7aa1562ab69f11eef8e2e968812f9cbd0b059",
        ),
        (
            hash::<rcl_interfaces::msg::Log>(),
            "e28ce254ca8abc06abf92773b74602cdbf116ed34fbaf294fb9f81da9f318eac",
        ),
        (
            hash::<rcl_interfaces::msg::ParameterEvent>(),
            "043e627780fcad87a22d225bc2a037361dba713fca6a6b9f4b869a5aa0393204",
        ),
        (
            hash::<rmw_dds_common::msg::ParticipantEntitiesInfo>(),
            "91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e",
        ),
        (
            hash::<lifecycle_msgs::srv::ChangeState_Request>(),
            "d74c6f524e14cade7b67e7297190360ed749264af300524fc1456f27cc2a553a",
        ),
        (
            hash::<lifecycle_msgs::srv::GetState_Response>(),
            "fe249babab472e42cb5653b5d6a6b0c42a003b0fdfb84851aea3fde08760b4f5",
        ),
        (
            hash::<roslite_msgs::raspimouse_msgs::msg::Leds>(),
            "74612a6ea289df905dcbf795421691a980253517de0a4279effae1df957d5d6f",
        ),
        (
            hash::<roslite_msgs::raspimouse_msgs::msg::Switches>(),
            "110fb02e8cc06865723ef0d372052df6381f8e4c051e79b362601210b86cd963",
        ),
    ];
    for (ours, theirs) in table {
        assert_eq!(ours, theirs);
    }
}

#[test]
fn every_generated_hash_matches_expected_hashes_tsv() {
    // Every `TYPE_NAME`/`TYPE_HASH` pair in the generated sources against the hashes extracted
    // from the Kilted wheels' type descriptions.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/generated");
    let mut ours = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let mut name = None;
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("const TYPE_NAME: &'static str = \"") {
                name = rest.strip_suffix("\";").map(str::to_owned);
            } else if line == "const TYPE_HASH: &'static str =" {
                let hash = lines
                    .next()
                    .unwrap()
                    .trim()
                    .trim_matches(|c| c == '"' || c == ';');
                ours.insert(
                    name.take().expect("TYPE_NAME precedes TYPE_HASH"),
                    hash.to_owned(),
                );
            }
        }
    }
    let expected = include_str!("../interfaces/expected-hashes.tsv");
    let mut checked = 0;
    for line in expected
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (name, hash) = line.split_once('\t').unwrap();
        assert_eq!(
            ours.get(name).map(String::as_str),
            Some(hash.trim()),
            "{name}"
        );
        checked += 1;
    }
    assert!(checked > 200, "only {checked} hashes checked");
}

#[test]
fn interface_files_list_every_vendored_definition() {
    let files = roslite_msgs::INTERFACE_FILES;
    let string = files
        .iter()
        .find(|f| (f.package, f.kind, f.name) == ("std_msgs", "msg", "String"))
        .expect("std_msgs/msg/String");
    assert!(string.text.contains("string data"));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("interfaces");
    let mut on_disk = 0;
    for package in std::fs::read_dir(&root).unwrap() {
        let package = package.unwrap().path();
        let package_name = package.file_name().unwrap().to_str().unwrap().to_owned();
        for kind in ["msg", "srv", "action"] {
            let Ok(entries) = std::fs::read_dir(package.join(kind)) else {
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                let extension = path.extension().and_then(|e| e.to_str());
                if extension == Some(kind) || extension == Some("idl") {
                    on_disk += 1;
                    let name = path.file_stem().unwrap().to_str().unwrap();
                    let listed = files
                        .iter()
                        .find(|f| (f.package, f.kind, f.name) == (&package_name, kind, name));
                    let text = std::fs::read_to_string(&path).unwrap();
                    assert!(
                        listed
                            .is_some_and(|f| f.text == text && f.idl == (extension == Some("idl"))),
                        "{}",
                        path.display()
                    );
                }
            }
        }
    }
    assert_eq!(files.len(), on_disk);
}
