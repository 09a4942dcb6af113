//! The key layouts ([`roslite_cdr::key::KeyStruct`]) of keyed types: messages with IDL `@key`
//! members, for endpoints to announce themselves keyed and for writers to send key hashes.
//!
//! A message is keyed when one of its own members is a key (rosidl's type supports look at
//! the message's direct members only: `test_msgs/msg/NonKeyedWithNestedKey` holds a keyed
//! message and is keyless). Every struct the layout reaches is described in full, since the
//! key members must be found behind the others in a sample; an empty message is described as
//! the one `uint8` rosidl serializes for it.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use roslite_cdr::key::{KeyCollection, KeyElement, KeyMember, KeyStruct};

use crate::ast::{BaseType, Collection, MessageSpec, Primitive, TypeName};
use crate::registry::InterfaceSet;

/// A layout as built from definitions, before it is made `'static`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Tree {
    pub(crate) members: Vec<TreeMember>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TreeMember {
    pub(crate) in_key: bool,
    pub(crate) element: TreeElement,
    pub(crate) collection: KeyCollection,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum TreeElement {
    Primitive { size: u8 },
    String { bound: Option<u32> },
    WString { bound: Option<u32> },
    Struct(Tree),
}

/// The layout of `message` if it is keyed; `Err` names a nested type `resolve` does not know.
pub(crate) fn tree<'a>(
    message: &MessageSpec,
    resolve: &dyn Fn(&TypeName) -> Option<&'a MessageSpec>,
) -> Result<Option<Tree>, TypeName> {
    if !message.is_keyed() {
        return Ok(None);
    }
    struct_tree(message, resolve).map(Some)
}

fn struct_tree<'a>(
    message: &MessageSpec,
    resolve: &dyn Fn(&TypeName) -> Option<&'a MessageSpec>,
) -> Result<Tree, TypeName> {
    if message.fields.is_empty() {
        return Ok(Tree {
            members: vec![TreeMember {
                in_key: true,
                element: TreeElement::Primitive { size: 1 },
                collection: KeyCollection::Single,
            }],
        });
    }
    let keyed = message.is_keyed();
    let mut members = Vec::with_capacity(message.fields.len());
    for field in &message.fields {
        let element = match &field.ty.base {
            BaseType::Primitive(p) => TreeElement::Primitive {
                size: primitive_size(*p),
            },
            BaseType::String { bound } => TreeElement::String {
                bound: bound.map(to_u32),
            },
            BaseType::WString { bound } => TreeElement::WString {
                bound: bound.map(to_u32),
            },
            BaseType::Named(nested) => {
                let spec = resolve(nested).ok_or_else(|| nested.clone())?;
                TreeElement::Struct(struct_tree(spec, resolve)?)
            }
        };
        let collection = match field.ty.collection {
            Collection::Single => KeyCollection::Single,
            Collection::Array(n) => KeyCollection::Array(to_u32(n)),
            Collection::BoundedSequence(n) => KeyCollection::BoundedSequence(to_u32(n)),
            Collection::UnboundedSequence => KeyCollection::UnboundedSequence,
        };
        members.push(TreeMember {
            in_key: !keyed || field.key,
            element,
            collection,
        });
    }
    Ok(Tree { members })
}

fn primitive_size(p: Primitive) -> u8 {
    // Sizes are 1, 2, 4 or 8.
    p.size() as u8
}

/// Sizes and bounds are at most `u32::MAX` (the parsers refuse larger ones).
fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The key layout of the message `name` of `set`, `None` when it is keyless or unknown.
///
/// Layouts live for the rest of the process (endpoints hold them as `'static`, as generated
/// types do); each distinct layout is made once.
pub fn key_layout(set: &InterfaceSet, name: &TypeName) -> Option<&'static KeyStruct> {
    let message = set.message(name)?;
    let tree = tree(message, &|n: &TypeName| set.message(n)).ok()??;
    static MADE: OnceLock<Mutex<HashMap<Tree, &'static KeyStruct>>> = OnceLock::new();
    let mut made = MADE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(layout) = made.get(&tree) {
        return Some(layout);
    }
    let layout = leak(&tree);
    made.insert(tree, layout);
    Some(layout)
}

fn leak(tree: &Tree) -> &'static KeyStruct {
    let members: Vec<KeyMember> = tree
        .members
        .iter()
        .map(|m| KeyMember {
            in_key: m.in_key,
            element: match &m.element {
                TreeElement::Primitive { size } => KeyElement::Primitive { size: *size },
                TreeElement::String { bound } => KeyElement::String { bound: *bound },
                TreeElement::WString { bound } => KeyElement::WString { bound: *bound },
                TreeElement::Struct(nested) => KeyElement::Struct(leak(nested)),
            },
            collection: m.collection,
        })
        .collect();
    Box::leak(Box::new(KeyStruct {
        members: Box::leak(members.into_boxed_slice()),
    }))
}

/// The layout as a Rust constant expression of type `KeyStruct`, for generated code;
/// `cdr` is the path of `roslite_cdr` as the generated code sees it.
pub(crate) fn rust_expr(tree: &Tree, cdr: &str, indent: &str) -> String {
    let mut out = format!("{cdr}::key::KeyStruct {{\n{indent}    members: &[\n");
    for member in &tree.members {
        let inner = format!("{indent}        ");
        let element = match &member.element {
            TreeElement::Primitive { size } => {
                format!("{cdr}::key::KeyElement::Primitive {{ size: {size} }}")
            }
            TreeElement::String { bound } => {
                format!("{cdr}::key::KeyElement::String {{ bound: {bound:?} }}")
            }
            TreeElement::WString { bound } => {
                format!("{cdr}::key::KeyElement::WString {{ bound: {bound:?} }}")
            }
            TreeElement::Struct(nested) => format!(
                "{cdr}::key::KeyElement::Struct(&{})",
                rust_expr(nested, cdr, &format!("{inner}    "))
            ),
        };
        let collection = match member.collection {
            KeyCollection::Single => "Single".to_owned(),
            KeyCollection::Array(n) => format!("Array({n})"),
            KeyCollection::BoundedSequence(n) => format!("BoundedSequence({n})"),
            KeyCollection::UnboundedSequence => "UnboundedSequence".to_owned(),
        };
        out.push_str(&format!(
            "{inner}{cdr}::key::KeyMember {{\n\
             {inner}    in_key: {},\n\
             {inner}    element: {element},\n\
             {inner}    collection: {cdr}::key::KeyCollection::{collection},\n\
             {inner}}},\n",
            member.in_key
        ));
    }
    out.push_str(&format!("{indent}    ],\n{indent}}}"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::InterfaceKind;

    fn set() -> InterfaceSet {
        let mut set = InterfaceSet::new();
        let idl = |name: &str, body: &str| {
            format!("module k {{ module msg {{ struct {name} {{ {body} }}; }}; }};")
        };
        for (name, body) in [
            ("KeyedString", "@key string key; string value;"),
            (
                "NonKeyedWithNestedKey",
                "k::msg::KeyedString nested_data; int32 some_int;",
            ),
            (
                "ComplexNestedKey",
                "@key uint32 uint32_key; @key k::msg::NonKeyedWithNestedKey nested_keys; \
                 double float64_value;",
            ),
        ] {
            set.add_idl_source("k", InterfaceKind::Msg, name, &idl(name, body), name)
                .unwrap();
        }
        set
    }

    #[test]
    fn keyed_types_get_a_layout_keyless_ones_none() {
        let set = set();
        let tn = |s: &str| TypeName::parse(s).unwrap();
        assert!(key_layout(&set, &tn("k/msg/NonKeyedWithNestedKey")).is_none());
        let complex = key_layout(&set, &tn("k/msg/ComplexNestedKey")).unwrap();
        assert_eq!(
            complex.members.iter().map(|m| m.in_key).collect::<Vec<_>>(),
            [true, true, false]
        );
        let KeyElement::Struct(nested) = &complex.members[1].element else {
            panic!("nested_keys is a struct")
        };
        // A keyless struct inside a key is all key; the keyed one inside it only its key.
        assert!(nested.members.iter().all(|m| m.in_key));
        let KeyElement::Struct(keyed_string) = &nested.members[0].element else {
            panic!("nested_data is a struct")
        };
        assert_eq!(
            keyed_string
                .members
                .iter()
                .map(|m| m.in_key)
                .collect::<Vec<_>>(),
            [true, false]
        );
        // The same layout is made once.
        assert!(std::ptr::eq(
            complex,
            key_layout(&set, &tn("k/msg/ComplexNestedKey")).unwrap()
        ));
        // What rclpy put in PID_KEY_HASH for { 5, { { "nk", "nv" }, 9 }, 1.5 }.
        let sample = [
            0x00, 0x01, 0x00, 0x00, 5, 0, 0, 0, 3, 0, 0, 0, b'n', b'k', 0, 0, 3, 0, 0, 0, b'n',
            b'v', 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f,
        ];
        assert_eq!(
            complex.key_of(&sample).unwrap(),
            [5, 0, 0, 0, 3, 0, 0, 0, b'n', b'k', 0, 0, 9, 0, 0, 0]
        );
    }
}
