//! Dynamic encode/decode and the YAML text forms, against the vendored interface definitions.
//!
//! Wire vectors are the rclpy `serialize_message` outputs of docs/ros2-interop.md §7 (Fast CDR
//! leaves garbage in padding and writes trailing padding; we write zeros and no trailing
//! padding). Expected YAML is what `ros2 topic echo` prints for the same messages.

use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use roslite_cdr::Endianness;
use roslite_msg_gen::ast::{BaseType, Collection, FieldType, InterfaceKind, Primitive, TypeName};
use roslite_msg_gen::dynamic::{decode, default_value, encode, field, DynError, Value};
use roslite_msg_gen::registry::InterfaceSet;

/// Every basic type, bound and collection kind in one message, plus defaults.
const EVERYTHING: &str = "\
bool b
byte by
char c
int8 i8
uint8 u8
int16 i16
uint16 u16
int32 i32
uint32 u32
int64 i64
uint64 u64
float32 f32
float64 f64
string s
string<=5 bs
wstring ws
wstring<=3 bws
int16[3] arr
uint8[<=4] bseq
byte[] raw
char[2] chars
string<=3[<=2] bstrs
geometry_msgs/Point[<=2] points
geometry_msgs/Point[2] fixed_points
std_msgs/Empty[] empties
bool[] bools
float32[] f32s
int32 with_default 42
string str_default \"hi\"
float64[2] arr_default [1.5, -2.0]
";

fn set() -> &'static InterfaceSet {
    static SET: OnceLock<InterfaceSet> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set = InterfaceSet::new();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../roslite-msgs/interfaces");
        set.add_share_dir(&dir).unwrap_or_else(|e| panic!("{e}"));
        set.add_source(
            "test_msgs",
            InterfaceKind::Msg,
            "Everything",
            EVERYTHING,
            "Everything.msg",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        set
    })
}

fn tn(name: &str) -> TypeName {
    TypeName::parse(name).unwrap_or_else(|| panic!("bad type name {name}"))
}

fn hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

fn s(fields: Vec<(&str, Value)>) -> Value {
    Value::Struct(fields.into_iter().map(|(n, v)| (n.to_owned(), v)).collect())
}

fn vector3(x: f64, y: f64, z: f64) -> Value {
    s(vec![
        ("x", Value::Float(x)),
        ("y", Value::Float(y)),
        ("z", Value::Float(z)),
    ])
}

fn twist(lx: f64, az: f64) -> Value {
    s(vec![
        ("linear", vector3(lx, 0.0, 0.0)),
        ("angular", vector3(0.0, 0.0, az)),
    ])
}

fn string_msg(text: &str) -> Value {
    s(vec![("data", Value::String(text.to_owned()))])
}

// ---------------------------------------------------------------------------------------------
// Golden wire vectors

struct Golden {
    ty: &'static str,
    wire: &'static str,
    value: fn() -> Value,
    /// Padding inside the payload (absolute offsets), garbage in the capture.
    padding: Option<Range<usize>>,
    /// Bytes that carry data; the rest of the capture is trailing padding.
    content_len: usize,
}

fn goldens() -> Vec<Golden> {
    vec![
        Golden {
            ty: "std_msgs/msg/Int16",
            wire: "00010000 e8030000",
            value: || s(vec![("data", Value::Int(1000))]),
            padding: None,
            content_len: 6,
        },
        Golden {
            ty: "std_msgs/msg/Empty",
            wire: "00010000 00 550000",
            value: || s(vec![]),
            padding: None,
            content_len: 5,
        },
        Golden {
            ty: "std_srvs/srv/SetBool_Response",
            wire: "00010000 01 550000 0e000000 4d6f746f727320617265206f6e00",
            value: || {
                s(vec![
                    ("success", Value::Bool(true)),
                    ("message", Value::String("Motors are on".into())),
                ])
            },
            padding: Some(5..8),
            content_len: 26,
        },
        Golden {
            ty: "geometry_msgs/msg/Twist",
            wire: "00010000 7b14ae47e17ab43f 0000000000000000 0000000000000000 \
                   0000000000000000 0000000000000000 333333333333d3bf",
            value: || twist(0.08, -0.3),
            padding: None,
            content_len: 52,
        },
        Golden {
            ty: "geometry_msgs/msg/TwistStamped",
            wire: "00010000 01000000 02000000 05000000 6261736500 04f0140b0b02f0 \
                   7b14ae47e17ab43f 0000000000000000 0000000000000000 0000000000000000 \
                   0000000000000000 9a9999999999e93f",
            value: || {
                let stamp = s(vec![("sec", Value::Int(1)), ("nanosec", Value::UInt(2))]);
                let header = s(vec![
                    ("stamp", stamp),
                    ("frame_id", Value::String("base".into())),
                ]);
                s(vec![("header", header), ("twist", twist(0.08, 0.8))])
            },
            padding: Some(21..28),
            content_len: 76,
        },
        Golden {
            ty: "std_msgs/msg/String",
            wire: "00010000 09000000 68656c6c6f20313500 000000",
            value: || string_msg("hello 15"),
            padding: None,
            content_len: 17,
        },
    ]
}

#[test]
fn golden_vectors_decode() {
    for golden in goldens() {
        let decoded = decode(set(), &tn(golden.ty), &hex(golden.wire))
            .unwrap_or_else(|e| panic!("{}: {e}", golden.ty));
        assert_eq!(decoded, (golden.value)(), "{}", golden.ty);
    }
}

#[test]
fn golden_vectors_encode() {
    for golden in goldens() {
        let mut expected = hex(golden.wire);
        if let Some(range) = golden.padding {
            expected[range].fill(0);
        }
        expected.truncate(golden.content_len);
        let encoded = encode(set(), &tn(golden.ty), &(golden.value)(), Endianness::Little)
            .unwrap_or_else(|e| panic!("{}: {e}", golden.ty));
        assert_eq!(hex_string(&encoded), hex_string(&expected), "{}", golden.ty);
    }
}

fn hex_string(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn big_endian_layout() {
    let encoded = encode(
        set(),
        &tn("std_msgs/msg/String"),
        &string_msg("hi"),
        Endianness::Big,
    )
    .unwrap();
    assert_eq!(
        hex_string(&encoded),
        "00000000000000036869".to_owned() + "00"
    );
    let value = s(vec![("data", Value::Int(1000))]);
    let encoded = encode(set(), &tn("std_msgs/msg/Int16"), &value, Endianness::Big).unwrap();
    assert_eq!(hex_string(&encoded), "0000000003e8");
}

// ---------------------------------------------------------------------------------------------
// Round trips and hostile input

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// Random values of a type. `yaml_safe` leaves out the characters PyYAML itself folds when
/// reading (U+0085, U+2028, U+2029), which no YAML round trip can keep.
struct Generator<'r> {
    rng: &'r mut Rng,
    yaml_safe: bool,
}

const CHARS: &[char] = &[
    'a', 'Z', '0', '7', ' ', '\'', '"', ':', '#', '-', ',', '[', '{', '\n', '\t', '\\', 'é', '€',
    '😀', '\u{85}', '\u{2028}', '~', '!', '.',
];
const WORDS: &[&str] = &[
    "true",
    "null",
    "123",
    "1.5",
    "",
    "- x",
    "a: b",
    "2024-01-31",
    "...",
];

impl Generator<'_> {
    fn message(&mut self, ty: &TypeName) -> Value {
        let spec = set().message(ty).unwrap_or_else(|| panic!("unknown {ty}"));
        Value::Struct(
            spec.fields
                .iter()
                .map(|f| (f.name.clone(), self.field(&f.ty)))
                .collect(),
        )
    }

    fn field(&mut self, ty: &FieldType) -> Value {
        let len = match ty.collection {
            Collection::Single => return self.element(&ty.base),
            Collection::Array(n) => n,
            Collection::BoundedSequence(bound) => self.rng.below(bound + 1),
            Collection::UnboundedSequence => self.rng.below(5),
        };
        if let BaseType::Primitive(Primitive::Uint8 | Primitive::Byte | Primitive::Char) = ty.base {
            return Value::Bytes((0..len).map(|_| self.byte()).collect());
        }
        Value::Array((0..len).map(|_| self.element(&ty.base)).collect())
    }

    fn byte(&mut self) -> u8 {
        loop {
            let b = self.rng.next() as u8;
            if !(self.yaml_safe && b == 0x85) {
                return b;
            }
        }
    }

    fn element(&mut self, base: &BaseType) -> Value {
        match base {
            BaseType::Primitive(p) => self.primitive(*p),
            BaseType::String { bound } => Value::String(self.text(*bound, str::len)),
            BaseType::WString { bound } => {
                Value::String(self.text(*bound, |t: &str| t.encode_utf16().count()))
            }
            BaseType::Named(name) => self.message(name),
        }
    }

    fn primitive(&mut self, p: Primitive) -> Value {
        let bits = self.rng.next();
        match p {
            Primitive::Bool => Value::Bool(bits & 1 == 1),
            Primitive::Byte | Primitive::Char | Primitive::Uint8 => Value::UInt(self.byte().into()),
            Primitive::Int8 => Value::Int((bits as i8).into()),
            Primitive::Int16 => Value::Int((bits as i16).into()),
            Primitive::Uint16 => Value::UInt((bits as u16).into()),
            Primitive::Int32 => Value::Int((bits as i32).into()),
            Primitive::Uint32 => Value::UInt((bits as u32).into()),
            Primitive::Int64 => Value::Int(bits as i64),
            Primitive::Uint64 => Value::UInt(bits),
            Primitive::Float32 => Value::Float(f64::from(self.float32())),
            Primitive::Float64 => Value::Float(self.float()),
        }
    }

    fn float(&mut self) -> f64 {
        let special = [
            0.0,
            -0.0,
            1.5,
            -0.3,
            0.1,
            1e300,
            5e-324,
            1e-5,
            1e16,
            f64::INFINITY,
        ];
        if self.rng.below(3) == 0 {
            return self.rng.pick(&special);
        }
        loop {
            let x = f64::from_bits(self.rng.next());
            if !x.is_nan() {
                return x;
            }
        }
    }

    fn float32(&mut self) -> f32 {
        if self.rng.below(3) == 0 {
            return self
                .rng
                .pick(&[0.0, -0.0, 0.1, 3.4e38, 1e-45, f32::NEG_INFINITY]);
        }
        loop {
            let x = f32::from_bits(self.rng.next() as u32);
            if !x.is_nan() {
                return x;
            }
        }
    }

    /// Text whose `measure` stays within `bound` (bytes for string, UTF-16 units for wstring).
    fn text(&mut self, bound: Option<usize>, measure: impl Fn(&str) -> usize) -> String {
        let limit = bound.unwrap_or(12);
        if self.rng.below(4) == 0 {
            let word = self.rng.pick(WORDS);
            if measure(word) <= limit {
                return word.to_owned();
            }
        }
        let wanted = self.rng.below(limit + 1);
        let mut out = String::new();
        for _ in 0..wanted {
            let c = self.rng.pick(CHARS);
            if self.yaml_safe && matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}') {
                continue;
            }
            out.push(c);
            if measure(&out) > limit {
                out.pop();
                break;
            }
        }
        out
    }
}

const ROUND_TRIP_TYPES: &[&str] = &[
    "test_msgs/msg/Everything",
    "std_msgs/msg/String",
    "std_msgs/msg/Empty",
    "geometry_msgs/msg/TwistStamped",
    "geometry_msgs/msg/PoseWithCovariance",
    "sensor_msgs/msg/JointState",
    "sensor_msgs/msg/PointCloud2",
    "sensor_msgs/msg/Image",
    "sensor_msgs/msg/NavSatFix",
    "rcl_interfaces/msg/ParameterDescriptor",
    "rmw_dds_common/msg/ParticipantEntitiesInfo",
    "type_description_interfaces/msg/TypeDescription",
    "std_srvs/srv/SetBool_Request",
    "lifecycle_msgs/srv/ChangeState_Response",
];

#[test]
fn defaults_round_trip_in_both_byte_orders() {
    for name in ROUND_TRIP_TYPES {
        let ty = tn(name);
        let value = default_value(set(), &ty).unwrap_or_else(|e| panic!("{name}: {e}"));
        for endianness in [Endianness::Little, Endianness::Big] {
            let bytes = encode(set(), &ty, &value, endianness).unwrap();
            assert_eq!(
                decode(set(), &ty, &bytes).unwrap(),
                value,
                "{name} {endianness:?}"
            );
        }
    }
}

#[test]
fn defaults_honour_the_definitions() {
    let value = default_value(set(), &tn("test_msgs/msg/Everything")).unwrap();
    assert_eq!(field(&value, "with_default"), Some(&Value::Int(42)));
    assert_eq!(
        field(&value, "str_default"),
        Some(&Value::String("hi".into()))
    );
    assert_eq!(
        field(&value, "arr_default"),
        Some(&Value::Array(vec![Value::Float(1.5), Value::Float(-2.0)]))
    );
    assert_eq!(field(&value, "chars"), Some(&Value::Bytes(vec![0, 0])));
    assert_eq!(field(&value, "fixed_points[1].z"), Some(&Value::Float(0.0)));
    assert_eq!(field(&value, "raw"), Some(&Value::Bytes(vec![])));
    // Nested defaults too: a quaternion is the identity rotation.
    let pose = default_value(set(), &tn("geometry_msgs/msg/Pose")).unwrap();
    assert_eq!(field(&pose, "orientation.w"), Some(&Value::Float(1.0)));
    let status = default_value(set(), &tn("sensor_msgs/msg/NavSatStatus")).unwrap();
    assert_eq!(field(&status, "status"), Some(&Value::Int(-2)));
}

#[test]
fn random_values_round_trip_and_prefixes_fail() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for name in ROUND_TRIP_TYPES {
        let ty = tn(name);
        for round in 0..25 {
            let value = Generator {
                rng: &mut rng,
                yaml_safe: false,
            }
            .message(&ty);
            for endianness in [Endianness::Little, Endianness::Big] {
                let bytes = encode(set(), &ty, &value, endianness)
                    .unwrap_or_else(|e| panic!("{name} round {round}: {e}"));
                let back = decode(set(), &ty, &bytes)
                    .unwrap_or_else(|e| panic!("{name} round {round}: {e}"));
                assert_eq!(back, value, "{name} round {round} {endianness:?}");
                if round < 3 {
                    for cut in 0..bytes.len() {
                        assert!(
                            decode(set(), &ty, &bytes[..cut]).is_err(),
                            "{name}: a {cut}-byte prefix of {} decoded",
                            bytes.len()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let mut decoded = 0;
    for name in ROUND_TRIP_TYPES {
        let ty = tn(name);
        for _ in 0..40 {
            let len = rng.below(96);
            let mut bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            if len >= 4 && rng.below(4) != 0 {
                bytes[..4].copy_from_slice(&[0, rng.pick(&[0, 1]), 0, 0]);
            }
            decoded += usize::from(decode(set(), &ty, &bytes).is_ok());
        }
        // Valid payloads with bytes flipped: lengths and bools become hostile.
        let value = Generator {
            rng: &mut rng,
            yaml_safe: false,
        }
        .message(&ty);
        let valid = encode(set(), &ty, &value, Endianness::Little).unwrap();
        for _ in 0..40 {
            let mut bytes = valid.clone();
            for _ in 0..=rng.below(3) {
                if bytes.len() > 4 {
                    let at = 4 + rng.below(bytes.len() - 4);
                    let noise = rng.next() as u8;
                    bytes[at] = rng.pick(&[0xff, 0x7f, 0x00, 0x80, noise]);
                }
            }
            decoded += usize::from(decode(set(), &ty, &bytes).is_ok());
        }
    }
    assert!(
        decoded > 0,
        "nothing decoded at all: the inputs are too hostile to test much"
    );
}

#[test]
fn huge_lengths_are_refused_without_allocating() {
    // A JointState whose `name` claims 2^32-1 strings.
    let bytes = hex("00010000 00000000 00000000 01000000 00 000000 ffffffff");
    let err = decode(set(), &tn("sensor_msgs/msg/JointState"), &bytes).unwrap_err();
    assert!(
        matches!(&err, DynError::Decode { field, .. } if field == "name"),
        "{err:?}"
    );
    let bytes = hex("00010000 ffffffff");
    let err = decode(set(), &tn("std_msgs/msg/String"), &bytes).unwrap_err();
    assert!(
        err.to_string().contains("cannot decode field `data`"),
        "{err}"
    );
}

#[test]
fn decode_errors_name_the_field() {
    let bytes = hex("00010000 02");
    let err = decode(set(), &tn("std_msgs/msg/Bool"), &bytes).unwrap_err();
    assert!(
        matches!(&err, DynError::Decode { field, .. } if field == "data"),
        "{err:?}"
    );
    let err = decode(set(), &tn("nope_msgs/msg/Nothing"), &bytes).unwrap_err();
    assert_eq!(err, DynError::UnknownType(tn("nope_msgs/msg/Nothing")));
    assert!(err.to_string().contains("load the package"), "{err}");
    let err = decode(set(), &tn("std_msgs/msg/Bool"), &hex("00020000 01")).unwrap_err();
    assert!(
        err.to_string().contains("unsupported encapsulation"),
        "{err}"
    );
}

#[test]
fn encode_checks_values_against_the_type() {
    let ty = tn("test_msgs/msg/Everything");
    let with = |path: &str, v: Value| {
        let mut value = default_value(set(), &ty).unwrap();
        let Value::Struct(fields) = &mut value else {
            unreachable!()
        };
        fields.iter_mut().find(|(n, _)| n == path).unwrap().1 = v;
        encode(set(), &ty, &value, Endianness::Little)
    };
    let err = with("u8", Value::UInt(256)).unwrap_err();
    assert!(
        matches!(&err, DynError::OutOfRange { field, .. } if field == "u8"),
        "{err:?}"
    );
    let err = with("bs", Value::String("toolong".into())).unwrap_err();
    assert!(
        matches!(
            &err,
            DynError::StringTooLong {
                len: 7,
                chars: 7,
                bound: 5,
                ..
            }
        ),
        "{err:?}"
    );
    // Sent bounds count bytes (rclcpp's reading): 5 characters of 2 bytes do not fit.
    let err = with("bs", Value::String("ööööö".into())).unwrap_err();
    assert!(
        matches!(
            &err,
            DynError::StringTooLong {
                len: 10,
                chars: 5,
                bound: 5,
                ..
            }
        ),
        "{err:?}"
    );
    let err = with("arr", Value::Array(vec![Value::Int(1)])).unwrap_err();
    assert!(
        matches!(&err, DynError::WrongLength { len: 1, .. }),
        "{err:?}"
    );
    let err = with("bseq", Value::Bytes(vec![1, 2, 3, 4, 5])).unwrap_err();
    assert!(matches!(&err, DynError::TooLong { .. }), "{err:?}");
    let err = with("s", Value::String("a\0b".into())).unwrap_err();
    assert!(
        matches!(&err, DynError::Encode { field, .. } if field == "s"),
        "{err:?}"
    );
    let err = with(
        "points",
        Value::Array(vec![
            vector3(1.0, 2.0, 3.0),
            s(vec![("w", Value::Float(1.0))]),
        ]),
    )
    .unwrap_err();
    assert!(
        matches!(&err, DynError::UnknownField { field, .. } if field == "points[1].w"),
        "{err:?}"
    );
    let err = with("f64", Value::String("1".into())).unwrap_err();
    assert!(
        matches!(&err, DynError::TypeMismatch { field, .. } if field == "f64"),
        "{err:?}"
    );
    // Numbers in another variant are fine when they fit; left-out fields take defaults.
    assert!(with("f64", Value::Int(3)).is_ok());
    assert!(with("i8", Value::UInt(127)).is_ok());
    let bytes = encode(set(), &ty, &s(vec![]), Endianness::Little).unwrap();
    let back = decode(set(), &ty, &bytes).unwrap();
    assert_eq!(back, default_value(set(), &ty).unwrap());
}

// In a subdirectory so Cargo does not build it as a test target of its own.
#[path = "dynamic/yaml.rs"]
mod yaml;

#[test]
fn recursive_definitions_are_refused_not_overflowed() {
    // ROS forbids these, but a hand-written file may still say it.
    let mut set = InterfaceSet::new();
    set.add_source(
        "loop_msgs",
        InterfaceKind::Msg,
        "Node",
        "Node[] children\n",
        "Node.msg",
    )
    .unwrap();
    set.add_source(
        "loop_msgs",
        InterfaceKind::Msg,
        "Knot",
        "Knot inner\n",
        "Knot.msg",
    )
    .unwrap();
    let err = default_value(&set, &tn("loop_msgs/msg/Knot")).unwrap_err();
    assert_eq!(err, DynError::Recursive(tn("loop_msgs/msg/Knot")));
    // Every level holds one child: a payload of 4-byte lengths nests as deep as it is long.
    let mut bytes = hex("00010000");
    bytes.extend([1, 0, 0, 0].repeat(10_000));
    let err = decode(&set, &tn("loop_msgs/msg/Node"), &bytes).unwrap_err();
    assert_eq!(err, DynError::Recursive(tn("loop_msgs/msg/Node")));
    assert!(err.to_string().contains("cannot be recursive"), "{err}");
    let err = encode(
        &set,
        &tn("loop_msgs/msg/Knot"),
        &s(vec![]),
        Endianness::Little,
    );
    assert_eq!(
        err.unwrap_err(),
        DynError::Recursive(tn("loop_msgs/msg/Knot"))
    );
}

/// What rclpy sends in bounded strings (the bound counted in characters) decodes; more than the
/// bound even in characters is an error that names the sender's broken bound, not a type
/// mismatch.
#[test]
fn bounded_strings_decode_as_any_ros2_client_library_sends_them() {
    let mut set = InterfaceSet::new();
    for (name, text) in [
        ("Bounded", "string<=3 s\nwstring<=2 w\n"),
        ("Unbounded", "string s\nwstring w\n"),
    ] {
        set.add_source("t", InterfaceKind::Msg, name, text, "t.msg")
            .unwrap();
    }
    let sent = |s: &str, w: &str| {
        let value = Value::Struct(vec![
            ("s".into(), Value::String(s.into())),
            ("w".into(), Value::String(w.into())),
        ]);
        encode(&set, &tn("t/msg/Unbounded"), &value, Endianness::Little).unwrap()
    };
    let bounded = tn("t/msg/Bounded");
    // 6 bytes in a string<=3 and 4 UTF-16 units in a wstring<=2, as rclpy sends them.
    let value = decode(&set, &bounded, &sent("äöü", "😀😀")).unwrap();
    assert_eq!(value.get("s"), Some(&Value::String("äöü".into())));
    assert_eq!(value.get("w"), Some(&Value::String("😀😀".into())));
    // Sending them is refused: bytes and units are what rclcpp counts.
    let err = encode(&set, &bounded, &value, Endianness::Little).unwrap_err();
    assert!(matches!(
        err,
        DynError::StringTooLong {
            len: 6,
            chars: 3,
            bound: 3,
            ..
        }
    ));

    let err = decode(&set, &bounded, &sent("äöüß", "")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(
            "cannot decode field `s`: a bounded string of 4 characters exceeds its \
             bound of 3 characters"
        ),
        "{text}"
    );
    assert!(
        text.contains("the sender broke the bound of its own type"),
        "{text}"
    );
    assert!(!text.contains("hash"), "{text}");
    let err = decode(&set, &bounded, &sent("", "abcde")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot decode field `w`: a bounded string of 5 characters"),
        "{err}"
    );
}
