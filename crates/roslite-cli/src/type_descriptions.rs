//! The REP 2011 type descriptions of the types the tool's own endpoints use, built from the
//! definitions it loaded (`roslite_msg_gen::described`), so that its node answers
//! `~/get_type_description` for them as an rclpy tool's node does (generated types carry
//! theirs; the tool's types are known only at run time).

use anyhow::Context as _;
use roslite::msgs::description::TypeDescription;
use roslite_msg_gen::ast::TypeName;
use roslite_msg_gen::registry::InterfaceSet;

/// The description of `ty` in `set`, made once and kept for the process.
///
/// # Errors
/// When `ty`, or a type it refers to, has no definition in `set`.
pub(crate) fn leaked(
    set: &InterfaceSet,
    ty: &TypeName,
) -> anyhow::Result<&'static TypeDescription> {
    roslite_msg_gen::described::leaked(set, ty).with_context(|| format!("cannot describe '{ty}'"))
}
