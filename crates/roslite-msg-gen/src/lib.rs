//! Reads ROS 2 interface definitions and turns them into what roslite needs.
//!
//! Layers:
//! - [`ast`]: the resolved model of `.msg`/`.srv`/`.action` and `.idl` files.
//! - `parse`: the grammar of `ros2/design` article 116, and the IDL subset rosidl reads, with
//!   errors that name file, line and what was expected.
//! - `key`: the key layouts of keyed (IDL `@key`) types, for DDS endpoints and key hashes.
//! - `hash`: REP-2011 type descriptions and RIHS01 hashes, as `rosidl_generator_type_description`.
//! - `rust`: Rust code generation against `roslite-msgs`' traits, for checked-in packages and
//!   for user crates' `build.rs`.
//! - `dynamic`: encode/decode of any known type from its definition, for tools.
//! - `native`: header-only C and C++ message types (rosidl's names) with CDR encode/decode,
//!   for nodes written against roslite's C ABI.
//! - `bundle`: one text carrying an interface's definition and those it uses, which generated
//!   C and C++ code hands the runtime for a type roslite does not ship.
//! - `described` (feature `descriptions`): a type's REP 2011 description as the runtime's
//!   values, for endpoints of types known only at run time.

pub mod ast;
pub mod build;
pub mod bundle;
#[cfg(feature = "descriptions")]
pub mod described;
pub mod dynamic;
pub mod hash;
pub mod key;
pub mod native;
pub mod parse;
pub mod python;
pub mod registry;
pub mod rust;
