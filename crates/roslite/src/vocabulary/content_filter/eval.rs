//! Running a [`Program`] on a serialized message: one pass over the CDR (XCDR1, either byte
//! order) that reads the fields the filter names into slots and skips the rest without
//! decoding it, stopping after the last field it needs; then the tests on the slots.
//!
//! Skipping costs a length read for a string or a sequence of primitives, and a walk for
//! sequences of messages or strings; nothing is allocated but the slots. Every length is
//! checked against the bytes left before it is used (`CdrReader`), so a malformed message is
//! an error, never a panic or a large allocation.

use std::cmp::Ordering;

use roslite_cdr::{CdrReader, DecodeError};

use super::layout::{Collection, Element, FieldLayout, Layout, Primitive};
use super::program::{Argument, Constant, Domain, Node, Program, Read, StructReads, Test, TestOp};

/// A value read from a message, before it meets a comparison's domain.
#[derive(Clone, Copy, Debug)]
enum Raw<'a> {
    /// An integer, a boolean (0 or 1) or a byte.
    Int(i128),
    Float32(f32),
    Float64(f64),
    /// A string, or a char as a one-byte string.
    Text(&'a str),
}

/// Whether the message `payload` (CDR with its encapsulation header) passes `program`. A
/// message without an element the filter reads (a sequence shorter than the index) does not
/// pass.
///
/// # Errors
/// [`DecodeError`] when the bytes up to the last field the filter reads are not a message of
/// the type (the rest is not looked at).
pub(super) fn passes(
    program: &Program,
    layout: &Layout,
    payload: &[u8],
) -> Result<bool, DecodeError> {
    let mut reader = CdrReader::new(payload)?;
    let mut slots: Vec<Option<Raw<'_>>> = vec![None; program.slots];
    read_struct(&mut reader, layout, &program.reads, false, &mut slots, 0)?;
    let mut values = Vec::with_capacity(slots.len());
    for slot in slots {
        match slot {
            Some(value) => values.push(value),
            None => return Ok(false),
        }
    }
    Ok(evaluate(&program.root, &values))
}

/// How deep messages may nest inside each other (ROS types cannot nest themselves; this only
/// bounds the recursion on a broken description).
const MAX_NESTING: usize = 64;

/// Reads the members `reads` names of one message; with `need_rest` also skips the members
/// after the last of them (something after this message is read too).
fn read_struct<'a>(
    r: &mut CdrReader<'a>,
    layout: &Layout,
    reads: &StructReads,
    need_rest: bool,
    slots: &mut [Option<Raw<'a>>],
    depth: usize,
) -> Result<(), DecodeError> {
    if depth > MAX_NESTING {
        return Err(DecodeError::InvalidValue);
    }
    let fields = &layout.types[reads.ty].fields;
    let mut wanted = reads.members.iter().peekable();
    for (index, field) in fields.iter().enumerate() {
        match wanted.peek() {
            Some((member, read)) if *member == index => {
                wanted.next();
                let more = need_rest || wanted.peek().is_some();
                read_member(r, layout, field, read, more, slots, depth)?;
            }
            Some(_) => skip_member(r, layout, field, depth)?,
            None if need_rest => skip_member(r, layout, field, depth)?,
            None => return Ok(()),
        }
    }
    if fields.is_empty() && need_rest {
        r.read_empty_struct()?;
    }
    Ok(())
}

fn read_member<'a>(
    r: &mut CdrReader<'a>,
    layout: &Layout,
    field: &FieldLayout,
    read: &Read,
    need_rest: bool,
    slots: &mut [Option<Raw<'a>>],
    depth: usize,
) -> Result<(), DecodeError> {
    let items = match (read, field.collection) {
        (
            Read::Elements(items),
            Collection::Array(_) | Collection::BoundedSequence(_) | Collection::Sequence,
        ) => items,
        (read, _) => return read_element(r, layout, field.element, read, need_rest, slots, depth),
    };
    let count = element_count(r, field)?;
    if let Element::Primitive(p) = field.element {
        // Primitives lie side by side: jump to each wanted one.
        if count > 0 {
            r.align(p.size())?;
        }
        let mut position = 0;
        for (index, item) in items.iter().take_while(|(i, _)| *i < count) {
            skip_bytes(r, (index - position).saturating_mul(p.size() as u64))?;
            read_element(r, layout, field.element, item, false, slots, depth)?;
            position = index + 1;
        }
        if need_rest {
            skip_bytes(
                r,
                (count.saturating_sub(position)).saturating_mul(p.size() as u64),
            )?;
        }
        return Ok(());
    }
    let mut wanted = items.iter().peekable();
    for index in 0..count {
        match wanted.peek() {
            Some((i, item)) if *i == index => {
                wanted.next();
                let more = need_rest || wanted.peek().is_some_and(|(i, _)| *i < count);
                read_element(r, layout, field.element, item, more, slots, depth)?;
            }
            Some(_) => skip_element(r, layout, field.element, depth)?,
            None if need_rest => skip_element(r, layout, field.element, depth)?,
            None => return Ok(()),
        }
    }
    Ok(())
}

/// Reads one value of `element` as `read` says: into a slot, or the members of a message.
fn read_element<'a>(
    r: &mut CdrReader<'a>,
    layout: &Layout,
    element: Element,
    read: &Read,
    need_rest: bool,
    slots: &mut [Option<Raw<'a>>],
    depth: usize,
) -> Result<(), DecodeError> {
    match read {
        Read::Value { slot, primitive } => {
            let value = match primitive {
                Some(p) => read_primitive(r, *p)?,
                None => Raw::Text(r.read_string()?),
            };
            if let Some(place) = slots.get_mut(*slot) {
                *place = Some(value);
            }
            Ok(())
        }
        Read::Message(nested) => read_struct(r, layout, nested, need_rest, slots, depth + 1),
        // The compiler puts element reads under a collection only.
        Read::Elements(_) => skip_element(r, layout, element, depth),
    }
}

fn read_primitive<'a>(r: &mut CdrReader<'a>, primitive: Primitive) -> Result<Raw<'a>, DecodeError> {
    Ok(match primitive {
        Primitive::Bool => Raw::Int(i128::from(r.read_bool()?)),
        Primitive::Char => {
            let bytes = r.read_bytes(1)?;
            // A char outside ASCII is not one UTF-8 character: compared as the text it is not
            // equal to any literal, which are UTF-8.
            Raw::Text(std::str::from_utf8(bytes).unwrap_or("\u{fffd}"))
        }
        Primitive::Byte | Primitive::Uint8 => Raw::Int(i128::from(r.read_u8()?)),
        Primitive::Int8 => Raw::Int(i128::from(r.read_i8()?)),
        Primitive::Int16 => Raw::Int(i128::from(r.read_i16()?)),
        Primitive::Uint16 => Raw::Int(i128::from(r.read_u16()?)),
        Primitive::Int32 => Raw::Int(i128::from(r.read_i32()?)),
        Primitive::Uint32 => Raw::Int(i128::from(r.read_u32()?)),
        Primitive::Int64 => Raw::Int(i128::from(r.read_i64()?)),
        Primitive::Uint64 => Raw::Int(i128::from(r.read_u64()?)),
        Primitive::Float32 => Raw::Float32(r.read_f32()?),
        Primitive::Float64 => Raw::Float64(r.read_f64()?),
    })
}

/// The number of elements of an array (its length) or sequence (read from the message).
fn element_count(r: &mut CdrReader<'_>, field: &FieldLayout) -> Result<u64, DecodeError> {
    let smallest = match field.element {
        Element::Primitive(p) => p.size(),
        Element::String | Element::WString => 4,
        Element::Message(_) | Element::Unsupported(_) => 1,
    };
    Ok(match field.collection {
        Collection::Single => 1,
        Collection::Array(n) => n,
        Collection::BoundedSequence(_) | Collection::Sequence => r.read_len(smallest)? as u64,
    })
}

fn skip_bytes(r: &mut CdrReader<'_>, n: u64) -> Result<(), DecodeError> {
    let n = usize::try_from(n).map_err(|_| DecodeError::Truncated {
        needed: usize::MAX,
        remaining: r.remaining(),
    })?;
    r.read_bytes(n).map(|_| ())
}

fn skip_member(
    r: &mut CdrReader<'_>,
    layout: &Layout,
    field: &FieldLayout,
    depth: usize,
) -> Result<(), DecodeError> {
    if field.collection == Collection::Single {
        return skip_element(r, layout, field.element, depth);
    }
    let count = element_count(r, field)?;
    if let Element::Primitive(p) = field.element {
        if count > 0 {
            r.align(p.size())?;
        }
        return skip_bytes(r, count.saturating_mul(p.size() as u64));
    }
    for _ in 0..count {
        skip_element(r, layout, field.element, depth)?;
    }
    Ok(())
}

fn skip_element(
    r: &mut CdrReader<'_>,
    layout: &Layout,
    element: Element,
    depth: usize,
) -> Result<(), DecodeError> {
    match element {
        Element::Primitive(p) => {
            r.align(p.size())?;
            skip_bytes(r, p.size() as u64)
        }
        Element::String => {
            let len = r.read_len(1)?;
            skip_bytes(r, len as u64)
        }
        // roslite's wstring layout (`CdrWriter::write_wstring`): a count, then 4 bytes a unit.
        Element::WString => {
            let len = r.read_len(4)?;
            skip_bytes(r, (len as u64).saturating_mul(4))
        }
        Element::Message(ty) => {
            let reads = StructReads {
                ty,
                members: Vec::new(),
            };
            read_struct(r, layout, &reads, true, &mut [], depth + 1)
        }
        // The compiler refuses filters that would have to skip one of these.
        Element::Unsupported(_) => Err(DecodeError::InvalidValue),
    }
}

fn evaluate(node: &Node, values: &[Raw<'_>]) -> bool {
    match node {
        Node::All(items) => items.iter().all(|n| evaluate(n, values)),
        Node::Any(items) => items.iter().any(|n| evaluate(n, values)),
        Node::Not(inner) => !evaluate(inner, values),
        Node::Test(test) => run_test(test, values),
    }
}

/// A value in the domain of its comparison.
enum Value<'a> {
    Int(i128),
    Float32(f32),
    Float64(f64),
    Text(&'a str),
}

fn value<'a>(argument: &'a Argument, domain: Domain, values: &[Raw<'a>]) -> Value<'a> {
    let raw = match argument {
        Argument::Constant(constant) => {
            return match constant {
                Constant::Int(i) => Value::Int(*i),
                Constant::Float32(f) => Value::Float32(*f),
                Constant::Float64(f) => Value::Float64(*f),
                Constant::Text(t) => Value::Text(t),
            }
        }
        // `passes` checked that every slot holds a value.
        Argument::Slot(slot) => values.get(*slot).copied().unwrap_or(Raw::Int(0)),
    };
    match (raw, domain) {
        (Raw::Int(i), Domain::Float32) => Value::Float32(i as f32),
        (Raw::Int(i), Domain::Float64) => Value::Float64(i as f64),
        (Raw::Float32(f), Domain::Float64) => Value::Float64(f64::from(f)),
        (Raw::Int(i), _) => Value::Int(i),
        (Raw::Float32(f), _) => Value::Float32(f),
        (Raw::Float64(f), _) => Value::Float64(f),
        (Raw::Text(t), _) => Value::Text(t),
    }
}

fn run_test(test: &Test, values: &[Raw<'_>]) -> bool {
    let left = value(&test.left, test.domain, values);
    let right = value(&test.right, test.domain, values);
    let order = match (&left, &right) {
        (Value::Text(text), Value::Text(pattern)) if test.op == TestOp::Like => {
            return like(text, pattern)
        }
        (Value::Int(a), Value::Int(b)) => Some(a.cmp(b)),
        (Value::Float32(a), Value::Float32(b)) => a.partial_cmp(b),
        (Value::Float64(a), Value::Float64(b)) => a.partial_cmp(b),
        (Value::Text(a), Value::Text(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
        // The compiler gives both sides one domain.
        _ => None,
    };
    // NaN is unordered: only `<>` holds (IEEE 754; Fast DDS calls NaN equal to everything).
    let Some(order) = order else {
        return test.op == TestOp::Ne;
    };
    match test.op {
        TestOp::Eq => order == Ordering::Equal,
        TestOp::Ne => order != Ordering::Equal,
        TestOp::Lt => order == Ordering::Less,
        TestOp::Le => order != Ordering::Greater,
        TestOp::Gt => order == Ordering::Greater,
        TestOp::Ge => order != Ordering::Less,
        TestOp::Like => false,
    }
}

/// The longest pattern read from a field that `LIKE` matches with (longer ones match
/// nothing): Fast DDS holds filter strings in 255 bytes, and a bound keeps the matching of a
/// hostile message's pattern against its text short.
const MAX_PATTERN_LEN: usize = 255;

/// SQL `LIKE`, case sensitive: `%` matches any run of characters (none included) and `_` one
/// character; Fast DDS also takes `*` and `?` for these, and so does this. Every other
/// character matches itself (Fast DDS turns the pattern into a regular expression, where `.`
/// or `[` would mean more).
pub(super) fn like(text: &str, pattern: &str) -> bool {
    if pattern.len() > MAX_PATTERN_LEN {
        return false;
    }
    let (t, p) = (text.as_bytes(), pattern.as_bytes());
    let (mut ti, mut pi) = (0, 0);
    // Where the last `%` was: the pattern after it, and the text it was tried against.
    let mut retry: Option<(usize, usize)> = None;
    while ti < t.len() {
        if let Some(&c) = p.get(pi) {
            match c {
                b'%' | b'*' => {
                    pi += 1;
                    retry = Some((pi, ti));
                    continue;
                }
                b'_' | b'?' => {
                    ti = (ti + char_len(t[ti])).min(t.len());
                    pi += 1;
                    continue;
                }
                _ => {
                    let n = char_len(c);
                    if p.get(pi..pi + n).is_some_and(|ch| t[ti..].starts_with(ch)) {
                        ti += n;
                        pi += n;
                        continue;
                    }
                }
            }
        }
        // A mismatch: let the last `%` take one more character, or fail without one.
        let Some((after_percent, tried)) = retry else {
            return false;
        };
        let next = (tried + char_len(t[tried])).min(t.len());
        retry = Some((after_percent, next));
        ti = next;
        pi = after_percent;
    }
    p[pi.min(p.len())..]
        .iter()
        .all(|b| matches!(b, b'%' | b'*'))
}

/// The length of the UTF-8 character starting with byte `lead`.
fn char_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xff => 4,
        // A continuation byte does not start a character; step over it alone.
        _ => 1,
    }
}
