//! ROS 2's `test_msgs` package (version 2.3.0, Kilted) as Rust types: the messages and services
//! of `msg/` and `srv/`, vendored from the package with its licence (`LICENSE-Apache-2.0.txt`).
//!
//! `build.rs` generates them with `roslite_msg_gen::build::run`, exactly as a user crate gets
//! its own types, so the conformance suite (`crates/roslite-cli/tests/conformance.rs`) checks
//! the code users get. The types test_msgs defines only in `.idl` (`KeyedLong`,
//! `KeyedString`, `ComplexNestedKey`, `NonKeyedWithNestedKey`) are not here: roslite-msgs
//! ships them (`roslite_msgs::test_msgs::msg`), and the suite uses those.

include!(concat!(env!("OUT_DIR"), "/roslite_interfaces.rs"));
