//! From a parsed expression and its parameters to a [`Program`]: each field path resolved
//! against the message type's layout, each parameter read as a literal, each comparison
//! checked for types that can meet and given the precision it runs at.
//!
//! Which types compare is Fast DDS's table (`check_value_compatibility` in
//! `DDSFilterFactory.cpp`): booleans with booleans and integers; integers with integers,
//! booleans and floats; floats with floats and integers; chars and strings with chars and
//! strings. `LIKE` needs a string field on one side. Parameters are typed as Fast DDS types
//! them: by how they are written (`'text'`, `42`, `1.5`, `TRUE`), then checked against the
//! other side like literals.

use std::collections::BTreeMap;

use super::error::{ContentFilterError, ContentFilterErrorKind as Kind, Location};
use super::layout::{article, Collection, Element, Layout, Primitive};
use super::program::{Argument, Constant, Domain, Node, Program, Read, StructReads, Test, TestOp};
use super::syntax::{self, CompareOp, Condition, FieldPath, Literal, Operand};

/// At most this many expression parameters (`%0` to `%99`).
pub(super) const MAX_PARAMETERS: usize = 100;

/// Compiles `condition` (parsed from `expression`) with `parameters` against `layout`.
///
/// # Errors
/// [`ContentFilterError`] naming the first field, parameter or comparison that does not fit.
pub(super) fn compile(
    condition: &Condition,
    expression: &str,
    parameters: &[String],
    layout: &Layout,
) -> Result<Program, ContentFilterError> {
    if parameters.len() > MAX_PARAMETERS {
        return Err(ContentFilterError::new(
            Kind::TooManyParameters {
                given: parameters.len(),
            },
            Location::Filter,
            expression,
        ));
    }
    let mut compiler = Compiler {
        expression,
        parameters,
        layout,
        reads: StructReads::default(),
        slots: BTreeMap::new(),
    };
    let root = compiler.condition(condition)?;
    Ok(Program {
        reads: compiler.reads,
        slots: compiler.slots.len(),
        root,
    })
}

/// The type of one side of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SideType {
    Bool,
    Int,
    /// A float constant (its precision is the other side's).
    FloatConstant,
    Float32,
    Float64,
    Char,
    Text,
}

impl SideType {
    fn is_text(self) -> bool {
        matches!(self, Self::Char | Self::Text)
    }

    fn is_float(self) -> bool {
        matches!(self, Self::FloatConstant | Self::Float32 | Self::Float64)
    }

    /// Whether Fast DDS compares the two (see the module docs).
    fn meets(self, other: Self) -> bool {
        match self {
            Self::Bool => matches!(other, Self::Bool | Self::Int),
            Self::Int => !other.is_text(),
            Self::Char | Self::Text => other.is_text(),
            Self::FloatConstant | Self::Float32 | Self::Float64 => {
                other.is_float() || other == Self::Int
            }
        }
    }
}

/// One side of a comparison, resolved.
#[derive(Clone, Debug)]
struct Side {
    kind: SideType,
    source: Source,
    /// How it reads in a message.
    shown: String,
    at: Location,
}

#[derive(Clone, Debug)]
enum Source {
    Slot(usize),
    Literal(Literal),
}

struct Compiler<'a> {
    expression: &'a str,
    parameters: &'a [String],
    layout: &'a Layout,
    reads: StructReads,
    /// Slot of each field read, by its resolved path (member and element indexes).
    slots: BTreeMap<Vec<(usize, Option<u64>)>, usize>,
}

impl Compiler<'_> {
    fn error(&self, kind: Kind, offset: usize) -> ContentFilterError {
        ContentFilterError::new(kind, Location::Expression { offset }, self.expression)
    }

    fn condition(&mut self, condition: &Condition) -> Result<Node, ContentFilterError> {
        Ok(match condition {
            Condition::And(items) => Node::All(self.conditions(items)?),
            Condition::Or(items) => Node::Any(self.conditions(items)?),
            Condition::Not(inner) => Node::Not(Box::new(self.condition(inner)?)),
            Condition::Compare { op, left, right } => {
                let op = match op {
                    CompareOp::Eq => TestOp::Eq,
                    CompareOp::Ne => TestOp::Ne,
                    CompareOp::Lt => TestOp::Lt,
                    CompareOp::Le => TestOp::Le,
                    CompareOp::Gt => TestOp::Gt,
                    CompareOp::Ge => TestOp::Ge,
                };
                let (left, right) = (self.side(left)?, self.side(right)?);
                Node::Test(self.test(op, &left, &right)?)
            }
            Condition::Like { value, pattern } => {
                let (left, right) = (self.side(value)?, self.side(pattern)?);
                let string_field = |side: &Side, operand: &Operand| {
                    matches!(operand, Operand::Field(_)) && side.kind == SideType::Text
                };
                if !string_field(&left, value) && !string_field(&right, pattern) {
                    return Err(self.error(Kind::LikeNeedsStringField, value.at()));
                }
                Node::Test(self.test(TestOp::Like, &left, &right)?)
            }
            Condition::Between {
                field,
                low,
                high,
                negated,
            } => {
                let field = self.field(field)?;
                let (low, high) = (self.side(low)?, self.side(high)?);
                // As Fast DDS: the bounds must also meet each other.
                self.check_meet(&low, &high)?;
                // BETWEEN is `low <= field AND field <= high`, NOT BETWEEN its negation as SQL
                // defines it (so a NaN field passes NOT BETWEEN).
                let between = Node::All(vec![
                    Node::Test(self.test(TestOp::Le, &low, &field)?),
                    Node::Test(self.test(TestOp::Le, &field, &high)?),
                ]);
                if *negated {
                    Node::Not(Box::new(between))
                } else {
                    between
                }
            }
        })
    }

    fn conditions(&mut self, items: &[Condition]) -> Result<Vec<Node>, ContentFilterError> {
        items.iter().map(|c| self.condition(c)).collect()
    }

    fn side(&mut self, operand: &Operand) -> Result<Side, ContentFilterError> {
        match operand {
            Operand::Field(path) => self.field(path),
            Operand::Literal { value, at } => Ok(literal_side(
                value.clone(),
                None,
                Location::Expression { offset: *at },
            )),
            Operand::Parameter { index, at } => {
                let Some(text) = self.parameters.get(*index) else {
                    return Err(self.error(
                        Kind::MissingParameter {
                            index: *index,
                            given: self.parameters.len(),
                        },
                        *at,
                    ));
                };
                let value = syntax::parse_parameter(text, *index)?;
                Ok(literal_side(
                    value,
                    Some(*index),
                    Location::Parameter {
                        index: *index,
                        offset: 0,
                    },
                ))
            }
        }
    }

    /// Resolves a field path, records its read and gives it a slot.
    fn field(&mut self, path: &FieldPath) -> Result<Side, ContentFilterError> {
        let layout = self.layout;
        let mut ty = 0;
        let mut resolved = Vec::with_capacity(path.parts.len());
        let mut leaf = None;
        for (k, part) in path.parts.iter().enumerate() {
            let shape = &layout.types[ty];
            let Some(member) = shape.fields.iter().position(|f| f.name == part.name) else {
                return Err(self.error(
                    Kind::UnknownField {
                        name: part.name.clone(),
                        type_name: shape.name.to_owned(),
                        fields: shape.fields.iter().map(|f| f.name.to_owned()).collect(),
                    },
                    part.at,
                ));
            };
            let field = &shape.fields[member];
            // A filter reads a member by skipping those before it, which it must be able to.
            if let Some(blocking) = shape.fields[..member]
                .iter()
                .find(|f| !skippable(layout, f.element, 0))
            {
                return Err(self.error(
                    Kind::UnsupportedFieldType {
                        path: blocking.name.to_owned(),
                        ty: blocking.describe(layout),
                    },
                    part.at,
                ));
            }
            let named = path_text(&path.parts[..k], &part.name);
            let shown_type = field.describe(layout);
            match (field.collection, part.index) {
                (Collection::Single, Some(_)) => {
                    return Err(self.error(
                        Kind::NotIndexable {
                            path: named,
                            ty: shown_type,
                        },
                        part.at,
                    ))
                }
                (Collection::Single, None) => {}
                (_, None) => {
                    return Err(self.error(
                        Kind::IndexNeeded {
                            path: named,
                            ty: shown_type,
                        },
                        part.at,
                    ))
                }
                (Collection::Array(len), Some(index))
                | (Collection::BoundedSequence(len), Some(index))
                    if index >= len =>
                {
                    return Err(self.error(
                        Kind::IndexOutOfBounds {
                            path: named,
                            index,
                            len,
                            array: matches!(field.collection, Collection::Array(_)),
                        },
                        part.at,
                    ))
                }
                (_, Some(_)) => {}
            }
            resolved.push((member, part.index));
            let last = k + 1 == path.parts.len();
            let element_name = |index: Option<u64>| match index {
                Some(i) => format!("{named}[{i}]"),
                None => named.clone(),
            };
            match field.element {
                Element::Message(nested) if last => {
                    let nested_shape = &layout.types[nested];
                    return Err(self.error(
                        Kind::NotAValue {
                            path: element_name(part.index),
                            ty: nested_shape.name.to_owned(),
                            first_field: nested_shape.fields.first().map(|f| f.name.to_owned()),
                        },
                        path.at,
                    ));
                }
                Element::Message(nested) => ty = nested,
                _ if !last => {
                    let next = &path.parts[k + 1];
                    let element = match (field.collection, field.element) {
                        (Collection::Single, _) => shown_type.clone(),
                        (_, element) => describe_element(layout, element),
                    };
                    return Err(self.error(
                        Kind::NoFieldsIn {
                            path: element_name(part.index),
                            ty: element,
                        },
                        next.at,
                    ));
                }
                Element::Primitive(p) => leaf = Some(Some(p)),
                Element::String => leaf = Some(None),
                Element::WString | Element::Unsupported(_) => {
                    return Err(self.error(
                        Kind::UnsupportedFieldType {
                            path: element_name(part.index),
                            ty: describe_element(layout, field.element),
                        },
                        path.at,
                    ))
                }
            }
        }
        // The loop returned for every path that does not end at a value.
        let primitive = leaf.unwrap_or(None);
        let next_slot = self.slots.len();
        let slot = *self.slots.entry(resolved.clone()).or_insert(next_slot);
        if slot == next_slot {
            insert_read(&mut self.reads, &resolved, layout, slot, primitive);
        }
        let kind = match primitive {
            None => SideType::Text,
            Some(Primitive::Bool) => SideType::Bool,
            Some(Primitive::Char) => SideType::Char,
            Some(Primitive::Float32) => SideType::Float32,
            Some(Primitive::Float64) => SideType::Float64,
            Some(_) => SideType::Int,
        };
        let type_name = primitive.map_or("string", Primitive::name);
        Ok(Side {
            kind,
            source: Source::Slot(slot),
            shown: format!("field `{}` ({} {type_name})", path.text, article(type_name)),
            at: Location::Expression { offset: path.at },
        })
    }

    fn check_meet(&self, left: &Side, right: &Side) -> Result<(), ContentFilterError> {
        if left.kind.meets(right.kind) {
            return Ok(());
        }
        let hint = if left.kind.is_text() || right.kind.is_text() {
            "a string compares with strings: quote text ('abc'), and compare numbers with numeric \
             fields"
        } else {
            "a boolean compares with TRUE, FALSE or an integer"
        };
        // Point at the side that is not a field where there is one: that is what to change.
        let at = match (&left.source, &right.at) {
            (Source::Slot(_), at) => at.clone(),
            _ => left.at.clone(),
        };
        let text = match &at {
            Location::Parameter { index, .. } => self.parameters[*index].as_str(),
            _ => self.expression,
        };
        Err(ContentFilterError::new(
            Kind::Incompatible {
                left: left.shown.clone(),
                right: right.shown.clone(),
                hint,
            },
            at,
            text,
        ))
    }

    /// `left op right`, checked and given its domain.
    fn test(&self, op: TestOp, left: &Side, right: &Side) -> Result<Test, ContentFilterError> {
        self.check_meet(left, right)?;
        let kinds = [left.kind, right.kind];
        let domain = if kinds.iter().any(|k| k.is_text()) {
            Domain::Text
        } else if kinds.contains(&SideType::Float64) {
            Domain::Float64
        } else if kinds.contains(&SideType::Float32) {
            Domain::Float32
        } else if kinds.contains(&SideType::FloatConstant) {
            // A float constant against an integer field: exact enough in float64 (Fast DDS
            // compares these in float32, which calls 16777217 equal to 16777216.0).
            Domain::Float64
        } else {
            Domain::Int
        };
        Ok(Test {
            op,
            left: argument(left, domain),
            right: argument(right, domain),
            domain,
        })
    }
}

/// A literal side, or parameter `parameter`'s.
fn literal_side(value: Literal, parameter: Option<usize>, at: Location) -> Side {
    let (kind, shown) = match &value {
        Literal::Bool(b) => (SideType::Bool, if *b { "TRUE" } else { "FALSE" }.to_owned()),
        Literal::Int(i) => (SideType::Int, format!("the integer {i}")),
        Literal::Float(text) => (SideType::FloatConstant, format!("the number {text}")),
        // One byte is a char to Fast DDS (`char_value`), which compares as a string anyway.
        Literal::Text(text) if text.len() == 1 => (SideType::Char, format!("the text '{text}'")),
        Literal::Text(text) => (SideType::Text, format!("the text '{text}'")),
    };
    let shown = match parameter {
        Some(index) => format!("parameter %{index} ({shown})"),
        None => shown,
    };
    Side {
        kind,
        source: Source::Literal(value),
        shown,
        at,
    }
}

/// A side as an argument of a comparison in `domain`: constants converted once, here.
fn argument(side: &Side, domain: Domain) -> Argument {
    let literal = match &side.source {
        Source::Slot(slot) => return Argument::Slot(*slot),
        Source::Literal(literal) => literal,
    };
    // `meets` let only these combinations through; the fallbacks are unreachable.
    Argument::Constant(match (literal, domain) {
        (Literal::Bool(b), _) => Constant::Int(i128::from(*b)),
        (Literal::Int(i), Domain::Float32) => Constant::Float32(*i as f32),
        (Literal::Int(i), Domain::Float64) => Constant::Float64(*i as f64),
        (Literal::Int(i), _) => Constant::Int(*i),
        (Literal::Float(text), Domain::Float32) => {
            Constant::Float32(text.parse().unwrap_or(f32::NAN))
        }
        (Literal::Float(text), _) => Constant::Float64(text.parse().unwrap_or(f64::NAN)),
        (Literal::Text(text), _) => Constant::Text(text.as_str().into()),
    })
}

/// `a.b[2].name` for the parts before one and its name.
fn path_text(before: &[syntax::FieldPart], name: &str) -> String {
    let mut text = String::new();
    for part in before {
        text.push_str(&part.name);
        if let Some(index) = part.index {
            text.push_str(&format!("[{index}]"));
        }
        text.push('.');
    }
    text.push_str(name);
    text
}

fn describe_element(layout: &Layout, element: Element) -> String {
    let name = match element {
        Element::Primitive(p) => p.name(),
        Element::String => "string",
        Element::WString => "wstring",
        Element::Message(index) => layout.types[index].name,
        Element::Unsupported(name) => name,
    };
    format!("{} {name}", article(name))
}

/// Whether a filter can skip a value of `element` (a message: all of its fields), `depth`
/// messages down (bounded, though ROS types cannot nest themselves).
fn skippable(layout: &Layout, element: Element, depth: usize) -> bool {
    match element {
        Element::Unsupported(_) => false,
        Element::Message(index) => {
            depth < 64
                && layout.types[index]
                    .fields
                    .iter()
                    .all(|f| skippable(layout, f.element, depth + 1))
        }
        _ => true,
    }
}

/// Records the read of the value at `path` (member and element indexes from the top message)
/// into `slot`.
fn insert_read(
    reads: &mut StructReads,
    path: &[(usize, Option<u64>)],
    layout: &Layout,
    slot: usize,
    primitive: Option<Primitive>,
) {
    let Some((&(member, index), rest)) = path.split_first() else {
        return;
    };
    let at = match reads.members.binary_search_by_key(&member, |(m, _)| *m) {
        Ok(at) => at,
        Err(at) => {
            let field = &layout.types[reads.ty].fields[member];
            let read = match (index, field.element) {
                (Some(_), _) => Read::Elements(Vec::new()),
                (None, Element::Message(ty)) => Read::Message(StructReads {
                    ty,
                    members: Vec::new(),
                }),
                (None, _) => Read::Value { slot, primitive },
            };
            reads.members.insert(at, (member, read));
            at
        }
    };
    let field_element = layout.types[reads.ty].fields[member].element;
    let read = &mut reads.members[at].1;
    let read = match (read, index) {
        (Read::Elements(items), Some(index)) => {
            let at = match items.binary_search_by_key(&index, |(i, _)| *i) {
                Ok(at) => at,
                Err(at) => {
                    let item = match field_element {
                        Element::Message(ty) => Read::Message(StructReads {
                            ty,
                            members: Vec::new(),
                        }),
                        _ => Read::Value { slot, primitive },
                    };
                    items.insert(at, (index, item));
                    at
                }
            };
            &mut items[at].1
        }
        (read, _) => read,
    };
    if let Read::Message(nested) = read {
        insert_read(nested, rest, layout, slot, primitive);
    }
}
