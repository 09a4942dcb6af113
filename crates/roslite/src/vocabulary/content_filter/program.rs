//! A filter compiled against its message type: which fields to read from a serialized message
//! (each into a numbered slot) and the tests to run on what was read, every constant already
//! converted to the precision of its comparison.

use super::layout::Primitive;

/// What to read of one message (or nested message): its members `members` names, in member
/// order.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct StructReads {
    /// The message type's index in the layout.
    pub ty: usize,
    /// `(member index, what to read of it)`, sorted by member index, each member once.
    pub members: Vec<(usize, Read)>,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Read {
    /// A value into `slot`: a primitive, or a string (`None`).
    Value {
        slot: usize,
        primitive: Option<Primitive>,
    },
    /// Members of a message.
    Message(StructReads),
    /// Elements of an array or sequence: `(index, what to read of it)`, sorted by index, each
    /// index once; each inner read is a `Value` or a `Message`.
    Elements(Vec<(u64, Read)>),
}

/// The precision a comparison runs at, chosen from both sides' types as Fast DDS promotes them
/// (`DDSFilterValue::compare`): a `float32` field compares as `float32`, anything with a
/// `float64` field or a float constant as `float64`, integers and booleans exactly, chars and
/// strings byte by byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Domain {
    Int,
    Float32,
    Float64,
    Text,
}

/// A constant converted to the domain of its comparison.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Constant {
    /// An integer, or a boolean as 0 or 1.
    Int(i128),
    Float32(f32),
    Float64(f64),
    Text(Box<str>),
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Argument {
    Slot(usize),
    Constant(Constant),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TestOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// The right side is the pattern.
    Like,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Test {
    pub op: TestOp,
    pub left: Argument,
    pub right: Argument,
    pub domain: Domain,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Node {
    All(Vec<Node>),
    Any(Vec<Node>),
    Not(Box<Node>),
    Test(Test),
}

/// A compiled filter.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Program {
    pub reads: StructReads,
    /// How many values `reads` reads.
    pub slots: usize,
    pub root: Node,
}
