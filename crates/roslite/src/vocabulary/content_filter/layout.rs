//! What a filter needs of a message type: each field's name, element type and collection, read
//! from its REP 2011 type description (`type_description_interfaces/msg/FieldType` ids), with
//! message-typed fields pointing at the layout of their type.

use roslite_msgs::description::{IndividualTypeDescription, TypeDescription};

use super::error::ContentFilterErrorKind;

/// Primitive field types, as CDR lays them out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Primitive {
    Bool,
    /// IDL `char` (a `.msg` `char` is `uint8`).
    Char,
    Byte,
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Float32,
    Float64,
}

impl Primitive {
    /// Size and CDR alignment in bytes.
    pub fn size(self) -> usize {
        match self {
            Self::Bool | Self::Char | Self::Byte | Self::Int8 | Self::Uint8 => 1,
            Self::Int16 | Self::Uint16 => 2,
            Self::Int32 | Self::Uint32 | Self::Float32 => 4,
            Self::Int64 | Self::Uint64 | Self::Float64 => 8,
        }
    }

    /// The IDL name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bool => "boolean",
            Self::Char => "char",
            Self::Byte => "byte",
            Self::Int8 => "int8",
            Self::Uint8 => "uint8",
            Self::Int16 => "int16",
            Self::Uint16 => "uint16",
            Self::Int32 => "int32",
            Self::Uint32 => "uint32",
            Self::Int64 => "int64",
            Self::Uint64 => "uint64",
            Self::Float32 => "float32",
            Self::Float64 => "float64",
        }
    }
}

/// The type of one value of a field (an element, for an array or sequence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Element {
    Primitive(Primitive),
    /// A string; the bound is only checked by decoding, not by a filter.
    String,
    WString,
    /// A message: the index of its [`TypeLayout`] in [`Layout::types`].
    Message(usize),
    /// A type filters cannot read or skip (long double, wchar, fixed strings): its name.
    Unsupported(&'static str),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Collection {
    Single,
    Array(u64),
    /// A sequence with this bound.
    BoundedSequence(u64),
    Sequence,
}

#[derive(Clone, Debug)]
pub(super) struct FieldLayout {
    pub name: &'static str,
    pub element: Element,
    pub collection: Collection,
}

#[derive(Clone, Debug)]
pub(super) struct TypeLayout {
    /// `geometry_msgs/msg/Point`.
    pub name: &'static str,
    pub fields: Vec<FieldLayout>,
}

/// Every type a message type is made of, the message type first.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    pub types: Vec<TypeLayout>,
}

impl Layout {
    /// The layout of the type `description` describes, and of each type it refers to.
    ///
    /// # Errors
    /// [`ContentFilterErrorKind::IncompleteTypeDescription`] if a field refers to a type the
    /// description does not hold.
    pub fn of(description: &TypeDescription) -> Result<Self, ContentFilterErrorKind> {
        let individual: Vec<&IndividualTypeDescription> =
            std::iter::once(description.type_description)
                .chain(description.referenced_type_descriptions.iter().copied())
                .collect();
        let types = individual
            .iter()
            .map(|ty| {
                let fields = ty
                    .fields
                    .iter()
                    .map(|field| {
                        let (element, collection) = split_type_id(field.type_id, field.capacity);
                        let element = match element {
                            None => {
                                let Some(at) = individual
                                    .iter()
                                    .position(|t| t.type_name == field.nested_type_name)
                                else {
                                    return Err(
                                        ContentFilterErrorKind::IncompleteTypeDescription {
                                            missing: field.nested_type_name.to_owned(),
                                        },
                                    );
                                };
                                Element::Message(at)
                            }
                            Some(element) => element,
                        };
                        Ok(FieldLayout {
                            name: field.name,
                            element,
                            collection,
                        })
                    })
                    .collect::<Result<_, _>>()?;
                Ok(TypeLayout {
                    name: ty.type_name,
                    fields,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { types })
    }
}

/// A `FieldType` id (1-48 single values, +48 arrays, +96 bounded and +144 unbounded
/// sequences) as its element (`None` for a message, `FIELD_TYPE_NESTED_TYPE`) and collection.
fn split_type_id(type_id: u8, capacity: u64) -> (Option<Element>, Collection) {
    let id = type_id.max(1) - 1;
    let collection = match id / 48 {
        0 => Collection::Single,
        1 => Collection::Array(capacity),
        2 => Collection::BoundedSequence(capacity),
        _ => Collection::Sequence,
    };
    let primitive = |p| Some(Element::Primitive(p));
    let element = match id % 48 + 1 {
        1 => None,
        2 => primitive(Primitive::Int8),
        3 => primitive(Primitive::Uint8),
        4 => primitive(Primitive::Int16),
        5 => primitive(Primitive::Uint16),
        6 => primitive(Primitive::Int32),
        7 => primitive(Primitive::Uint32),
        8 => primitive(Primitive::Int64),
        9 => primitive(Primitive::Uint64),
        10 => primitive(Primitive::Float32),
        11 => primitive(Primitive::Float64),
        12 => Some(Element::Unsupported("long double")),
        13 => primitive(Primitive::Char),
        14 => Some(Element::Unsupported("wchar")),
        15 => primitive(Primitive::Bool),
        16 => primitive(Primitive::Byte),
        17 | 21 => Some(Element::String),
        18 | 22 => Some(Element::WString),
        19 => Some(Element::Unsupported("fixed-size string")),
        20 => Some(Element::Unsupported("fixed-size wstring")),
        _ => Some(Element::Unsupported("unknown field type")),
    };
    (element, collection)
}

impl FieldLayout {
    /// How the field's type reads in a message: `a string`, `an array of 3 int32`.
    pub fn describe(&self, layout: &Layout) -> String {
        let element = match self.element {
            Element::Primitive(p) => p.name(),
            Element::String => "string",
            Element::WString => "wstring",
            Element::Message(index) => layout.types[index].name,
            Element::Unsupported(name) => name,
        };
        match self.collection {
            Collection::Single => format!("{} {element}", article(element)),
            Collection::Array(n) => format!("an array of {n} {element}"),
            Collection::BoundedSequence(n) => format!("a sequence of at most {n} {element}"),
            Collection::Sequence => format!("a sequence of {element}"),
        }
    }
}

/// `a` or `an` before `word`.
pub(super) fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}
