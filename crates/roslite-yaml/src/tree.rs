//! What a caller asks of the reader ([`Rules`]) and what it gets back: documents of nodes
//! with their positions.

/// What a caller accepts where the YAML it reads differs from another caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    pub anchors: Anchors,
    pub block_scalars: BlockScalars,
    pub documents: Documents,
    pub flow_list_pairs: FlowListPairs,
    /// Collections nested deeper than this are refused ([`Problem::Nesting`](crate::Problem::Nesting)).
    pub max_nesting: usize,
}

/// What an anchor (`&name`) on a scalar or collection does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchors {
    /// Read as if it were not there.
    Ignore,
    /// Refused ([`Problem::Anchor`](crate::Problem::Anchor)).
    Refuse,
}

/// Whether a block scalar (`|`, `>`) counts as quoted, i.e. as a string whatever its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockScalars {
    /// Always (PyYAML).
    Strings,
    /// Only when its text starts or ends with whitespace; otherwise it is typed like a plain
    /// scalar (`rcl_yaml_param_parser` types all but single- and double-quoted scalars).
    TypedWhenTrimmed,
}

/// How many documents a text may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Documents {
    /// One; a second document start is refused ([`Problem::SecondDocument`](crate::Problem::SecondDocument)).
    One,
    /// Any number, each its own [`Document`].
    Several,
}

/// What a `key: value` pair written in a flow list without braces (`[a: 1]`) does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowListPairs {
    /// Read as a one-entry mapping, as YAML says.
    Read,
    /// Refused ([`Problem::PairInFlowList`](crate::Problem::PairInFlowList)).
    Refuse,
}

/// A place in the text: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// One document that holds something: documents that hold nothing but whitespace, comments
/// and an empty plain scalar are left out.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// The line the document starts on.
    pub line: usize,
    pub root: Node,
}

/// One YAML node.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Entries in document order; keys are scalars.
    Map {
        entries: Vec<(Scalar, Node)>,
        at: Position,
    },
    Scalar(Scalar),
    Seq {
        items: Vec<Node>,
        at: Position,
    },
}

/// A scalar, its text as YAML gives it (quotes removed, escapes and line folding applied).
#[derive(Clone, Debug, PartialEq)]
pub struct Scalar {
    pub text: String,
    pub style: Style,
    /// Whether the caller types it as a string whatever its text: single- or double-quoted,
    /// tagged `!!str`, or a block scalar the [`BlockScalars`] rule makes a string.
    pub quoted: bool,
    pub at: Position,
}

/// How a scalar is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `|` (literal) or `>` (folded).
    Block,
    Plain,
    /// `'single'` or `"double"`.
    Quoted,
}
