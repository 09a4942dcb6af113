//! REP 2011 type descriptions as a node serves them on `~/get_type_description`
//! (`type_description_interfaces/srv/GetTypeDescription`): a type's own description, those of
//! every type it refers to, and the definition each was read from.
//!
//! Generated types carry theirs as [`crate::Message::TYPE_DESCRIPTION`] (and
//! [`crate::Service::TYPE_DESCRIPTION`], [`crate::Action::TYPE_DESCRIPTION`]): a constant per
//! type whose referenced types point at the constants of those types, so a program holds the
//! descriptions of the types it uses and no others. Types known only at run time (tools, the C
//! ABI) can build one and leak it, as they leak their type names.
//!
//! The data is what rosidl's `<type>__get_type_description` and
//! `<type>__get_type_description_sources` return: the same fields the RIHS01 hash is computed
//! from, plus each field's default value and each type's definition text.

/// One field of an [`IndividualTypeDescription`] (`type_description_interfaces/msg/Field` with
/// its `FieldType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldDescription {
    pub name: &'static str,
    /// A `type_description_interfaces/msg/FieldType` id (`FIELD_TYPE_*`).
    pub type_id: u8,
    /// The length of an array, the bound of a bounded sequence; 0 otherwise.
    pub capacity: u64,
    /// The bound of a bounded string (or of the strings of an array or sequence); 0 otherwise.
    pub string_capacity: u64,
    /// The full name of a message-typed field's type (`builtin_interfaces/msg/Time`); empty
    /// otherwise.
    pub nested_type_name: &'static str,
    /// The default value as rosidl's generated C code states it (`1.0`, `True`,
    /// `(0, 1, 2)`); empty for none.
    pub default_value: &'static str,
}

/// One type's own description (`type_description_interfaces/msg/IndividualTypeDescription`)
/// and where it was defined (`type_description_interfaces/msg/TypeSource`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndividualTypeDescription {
    /// `geometry_msgs/msg/Twist`.
    pub type_name: &'static str,
    pub fields: &'static [FieldDescription],
    /// The language of the definition: `msg`, `srv`, `action` or `idl`; `implicit` for the
    /// types rosidl derives from a service or action (`_Request`, `_Goal`, `_SendGoal`, ...).
    pub encoding: &'static str,
    /// `TypeSource.raw_file_contents`: the definition file's text as rosidl's generated C code
    /// holds it (for most files, the text without its last line break); empty for an implicit
    /// type.
    pub raw_file_contents: &'static str,
}

/// A type's full description (`type_description_interfaces/msg/TypeDescription`): its own and
/// those of every type it refers to, directly or not, sorted by type name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TypeDescription {
    pub type_description: &'static IndividualTypeDescription,
    pub referenced_type_descriptions: &'static [&'static IndividualTypeDescription],
}

/// The individual description of a type whose full description is `description`, for
/// generated code to refer to another type's description from a constant.
///
/// # Panics
/// At compile time, when `description` is `None`: generated types always have one, so only a
/// generated type referring to a hand-written type can cause it.
pub const fn individual(
    description: Option<&'static TypeDescription>,
) -> &'static IndividualTypeDescription {
    match description {
        Some(description) => description.type_description,
        None => panic!("a generated type refers to a type without a type description"),
    }
}

/// `text` without one final `\n`: what rosidl embeds of a definition file (its lines joined
/// by `\n`), for generated code to take it from the file itself with `include_str!`.
pub const fn without_final_line_break(text: &'static str) -> &'static str {
    match text.as_bytes() {
        [rest @ .., b'\n'] => match core::str::from_utf8(rest) {
            Ok(rest) => rest,
            Err(_) => text,
        },
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_final_line_break_goes_and_nothing_else() {
        assert_eq!(without_final_line_break("int32 data\n"), "int32 data");
        assert_eq!(without_final_line_break("int32 data"), "int32 data");
        assert_eq!(without_final_line_break("a\n\n"), "a\n");
        assert_eq!(without_final_line_break("é\n"), "é");
        assert_eq!(without_final_line_break(""), "");
        const IN_A_CONSTANT: &str = without_final_line_break("x\n");
        assert_eq!(IN_A_CONSTANT, "x");
    }
}
