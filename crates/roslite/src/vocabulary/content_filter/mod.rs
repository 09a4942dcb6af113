//! Content filters: a subscription that gets only the messages for which an SQL-like expression
//! over their fields holds (DDS 1.4 §2.2.2.3.3 ContentFilteredTopic, with the filter language
//! of its Annex B, "Syntax for Queries and Filters", as Fast DDS implements it), rcl's and
//! rclcpp's `content_filter_options`:
//!
//! ```text
//! data > 10 AND data <= %0
//! header.frame_id = 'camera' OR header.frame_id LIKE 'lidar_%'
//! points[0].x BETWEEN -1.5 AND 1.5 AND NOT (valid = FALSE)
//! ```
//!
//! Sans I/O: text in (`syntax`), compiled against the message type's REP 2011 type
//! description (`layout`, `typing`) into a `program`, which runs on serialized messages
//! (`eval`). Nothing here knows a subscription or a transport.
//!
//! # Design: where and on what a filter runs
//!
//! A filter runs on the subscription's side of every path, in the sink every path delivers
//! through, so it holds whichever way a message comes: intra-process, shared memory, a Unix
//! socket, RTPS over UDP, a writer that filtered for the reader already or one that did not.
//! It reads the message's CDR bytes, walking them by the type description that generated
//! types carry ([`Message::TYPE_DESCRIPTION`]) and run-time types can be given: the bytes are
//! what every path but intra-process delivery hands over, and a filter reads only the fields
//! it names, skipping the rest by their lengths and stopping after the last one it needs (a
//! filter on an image's `header.frame_id` never looks at the pixels), so a filtered-out
//! message is dropped before it is decoded. Generated types have no field reflection, and
//! giving them one would change every generated type for the sake of this one feature; a
//! message published in this process to a filtered subscription is serialized once for the
//! filter instead (into a reused buffer), the cost of a send to another process. Fast DDS
//! evaluates its filters on the serialized payload as well (`DDSFilterExpression::evaluate`).
//!
//! # What differs from Fast DDS
//!
//! The language and its typing rules are Fast DDS's, with these departures, each where Fast
//! DDS's result is surprising or its text ambiguous:
//! - `AND` and `OR` at one level need parentheses (see `syntax`); `MATCH` is not supported.
//! - `LIKE` patterns know `%` and `*` (any characters), `_` and `?` (one character) and
//!   nothing else: Fast DDS makes a regular expression of the pattern, where `.` also matches
//!   any character and `[ab]` a set.
//! - NaN is unordered (only `<>` holds); Fast DDS finds it equal to every number.
//! - An integer field compared with a float constant compares in `float64` (Fast DDS:
//!   `float32`, so `16777217` equals `16777216.0` there).
//! - A message lacking an element the filter reads (`points[9]` of a shorter sequence) does
//!   not pass; Fast DDS's result depends on the order it reads the fields in.
//!
//! [`Message::TYPE_DESCRIPTION`]: roslite_msgs::Message::TYPE_DESCRIPTION

mod error;
mod eval;
mod layout;
mod program;
mod syntax;
mod typing;

use std::cell::Cell;

use roslite_cdr::{DecodeError, Endianness};
use roslite_msgs::description::TypeDescription;
use roslite_msgs::Message;

pub use error::{ContentFilterError, ContentFilterErrorKind, Location};

use layout::Layout;
use program::Program;

/// A filter as rcl takes it (`rcl_subscription_content_filter_options_t`, rclcpp's
/// `ContentFilterOptions`): the expression, and the values of its parameters `%0`, `%1`, ...
/// each written as a literal (`"'text'"`, `"42"`, `"1.5"`, `"TRUE"`). An empty expression is
/// no filter.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContentFilterOptions {
    pub filter_expression: String,
    pub expression_parameters: Vec<String>,
}

impl ContentFilterOptions {
    /// Options with `filter_expression` and `expression_parameters`.
    pub fn new(
        filter_expression: impl Into<String>,
        expression_parameters: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            filter_expression: filter_expression.into(),
            expression_parameters: expression_parameters.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether these options filter nothing (an empty expression, as rcl has it).
    pub fn is_empty(&self) -> bool {
        self.filter_expression.is_empty()
    }
}

/// A filter compiled for one message type.
#[derive(Clone, Debug)]
pub struct ContentFilter {
    options: ContentFilterOptions,
    layout: Layout,
    program: Program,
}

impl ContentFilter {
    /// Compiles `options` for messages of the type `description` describes; `None` for an
    /// empty expression (no filter).
    ///
    /// # Errors
    /// [`ContentFilterError`] saying what is wrong in the expression or a parameter, where,
    /// and how to fix it.
    pub fn new(
        description: &TypeDescription,
        options: ContentFilterOptions,
    ) -> Result<Option<Self>, ContentFilterError> {
        if options.is_empty() {
            return Ok(None);
        }
        let expression = options.filter_expression.as_str();
        let condition = syntax::parse_expression(expression)?;
        let layout = Layout::of(description)
            .map_err(|kind| ContentFilterError::new(kind, Location::Filter, expression))?;
        let program = typing::compile(
            &condition,
            expression,
            &options.expression_parameters,
            &layout,
        )?;
        Ok(Some(Self {
            options,
            layout,
            program,
        }))
    }

    /// As [`Self::new`], for a type that may have no description (a hand-written type, a
    /// run-time type given none): then only an empty expression is accepted.
    ///
    /// # Errors
    /// As [`Self::new`]; [`ContentFilterErrorKind::NoTypeDescription`] for a filter on a type
    /// without a description.
    pub fn for_type(
        type_name: &str,
        description: Option<&TypeDescription>,
        options: ContentFilterOptions,
    ) -> Result<Option<Self>, ContentFilterError> {
        match description {
            Some(description) => Self::new(description, options),
            None if options.is_empty() => Ok(None),
            None => Err(ContentFilterError::new(
                ContentFilterErrorKind::NoTypeDescription {
                    type_name: type_name.to_owned(),
                },
                Location::Filter,
                &options.filter_expression,
            )),
        }
    }

    /// The expression and parameters this filter was made of.
    pub fn options(&self) -> &ContentFilterOptions {
        &self.options
    }

    /// Whether the serialized message `payload` (CDR with its encapsulation header) passes.
    ///
    /// # Errors
    /// [`DecodeError`] when the bytes the filter reads are not a message of its type.
    pub fn passes(&self, payload: &[u8]) -> Result<bool, DecodeError> {
        eval::passes(&self.program, &self.layout, payload)
    }

    /// Whether `message` passes: it is serialized (into a buffer this thread reuses) and read
    /// as [`Self::passes`] reads bytes.
    ///
    /// # Errors
    /// [`DecodeError`] if its encoding does not decode, which only a hand-written type whose
    /// encoder and description disagree can cause.
    pub fn passes_message<T: Message>(&self, message: &T) -> Result<bool, DecodeError> {
        thread_local! {
            static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
        }
        let mut buf = SCRATCH.with(Cell::take);
        buf.clear();
        let mut writer = roslite_cdr::CdrWriter::with_buffer(buf, Endianness::Little);
        match message.encode(&mut writer) {
            Ok(()) => {
                let buf = writer.finish();
                let passes = self.passes(&buf);
                // Kept unless a large message grew it: a thread holds at most 64 KiB here.
                if buf.capacity() <= 64 * 1024 {
                    SCRATCH.with(|s| s.set(buf));
                }
                passes
            }
            Err(_) => Err(DecodeError::InvalidValue),
        }
    }
}

#[cfg(test)]
mod tests;
