//! The generated C and C++ message types (`roslite_msg_gen::native`) against the generated Rust
//! types, byte for byte, for every message structure roslite ships (services' and actions'
//! synthesized ones included).
//!
//! The test generates every built-in header, then one C++ and one C program that, for each
//! type, fill a value by a deterministic rule (below, `fill_*`), encode it and print the bytes,
//! check that decoding gives back an equal value and the same bytes, that every strict prefix
//! is refused, and digest how they treat two families of corrupted inputs (a huge count written
//! at every 4-byte offset, 0xff at every byte). The Rust side fills the same value through
//! `roslite_msg_gen::dynamic`, and requires: the C++ bytes are the dynamic encoding of that
//! value; the Rust type decodes them and encodes exactly them again; the C bytes are the same;
//! and the Rust type accepts, refuses and re-encodes the corrupted inputs exactly as C++ and C
//! do (so counts are checked before allocating the same way everywhere).
//!
//! The fill rule, with a counter k starting at 1 and taken (then incremented) once per
//! element: bool `k % 2 == 1`; integers `k * 2654435761` truncated to the type; floats
//! `k * 0.25 - 10`; strings `"s<k>"` (`"w<k>"` for wstrings) plus "é" when unbounded, cut to a
//! bound; sequences take `k % 3` elements (at most the bound) before their elements.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use roslite_msg_gen::ast::{BaseType, Collection, MessageSpec, Primitive, TypeName};
use roslite_msg_gen::dynamic::{self, Value};
use roslite_msg_gen::native::{self, Lang};
use roslite_msg_gen::registry::InterfaceSet;
use roslite_msgs::cdr::{from_bytes, to_vec, Endianness};
use roslite_msgs::Message;

/// Decodes with the Rust type and encodes again: `Err('D')` when decoding fails, `Err('E')`
/// when encoding the decoded value fails.
type RustRoundTrip = fn(&[u8]) -> Result<Vec<u8>, char>;

fn round_trip<T: Message>(bytes: &[u8]) -> Result<Vec<u8>, char> {
    let value: T = from_bytes(bytes).map_err(|_| 'D')?;
    to_vec(&value, Endianness::Little).map_err(|_| 'E')
}

macro_rules! rust_types {
    ($($pkg:ident::$kind:ident::$name:ident,)*) => {
        fn rust_types() -> BTreeMap<&'static str, RustRoundTrip> {
            let mut map: BTreeMap<&'static str, RustRoundTrip> = BTreeMap::new();
            $(
                map.insert(
                    <roslite_msgs::$pkg::$kind::$name as Message>::TYPE_NAME,
                    round_trip::<roslite_msgs::$pkg::$kind::$name>,
                );
            )*
            map
        }
    };
}

// Every message structure of `roslite-msgs`; `every_built_in_type_is_listed` keeps this
// complete.
rust_types! {
    action_msgs::msg::GoalInfo,
    action_msgs::msg::GoalStatus,
    action_msgs::msg::GoalStatusArray,
    action_msgs::srv::CancelGoal_Request,
    action_msgs::srv::CancelGoal_Response,
    action_msgs::srv::CancelGoal_Event,
    builtin_interfaces::msg::Duration,
    builtin_interfaces::msg::Time,
    example_interfaces::msg::Bool,
    example_interfaces::msg::Byte,
    example_interfaces::msg::ByteMultiArray,
    example_interfaces::msg::Char,
    example_interfaces::msg::Empty,
    example_interfaces::msg::Float32,
    example_interfaces::msg::Float32MultiArray,
    example_interfaces::msg::Float64,
    example_interfaces::msg::Float64MultiArray,
    example_interfaces::msg::Int16,
    example_interfaces::msg::Int16MultiArray,
    example_interfaces::msg::Int32,
    example_interfaces::msg::Int32MultiArray,
    example_interfaces::msg::Int64,
    example_interfaces::msg::Int64MultiArray,
    example_interfaces::msg::Int8,
    example_interfaces::msg::Int8MultiArray,
    example_interfaces::msg::MultiArrayDimension,
    example_interfaces::msg::MultiArrayLayout,
    example_interfaces::msg::String,
    example_interfaces::msg::UInt16,
    example_interfaces::msg::UInt16MultiArray,
    example_interfaces::msg::UInt32,
    example_interfaces::msg::UInt32MultiArray,
    example_interfaces::msg::UInt64,
    example_interfaces::msg::UInt64MultiArray,
    example_interfaces::msg::UInt8,
    example_interfaces::msg::UInt8MultiArray,
    example_interfaces::msg::WString,
    example_interfaces::srv::AddTwoInts_Request,
    example_interfaces::srv::AddTwoInts_Response,
    example_interfaces::srv::AddTwoInts_Event,
    example_interfaces::srv::SetBool_Request,
    example_interfaces::srv::SetBool_Response,
    example_interfaces::srv::SetBool_Event,
    example_interfaces::srv::Trigger_Request,
    example_interfaces::srv::Trigger_Response,
    example_interfaces::srv::Trigger_Event,
    example_interfaces::action::Fibonacci_Goal,
    example_interfaces::action::Fibonacci_Result,
    example_interfaces::action::Fibonacci_Feedback,
    example_interfaces::action::Fibonacci_SendGoal_Request,
    example_interfaces::action::Fibonacci_SendGoal_Response,
    example_interfaces::action::Fibonacci_SendGoal_Event,
    example_interfaces::action::Fibonacci_GetResult_Request,
    example_interfaces::action::Fibonacci_GetResult_Response,
    example_interfaces::action::Fibonacci_GetResult_Event,
    example_interfaces::action::Fibonacci_FeedbackMessage,
    geometry_msgs::msg::Accel,
    geometry_msgs::msg::AccelStamped,
    geometry_msgs::msg::AccelWithCovariance,
    geometry_msgs::msg::AccelWithCovarianceStamped,
    geometry_msgs::msg::Inertia,
    geometry_msgs::msg::InertiaStamped,
    geometry_msgs::msg::Point,
    geometry_msgs::msg::Point32,
    geometry_msgs::msg::PointStamped,
    geometry_msgs::msg::Polygon,
    geometry_msgs::msg::PolygonInstance,
    geometry_msgs::msg::PolygonInstanceStamped,
    geometry_msgs::msg::PolygonStamped,
    geometry_msgs::msg::Pose,
    geometry_msgs::msg::Pose2D,
    geometry_msgs::msg::PoseArray,
    geometry_msgs::msg::PoseStamped,
    geometry_msgs::msg::PoseWithCovariance,
    geometry_msgs::msg::PoseWithCovarianceStamped,
    geometry_msgs::msg::Quaternion,
    geometry_msgs::msg::QuaternionStamped,
    geometry_msgs::msg::Transform,
    geometry_msgs::msg::TransformStamped,
    geometry_msgs::msg::Twist,
    geometry_msgs::msg::TwistStamped,
    geometry_msgs::msg::TwistWithCovariance,
    geometry_msgs::msg::TwistWithCovarianceStamped,
    geometry_msgs::msg::Vector3,
    geometry_msgs::msg::Vector3Stamped,
    geometry_msgs::msg::VelocityStamped,
    geometry_msgs::msg::Wrench,
    geometry_msgs::msg::WrenchStamped,
    lifecycle_msgs::msg::State,
    lifecycle_msgs::msg::Transition,
    lifecycle_msgs::msg::TransitionDescription,
    lifecycle_msgs::msg::TransitionEvent,
    lifecycle_msgs::srv::ChangeState_Request,
    lifecycle_msgs::srv::ChangeState_Response,
    lifecycle_msgs::srv::ChangeState_Event,
    lifecycle_msgs::srv::GetAvailableStates_Request,
    lifecycle_msgs::srv::GetAvailableStates_Response,
    lifecycle_msgs::srv::GetAvailableStates_Event,
    lifecycle_msgs::srv::GetAvailableTransitions_Request,
    lifecycle_msgs::srv::GetAvailableTransitions_Response,
    lifecycle_msgs::srv::GetAvailableTransitions_Event,
    lifecycle_msgs::srv::GetState_Request,
    lifecycle_msgs::srv::GetState_Response,
    lifecycle_msgs::srv::GetState_Event,
    nav_msgs::msg::Goals,
    nav_msgs::msg::GridCells,
    nav_msgs::msg::MapMetaData,
    nav_msgs::msg::OccupancyGrid,
    nav_msgs::msg::Odometry,
    nav_msgs::msg::Path,
    nav_msgs::srv::GetMap_Request,
    nav_msgs::srv::GetMap_Response,
    nav_msgs::srv::GetMap_Event,
    nav_msgs::srv::GetPlan_Request,
    nav_msgs::srv::GetPlan_Response,
    nav_msgs::srv::GetPlan_Event,
    nav_msgs::srv::LoadMap_Request,
    nav_msgs::srv::LoadMap_Response,
    nav_msgs::srv::LoadMap_Event,
    nav_msgs::srv::SetMap_Request,
    nav_msgs::srv::SetMap_Response,
    nav_msgs::srv::SetMap_Event,
    raspimouse_msgs::msg::Leds,
    raspimouse_msgs::msg::LightSensors,
    raspimouse_msgs::msg::Switches,
    rcl_interfaces::msg::FloatingPointRange,
    rcl_interfaces::msg::IntegerRange,
    rcl_interfaces::msg::ListParametersResult,
    rcl_interfaces::msg::Log,
    rcl_interfaces::msg::LoggerLevel,
    rcl_interfaces::msg::Parameter,
    rcl_interfaces::msg::ParameterDescriptor,
    rcl_interfaces::msg::ParameterEvent,
    rcl_interfaces::msg::ParameterEventDescriptors,
    rcl_interfaces::msg::ParameterType,
    rcl_interfaces::msg::ParameterValue,
    rcl_interfaces::msg::SetLoggerLevelsResult,
    rcl_interfaces::msg::SetParametersResult,
    rcl_interfaces::srv::DescribeParameters_Request,
    rcl_interfaces::srv::DescribeParameters_Response,
    rcl_interfaces::srv::DescribeParameters_Event,
    rcl_interfaces::srv::GetLoggerLevels_Request,
    rcl_interfaces::srv::GetLoggerLevels_Response,
    rcl_interfaces::srv::GetLoggerLevels_Event,
    rcl_interfaces::srv::GetParameterTypes_Request,
    rcl_interfaces::srv::GetParameterTypes_Response,
    rcl_interfaces::srv::GetParameterTypes_Event,
    rcl_interfaces::srv::GetParameters_Request,
    rcl_interfaces::srv::GetParameters_Response,
    rcl_interfaces::srv::GetParameters_Event,
    rcl_interfaces::srv::ListParameters_Request,
    rcl_interfaces::srv::ListParameters_Response,
    rcl_interfaces::srv::ListParameters_Event,
    rcl_interfaces::srv::SetLoggerLevels_Request,
    rcl_interfaces::srv::SetLoggerLevels_Response,
    rcl_interfaces::srv::SetLoggerLevels_Event,
    rcl_interfaces::srv::SetParameters_Request,
    rcl_interfaces::srv::SetParameters_Response,
    rcl_interfaces::srv::SetParameters_Event,
    rcl_interfaces::srv::SetParametersAtomically_Request,
    rcl_interfaces::srv::SetParametersAtomically_Response,
    rcl_interfaces::srv::SetParametersAtomically_Event,
    rmw_dds_common::msg::Gid,
    rmw_dds_common::msg::NodeEntitiesInfo,
    rmw_dds_common::msg::ParticipantEntitiesInfo,
    rosgraph_msgs::msg::Clock,
    roslite_interfaces::msg::HostedNode,
    roslite_interfaces::srv::CompleteMigration_Request,
    roslite_interfaces::srv::CompleteMigration_Response,
    roslite_interfaces::srv::CompleteMigration_Event,
    roslite_interfaces::srv::ListNodes_Request,
    roslite_interfaces::srv::ListNodes_Response,
    roslite_interfaces::srv::ListNodes_Event,
    roslite_interfaces::srv::MigrateNode_Request,
    roslite_interfaces::srv::MigrateNode_Response,
    roslite_interfaces::srv::MigrateNode_Event,
    roslite_interfaces::srv::PrepareMigration_Request,
    roslite_interfaces::srv::PrepareMigration_Response,
    roslite_interfaces::srv::PrepareMigration_Event,
    sensor_msgs::msg::BatteryState,
    sensor_msgs::msg::CameraInfo,
    sensor_msgs::msg::ChannelFloat32,
    sensor_msgs::msg::CompressedImage,
    sensor_msgs::msg::FluidPressure,
    sensor_msgs::msg::Illuminance,
    sensor_msgs::msg::Image,
    sensor_msgs::msg::Imu,
    sensor_msgs::msg::JointState,
    sensor_msgs::msg::Joy,
    sensor_msgs::msg::JoyFeedback,
    sensor_msgs::msg::JoyFeedbackArray,
    sensor_msgs::msg::LaserEcho,
    sensor_msgs::msg::LaserScan,
    sensor_msgs::msg::MagneticField,
    sensor_msgs::msg::MultiDOFJointState,
    sensor_msgs::msg::MultiEchoLaserScan,
    sensor_msgs::msg::NavSatFix,
    sensor_msgs::msg::NavSatStatus,
    sensor_msgs::msg::PointCloud,
    sensor_msgs::msg::PointCloud2,
    sensor_msgs::msg::PointField,
    sensor_msgs::msg::Range,
    sensor_msgs::msg::RegionOfInterest,
    sensor_msgs::msg::RelativeHumidity,
    sensor_msgs::msg::Temperature,
    sensor_msgs::msg::TimeReference,
    sensor_msgs::srv::SetCameraInfo_Request,
    sensor_msgs::srv::SetCameraInfo_Response,
    sensor_msgs::srv::SetCameraInfo_Event,
    service_msgs::msg::ServiceEventInfo,
    std_msgs::msg::Bool,
    std_msgs::msg::Byte,
    std_msgs::msg::ByteMultiArray,
    std_msgs::msg::Char,
    std_msgs::msg::ColorRGBA,
    std_msgs::msg::Empty,
    std_msgs::msg::Float32,
    std_msgs::msg::Float32MultiArray,
    std_msgs::msg::Float64,
    std_msgs::msg::Float64MultiArray,
    std_msgs::msg::Header,
    std_msgs::msg::Int16,
    std_msgs::msg::Int16MultiArray,
    std_msgs::msg::Int32,
    std_msgs::msg::Int32MultiArray,
    std_msgs::msg::Int64,
    std_msgs::msg::Int64MultiArray,
    std_msgs::msg::Int8,
    std_msgs::msg::Int8MultiArray,
    std_msgs::msg::MultiArrayDimension,
    std_msgs::msg::MultiArrayLayout,
    std_msgs::msg::String,
    std_msgs::msg::UInt16,
    std_msgs::msg::UInt16MultiArray,
    std_msgs::msg::UInt32,
    std_msgs::msg::UInt32MultiArray,
    std_msgs::msg::UInt64,
    std_msgs::msg::UInt64MultiArray,
    std_msgs::msg::UInt8,
    std_msgs::msg::UInt8MultiArray,
    std_srvs::srv::Empty_Request,
    std_srvs::srv::Empty_Response,
    std_srvs::srv::Empty_Event,
    std_srvs::srv::SetBool_Request,
    std_srvs::srv::SetBool_Response,
    std_srvs::srv::SetBool_Event,
    std_srvs::srv::Trigger_Request,
    std_srvs::srv::Trigger_Response,
    std_srvs::srv::Trigger_Event,
    type_description_interfaces::msg::Field,
    type_description_interfaces::msg::FieldType,
    type_description_interfaces::msg::IndividualTypeDescription,
    type_description_interfaces::msg::KeyValue,
    type_description_interfaces::msg::TypeDescription,
    type_description_interfaces::msg::TypeSource,
    type_description_interfaces::srv::GetTypeDescription_Request,
    type_description_interfaces::srv::GetTypeDescription_Response,
    type_description_interfaces::srv::GetTypeDescription_Event,
    test_msgs::action::Fibonacci_Goal,
    test_msgs::action::Fibonacci_Result,
    test_msgs::action::Fibonacci_Feedback,
    test_msgs::action::Fibonacci_SendGoal_Request,
    test_msgs::action::Fibonacci_SendGoal_Response,
    test_msgs::action::Fibonacci_SendGoal_Event,
    test_msgs::action::Fibonacci_GetResult_Request,
    test_msgs::action::Fibonacci_GetResult_Response,
    test_msgs::action::Fibonacci_GetResult_Event,
    test_msgs::action::Fibonacci_FeedbackMessage,
    test_msgs::msg::ComplexNestedKey,
    test_msgs::msg::KeyedLong,
    test_msgs::msg::KeyedString,
    test_msgs::msg::NonKeyedWithNestedKey,
    unique_identifier_msgs::msg::UUID,
}

fn builtin_set() -> InterfaceSet {
    let mut set = InterfaceSet::new();
    roslite_msg_gen::build::add_builtin_interfaces(&mut set).unwrap();
    set.check().unwrap();
    set
}

/// Every message structure, as `pkg/kind/Name`.
fn message_names(set: &InterfaceSet) -> Vec<TypeName> {
    set.messages().map(|m| m.name.clone()).collect()
}

#[test]
fn every_built_in_type_is_listed() {
    let set = builtin_set();
    let listed = rust_types();
    let missing: Vec<String> = message_names(&set)
        .iter()
        .filter(|n| !listed.contains_key(n.to_string().as_str()))
        .map(|n| format!("    {}::{}::{},", n.package, n.kind.as_str(), n.name))
        .collect();
    assert!(
        missing.is_empty(),
        "add to rust_types!:\n{}",
        missing.join("\n")
    );
    assert_eq!(listed.len(), message_names(&set).len());
}

// ---- The fill rule in Rust -------------------------------------------------------------------

const MULTIPLIER: u64 = 2654435761;

fn take(k: &mut u64) -> u64 {
    let v = *k;
    *k += 1;
    v
}

fn text(prefix: &str, k: u64, bound: Option<usize>, wide: bool) -> String {
    let mut s = format!("{prefix}{k}");
    match bound {
        None => s.push('\u{e9}'),
        // ASCII so far: bytes and UTF-16 units are the same count.
        Some(b) => s.truncate(b),
    }
    let _ = wide;
    s
}

fn fill_elem(set: &InterfaceSet, base: &BaseType, k: &mut u64) -> Value {
    match base {
        BaseType::Primitive(p) => {
            let v = take(k);
            let bits = v.wrapping_mul(MULTIPLIER);
            match p {
                Primitive::Bool => Value::Bool(v % 2 == 1),
                Primitive::Float32 => Value::Float(f64::from((v as f64 * 0.25 - 10.0) as f32)),
                Primitive::Float64 => Value::Float(v as f64 * 0.25 - 10.0),
                Primitive::Int8 => Value::Int(i64::from(bits as u8 as i8)),
                Primitive::Int16 => Value::Int(i64::from(bits as u16 as i16)),
                Primitive::Int32 => Value::Int(i64::from(bits as u32 as i32)),
                Primitive::Int64 => Value::Int(bits as i64),
                Primitive::Byte | Primitive::Char | Primitive::Uint8 => {
                    Value::UInt(u64::from(bits as u8))
                }
                Primitive::Uint16 => Value::UInt(u64::from(bits as u16)),
                Primitive::Uint32 => Value::UInt(u64::from(bits as u32)),
                Primitive::Uint64 => Value::UInt(bits),
            }
        }
        BaseType::String { bound } => Value::String(text("s", take(k), *bound, false)),
        BaseType::WString { bound } => Value::String(text("w", take(k), *bound, true)),
        BaseType::Named(ty) => fill_struct(set, set.message(ty).unwrap(), k),
    }
}

fn fill_struct(set: &InterfaceSet, spec: &MessageSpec, k: &mut u64) -> Value {
    let mut fields = Vec::new();
    for field in &spec.fields {
        let count = match field.ty.collection {
            Collection::Single => {
                fields.push((field.name.clone(), fill_elem(set, &field.ty.base, k)));
                continue;
            }
            Collection::Array(n) => n,
            Collection::BoundedSequence(bound) => ((take(k) % 3) as usize).min(bound),
            Collection::UnboundedSequence => (take(k) % 3) as usize,
        };
        let items: Vec<Value> = (0..count)
            .map(|_| fill_elem(set, &field.ty.base, k))
            .collect();
        let bytes = matches!(
            field.ty.base,
            BaseType::Primitive(Primitive::Byte | Primitive::Char | Primitive::Uint8)
        );
        let value = if bytes {
            Value::Bytes(
                items
                    .iter()
                    .map(|v| match v {
                        Value::UInt(u) => *u as u8,
                        _ => unreachable!(),
                    })
                    .collect(),
            )
        } else {
            Value::Array(items)
        };
        fields.push((field.name.clone(), value));
    }
    Value::Struct(fields)
}

// ---- Corrupted inputs and their digest -------------------------------------------------------

/// FNV-1a, 64 bits.
fn fnv(hash: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *hash ^= u64::from(*b);
        *hash = hash.wrapping_mul(0x100000001b3);
    }
}

/// Every corruption the programs apply, in their order.
fn corruptions(bytes: &[u8]) -> Vec<Vec<u8>> {
    let body = bytes.len() - 4;
    let mut out = Vec::new();
    for offset in (0..body).step_by(4).filter(|o| o + 4 <= body) {
        let mut b = bytes.to_vec();
        b[4 + offset..8 + offset].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        out.push(b);
    }
    for offset in 0..body.min(512) {
        let mut b = bytes.to_vec();
        b[4 + offset] = 0xff;
        out.push(b);
    }
    out
}

fn rust_digest(round_trip: RustRoundTrip, bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf29ce484222325;
    for corrupted in corruptions(bytes) {
        match round_trip(&corrupted) {
            Ok(again) => {
                fnv(&mut hash, b"B");
                fnv(&mut hash, &again);
            }
            Err(c) => fnv(&mut hash, &[c as u8]),
        }
    }
    hash
}

// ---- The programs ----------------------------------------------------------------------------

fn bound_or(bound: Option<usize>, unbounded: &str) -> String {
    bound.map_or_else(|| unbounded.to_owned(), |b| format!("{b}u"))
}

/// `pkg__kind__Name`.
fn c_name(ty: &TypeName) -> String {
    format!("{}__{}__{}", ty.package, ty.kind.as_str(), ty.name)
}

/// `::pkg::kind::Name`.
fn cpp_name(ty: &TypeName) -> String {
    format!("::{}::{}::{}", ty.package, ty.kind.as_str(), ty.name)
}

fn cpp_number_type(p: Primitive) -> &'static str {
    match p {
        Primitive::Bool => "bool",
        Primitive::Byte => "unsigned char",
        Primitive::Char | Primitive::Uint8 => "std::uint8_t",
        Primitive::Int8 => "std::int8_t",
        Primitive::Int16 => "std::int16_t",
        Primitive::Uint16 => "std::uint16_t",
        Primitive::Int32 => "std::int32_t",
        Primitive::Uint32 => "std::uint32_t",
        Primitive::Int64 => "std::int64_t",
        Primitive::Uint64 => "std::uint64_t",
        Primitive::Float32 => "float",
        Primitive::Float64 => "double",
    }
}

fn c_number_type(p: Primitive) -> &'static str {
    match p {
        Primitive::Bool => "bool",
        Primitive::Byte | Primitive::Char | Primitive::Uint8 => "uint8_t",
        Primitive::Int8 => "int8_t",
        Primitive::Int16 => "int16_t",
        Primitive::Uint16 => "uint16_t",
        Primitive::Int32 => "int32_t",
        Primitive::Uint32 => "uint32_t",
        Primitive::Int64 => "int64_t",
        Primitive::Uint64 => "uint64_t",
        Primitive::Float32 => "float",
        Primitive::Float64 => "double",
    }
}

/// A C++ statement filling the element `v`.
fn cpp_fill_elem(base: &BaseType, v: &str) -> String {
    match base {
        BaseType::Primitive(Primitive::Bool) => format!("{v} = take(k) % 2 == 1;"),
        BaseType::Primitive(Primitive::Float32) => {
            format!("{v} = static_cast<float>(static_cast<double>(take(k)) * 0.25 - 10.0);")
        }
        BaseType::Primitive(Primitive::Float64) => {
            format!("{v} = static_cast<double>(take(k)) * 0.25 - 10.0;")
        }
        BaseType::Primitive(p) => format!(
            "{v} = static_cast<{}>(take(k) * {MULTIPLIER}ull);",
            cpp_number_type(*p)
        ),
        BaseType::String { bound } => format!(
            "{v} = text(\"s\", take(k), {});",
            bound_or(*bound, "SIZE_MAX")
        ),
        BaseType::WString { bound } => {
            format!("{v} = wtext(take(k), {});", bound_or(*bound, "SIZE_MAX"))
        }
        BaseType::Named(_) => format!("fill({v}, k);"),
    }
}

fn c_fill_elem(base: &BaseType, v: &str) -> String {
    match base {
        BaseType::Primitive(Primitive::Bool) => format!("{v} = take(k) % 2 == 1;"),
        BaseType::Primitive(Primitive::Float32) => {
            format!("{v} = (float)((double)take(k) * 0.25 - 10.0);")
        }
        BaseType::Primitive(Primitive::Float64) => {
            format!("{v} = (double)take(k) * 0.25 - 10.0;")
        }
        BaseType::Primitive(p) => {
            format!("{v} = ({})(take(k) * {MULTIPLIER}ull);", c_number_type(*p))
        }
        BaseType::String { bound } => format!(
            "text(&{v}, \"s\", take(k), {});",
            bound_or(*bound, "SIZE_MAX")
        ),
        BaseType::WString { bound } => {
            format!("wtext(&{v}, take(k), {});", bound_or(*bound, "SIZE_MAX"))
        }
        BaseType::Named(ty) => format!("fill_{}(&{v}, k);", c_name(ty)),
    }
}

fn c_sequence_prefix(base: &BaseType) -> String {
    match base {
        BaseType::Primitive(p) => format!(
            "roslite__{}",
            match p {
                Primitive::Bool => "boolean",
                Primitive::Byte => "octet",
                Primitive::Char | Primitive::Uint8 => "uint8",
                Primitive::Float32 => "float",
                Primitive::Float64 => "double",
                other => other.keyword(),
            }
        ),
        BaseType::String { .. } => "roslite__String".to_owned(),
        BaseType::WString { .. } => "roslite__U16String".to_owned(),
        BaseType::Named(ty) => c_name(ty),
    }
}

const CPP_PRELUDE: &str = r#"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

// The largest single allocation since the last reset: decoding corrupted input must not
// allocate for counts the input cannot hold.
static std::size_t g_largest = 0;

void * operator new(std::size_t n)
{
  if (n > g_largest) {
    g_largest = n;
  }
  void * p = std::malloc(n != 0 ? n : 1);
  if (p == nullptr) {
    throw std::bad_alloc();
  }
  return p;
}

void operator delete(void * p) noexcept {std::free(p);}
void operator delete(void * p, std::size_t) noexcept {std::free(p);}

namespace {

std::uint64_t take(std::uint64_t & k) {return k++;}

std::string text(const char * prefix, std::uint64_t k, std::size_t bound)
{
  std::string s = prefix + std::to_string(k);
  if (bound == SIZE_MAX) {
    s += "\xc3\xa9";
  } else if (s.size() > bound) {
    s.resize(bound);
  }
  return s;
}

std::u16string wtext(std::uint64_t k, std::size_t bound)
{
  std::string ascii = "w" + std::to_string(k);
  std::u16string s(ascii.begin(), ascii.end());
  if (bound == SIZE_MAX) {
    s += u'\u00e9';
  } else if (s.size() > bound) {
    s.resize(bound);
  }
  return s;
}

void fnv(std::uint64_t & h, const std::uint8_t * p, std::size_t n)
{
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
}

void fnv_char(std::uint64_t & h, char c)
{
  std::uint8_t b = static_cast<std::uint8_t>(c);
  fnv(h, &b, 1);
}
"#;

const CPP_RUN: &str = r#"
template<class T>
void run()
{
  T m;
  std::uint64_t k = 1;
  fill(m, k);
  std::vector<std::uint8_t> bytes;
  bool encoded = roslite::encode(m, bytes);
  T back;
  std::vector<std::uint8_t> again;
  bool round = encoded && roslite::decode(bytes, back) && back == m && !(back != m) &&
    roslite::encode(back, again) && again == bytes;
  bool truncated = true;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    T t;
    if (roslite::decode(bytes.data(), n, t)) {
      truncated = false;
    }
  }
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto one = [&](const std::vector<std::uint8_t> & c) {
      T t;
      std::vector<std::uint8_t> out;
      if (!roslite::decode(c, t)) {
        fnv_char(h, 'D');
      } else if (!roslite::encode(t, out)) {
        fnv_char(h, 'E');
      } else {
        fnv_char(h, 'B');
        fnv(h, out.data(), out.size());
      }
    };
  std::size_t body = bytes.size() - 4;
  g_largest = 0;
  for (std::size_t o = 0; o + 4 <= body; o += 4) {
    std::vector<std::uint8_t> c = bytes;
    c[4 + o] = 0xf0;
    c[5 + o] = 0xff;
    c[6 + o] = 0xff;
    c[7 + o] = 0xff;
    one(c);
  }
  for (std::size_t o = 0; o < body && o < 512; ++o) {
    std::vector<std::uint8_t> c = bytes;
    c[4 + o] = 0xff;
    one(c);
  }
  std::printf("%s ", roslite::message_traits<T>::type_name());
  for (std::uint8_t b : bytes) {
    std::printf("%02x", b);
  }
  std::printf(" %d %d %016llx %zu\n", round ? 1 : 0, truncated ? 1 : 0,
    static_cast<unsigned long long>(h), g_largest);
}

}  // namespace
"#;

const C_PRELUDE: &str = r#"
#include <stdio.h>

static uint64_t take(uint64_t *k) {return (*k)++;}

static void text(roslite__String *s, const char *prefix, uint64_t k, size_t bound)
{
  char buf[64];
  int n = snprintf(buf, sizeof(buf), "%s%llu%s", prefix, (unsigned long long)k,
    bound == SIZE_MAX ? "\xc3\xa9" : "");
  size_t len = (size_t)n;
  if (len > bound) {
    len = bound;
  }
  roslite__String__assignn(s, buf, len);
}

static void wtext(roslite__U16String *s, uint64_t k, size_t bound)
{
  char buf[64];
  uint16_t units[64];
  int n = snprintf(buf, sizeof(buf), "w%llu", (unsigned long long)k);
  size_t len = 0;
  for (int i = 0; i < n; ++i) {
    units[len++] = (uint16_t)buf[i];
  }
  if (bound == SIZE_MAX) {
    units[len++] = 0xe9;
  } else if (len > bound) {
    len = bound;
  }
  roslite__U16String__assignn(s, units, len);
}

static void fnv(uint64_t *h, const uint8_t *p, size_t n)
{
  for (size_t i = 0; i < n; ++i) {
    *h ^= p[i];
    *h *= 0x100000001b3ull;
  }
}

static void fnv_char(uint64_t *h, char c)
{
  uint8_t b = (uint8_t)c;
  fnv(h, &b, 1);
}

#define ONE(T, C, LEN) \
  do { \
    T t; \
    T##__init(&t); \
    if (!T##__decode(&t, (C), (LEN))) { \
      fnv_char(&h, 'D'); \
    } else if (!T##__encode(&t, &out)) { \
      fnv_char(&h, 'E'); \
    } else { \
      fnv_char(&h, 'B'); \
      fnv(&h, out.data, out.length); \
    } \
    T##__fini(&t); \
  } while (0)

#define RUN(T) \
  do { \
    T m; \
    T back; \
    roslite_cdr_buffer bytes = {0}; \
    roslite_cdr_buffer again = {0}; \
    roslite_cdr_buffer out = {0}; \
    uint64_t k = 1; \
    T##__init(&m); \
    fill_##T(&m, &k); \
    bool encoded = T##__encode(&m, &bytes); \
    T##__init(&back); \
    bool round = encoded && T##__decode(&back, bytes.data, bytes.length) && \
      T##__are_equal(&back, &m) && T##__encode(&back, &again) && \
      again.length == bytes.length && memcmp(again.data, bytes.data, bytes.length) == 0; \
    bool truncated = true; \
    for (size_t n = 0; n < bytes.length; ++n) { \
      T t; \
      T##__init(&t); \
      if (T##__decode(&t, bytes.data, n)) { \
        truncated = false; \
      } \
      T##__fini(&t); \
    } \
    uint64_t h = 0xcbf29ce484222325ull; \
    size_t body = bytes.length - 4; \
    uint8_t *c = (uint8_t *)malloc(bytes.length); \
    for (size_t o = 0; o + 4 <= body; o += 4) { \
      memcpy(c, bytes.data, bytes.length); \
      c[4 + o] = 0xf0; \
      c[5 + o] = 0xff; \
      c[6 + o] = 0xff; \
      c[7 + o] = 0xff; \
      ONE(T, c, bytes.length); \
    } \
    for (size_t o = 0; o < body && o < 512; ++o) { \
      memcpy(c, bytes.data, bytes.length); \
      c[4 + o] = 0xff; \
      ONE(T, c, bytes.length); \
    } \
    free(c); \
    printf("%s ", T##__TYPE_NAME); \
    for (size_t i = 0; i < bytes.length; ++i) { \
      printf("%02x", bytes.data[i]); \
    } \
    printf(" %d %d %016llx 0\n", round ? 1 : 0, truncated ? 1 : 0, (unsigned long long)h); \
    T##__fini(&m); \
    T##__fini(&back); \
    roslite_cdr_buffer_fini(&bytes); \
    roslite_cdr_buffer_fini(&again); \
    roslite_cdr_buffer_fini(&out); \
  } while (0)
"#;

fn cpp_program(set: &InterfaceSet, headers: &[PathBuf], names: &[TypeName]) -> String {
    let mut p = String::new();
    for header in headers {
        writeln!(p, "#include \"{}\"", header.display()).unwrap();
    }
    p.push_str(CPP_PRELUDE);
    for name in names {
        writeln!(p, "void fill({} & m, std::uint64_t & k);", cpp_name(name)).unwrap();
    }
    for name in names {
        let spec = set.message(name).unwrap();
        writeln!(
            p,
            "void fill({} & m, std::uint64_t & k)\n{{",
            cpp_name(name)
        )
        .unwrap();
        p.push_str("  (void)m;\n  (void)k;\n");
        for field in &spec.fields {
            let m = format!("m.{}", field.name);
            let elem = cpp_fill_elem(&field.ty.base, "e");
            match field.ty.collection {
                Collection::Single => {
                    writeln!(p, "  {}", cpp_fill_elem(&field.ty.base, &m)).unwrap()
                }
                Collection::Array(_) => writeln!(p, "  for (auto && e : {m}) {{{elem}}}").unwrap(),
                Collection::BoundedSequence(_) | Collection::UnboundedSequence => {
                    let bound = match field.ty.collection {
                        Collection::BoundedSequence(b) => format!("{b}u"),
                        _ => "SIZE_MAX".to_owned(),
                    };
                    writeln!(
                        p,
                        "  {{std::size_t n = take(k) % 3; if (n > {bound}) {{n = {bound};}} \
                         {m}.resize(n); for (auto && e : {m}) {{{elem}}}}}"
                    )
                    .unwrap();
                }
            }
        }
        p.push_str("}\n");
    }
    p.push_str(CPP_RUN);
    p.push_str("int main()\n{\n");
    for name in names {
        writeln!(p, "  run<{}>();", cpp_name(name)).unwrap();
    }
    p.push_str("  return 0;\n}\n");
    p
}

fn c_program(set: &InterfaceSet, headers: &[PathBuf], names: &[TypeName]) -> String {
    let mut p = String::new();
    for header in headers {
        writeln!(p, "#include \"{}\"", header.display()).unwrap();
    }
    p.push_str(C_PRELUDE);
    for name in names {
        let n = c_name(name);
        writeln!(p, "static void fill_{n}({n} *m, uint64_t *k);").unwrap();
    }
    for name in names {
        let spec = set.message(name).unwrap();
        let n = c_name(name);
        writeln!(p, "static void fill_{n}({n} *m, uint64_t *k)\n{{").unwrap();
        p.push_str("  (void)m;\n  (void)k;\n");
        for field in &spec.fields {
            let m = format!("m->{}", field.name);
            match field.ty.collection {
                Collection::Single => writeln!(p, "  {}", c_fill_elem(&field.ty.base, &m)).unwrap(),
                Collection::Array(count) => writeln!(
                    p,
                    "  for (size_t i = 0; i < {count}; ++i) {{{}}}",
                    c_fill_elem(&field.ty.base, &format!("{m}[i]"))
                )
                .unwrap(),
                Collection::BoundedSequence(_) | Collection::UnboundedSequence => {
                    let bound = match field.ty.collection {
                        Collection::BoundedSequence(b) => format!("{b}u"),
                        _ => "SIZE_MAX".to_owned(),
                    };
                    let seq = c_sequence_prefix(&field.ty.base);
                    writeln!(
                        p,
                        "  {{size_t n = take(k) % 3; if (n > {bound}) {{n = {bound};}} \
                         {seq}__Sequence__fini(&{m}); {seq}__Sequence__init(&{m}, n); \
                         for (size_t i = 0; i < n; ++i) {{{}}}}}",
                        c_fill_elem(&field.ty.base, &format!("{m}.data[i]"))
                    )
                    .unwrap();
                }
            }
        }
        p.push_str("}\n");
    }
    p.push_str("int main(void)\n{\n");
    for name in names {
        writeln!(p, "  RUN({});", c_name(name)).unwrap();
    }
    p.push_str("  return 0;\n}\n");
    p
}

/// One line of a program's output.
#[derive(Debug, PartialEq)]
struct Report {
    bytes: Vec<u8>,
    round_trip: bool,
    truncations_refused: bool,
    corruption_digest: u64,
    /// The largest single allocation while decoding corrupted input (C++ only).
    largest_allocation: usize,
}

fn parse_output(stdout: &[u8]) -> BTreeMap<String, Report> {
    let text = String::from_utf8(stdout.to_vec()).unwrap();
    text.lines()
        .map(|line| {
            let parts: Vec<&str> = line.split(' ').collect();
            assert_eq!(parts.len(), 6, "{line}");
            let hex = parts[1];
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            (
                parts[0].to_owned(),
                Report {
                    bytes,
                    round_trip: parts[2] == "1",
                    truncations_refused: parts[3] == "1",
                    corruption_digest: u64::from_str_radix(parts[4], 16).unwrap(),
                    largest_allocation: parts[5].parse().unwrap(),
                },
            )
        })
        .collect()
}

/// Generates the headers, compiles and runs both programs once per test run.
fn outputs() -> &'static (BTreeMap<String, Report>, BTreeMap<String, Report>) {
    static RUN: OnceLock<(BTreeMap<String, Report>, BTreeMap<String, Report>)> = OnceLock::new();
    RUN.get_or_init(|| {
        let set = builtin_set();
        let names = message_names(&set);
        let interfaces: Vec<TypeName> = set.interfaces().map(|i| i.name().clone()).collect();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("native_types");
        let mut results = Vec::new();
        for lang in [Lang::Cpp, Lang::C] {
            let include = dir.join(lang.extension());
            let files = native::generate(&set, &interfaces, lang).unwrap();
            native::write(&include, &files).unwrap();
            let headers: Vec<PathBuf> = files[1..].iter().map(|f| f.path.clone()).collect();
            let (source, compiler, std) = match lang {
                Lang::Cpp => (cpp_program(&set, &headers, &names), "c++", "-std=c++17"),
                Lang::C => (c_program(&set, &headers, &names), "cc", "-std=c11"),
            };
            let source_path = dir.join(format!(
                "all_types.{}",
                if lang == Lang::Cpp { "cpp" } else { "c" }
            ));
            std::fs::write(&source_path, source).unwrap();
            let exe = dir.join(format!("all_types_{}", lang.extension()));
            let status = Command::new(compiler)
                .args([std, "-O1", "-Wall", "-Wextra", "-Werror", "-o"])
                .arg(&exe)
                .arg(&source_path)
                .arg("-I")
                .arg(&include)
                .status()
                .unwrap_or_else(|e| panic!("{compiler} runs (installed by cargo xtask test): {e}"));
            assert!(
                status.success(),
                "compiling {} failed",
                source_path.display()
            );
            let output = Command::new(&exe).output().unwrap();
            assert!(
                output.status.success(),
                "{} failed: {output:?}",
                exe.display()
            );
            results.push(parse_output(&output.stdout));
        }
        let c = results.pop().unwrap();
        let cpp = results.pop().unwrap();
        (cpp, c)
    })
}

#[test]
fn cpp_and_c_encode_every_built_in_type_as_rust_does() {
    let set = builtin_set();
    let (cpp, c) = outputs();
    let rust = rust_types();
    let mut checked = 0;
    for name in message_names(&set) {
        let key = name.to_string();
        let report = cpp
            .get(&key)
            .unwrap_or_else(|| panic!("{key}: no C++ output"));
        let mut k = 1;
        let value = fill_struct(&set, set.message(&name).unwrap(), &mut k);
        let expected = dynamic::encode(&set, &name, &value, Endianness::Little).unwrap();
        assert_eq!(
            report.bytes, expected,
            "{key}: C++ bytes differ from the filled value's"
        );
        let round_trip = rust[key.as_str()];
        assert_eq!(
            round_trip(&report.bytes),
            Ok(report.bytes.clone()),
            "{key}: the Rust type does not encode the C++ bytes again"
        );
        assert!(report.round_trip, "{key}: C++ decode(encode(x)) != x");
        assert!(
            report.truncations_refused,
            "{key}: C++ accepted a truncated buffer"
        );
        let c_report = c.get(&key).unwrap_or_else(|| panic!("{key}: no C output"));
        assert_eq!(c_report.bytes, report.bytes, "{key}: C bytes differ");
        assert!(c_report.round_trip, "{key}: C decode(encode(x)) != x");
        assert!(
            c_report.truncations_refused,
            "{key}: C accepted a truncated buffer"
        );
        for n in 0..report.bytes.len() {
            assert_eq!(
                round_trip(&report.bytes[..n]),
                Err('D'),
                "{key}: Rust, {n} bytes"
            );
        }
        let digest = rust_digest(round_trip, &report.bytes);
        assert_eq!(
            report.corruption_digest, digest,
            "{key}: C++ treats corruptions unlike Rust"
        );
        assert_eq!(
            c_report.corruption_digest, digest,
            "{key}: C treats corruptions unlike Rust"
        );
        checked += 1;
    }
    assert_eq!(checked, rust.len());
    eprintln!("{checked} message types: C++ and C bytes equal to Rust's");
}
