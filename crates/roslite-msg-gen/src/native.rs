//! C and C++ code generation: header-only message types that encode and decode the CDR bytes
//! roslite's C ABI (`crates/roslite-c`) moves, with the names rosidl gives them.
//!
//! Layers:
//! - this module: which interfaces to generate ([`select`]), where each header goes
//!   ([`header_path`], rosidl's snake-case file names), the facts both languages need about a
//!   field (`FieldInfo`: element kind, collection, smallest wire size), and writing files.
//! - `cpp`: `pkg/msg/name.hpp` with `pkg::msg::Name` as rosidl_generator_cpp names it, plus a
//!   `roslite::message_traits<T>` specialisation (type name, RIHS01 hash, encode, decode).
//! - `c`: `pkg/msg/name.h` with `pkg__msg__Name` and `__init/__fini/__encode/__decode`, as
//!   rosidl_generator_c names them, over `roslite__String`-style runtime types.
//! - `runtime/roslite/cdr.hpp`, `runtime/roslite/cdr.h`: the one small runtime header per
//!   language the generated headers include; [`generate`] writes it next to them.
//!
//! The wire layout is the one `roslite-cdr` implements and the generated Rust types use: plain
//! CDR (XCDR1, DDS-XTypes 1.3 §7.4.1) after the 4-byte encapsulation header, alignment measured
//! from the first byte after that header, strings as `u32` length counting the NUL, sequences as
//! `u32` count then elements, no padding before the elements of an empty primitive sequence, and
//! one dummy byte for a structure without fields. Decoders check every count against the bytes
//! that remain (times the element's smallest wire size) before allocating, as
//! `CdrReader::read_len` does, so both languages accept and refuse exactly what Rust does.
//!
//! The output depends only on the interfaces (sorted, no timestamps), so it can be compared byte
//! for byte between runs.

mod c;
mod cpp;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::ast::{
    BaseType, Collection, FieldType, Interface, InterfaceKind, Literal, MessageSpec, Primitive,
    ServiceSpec, TypeName,
};
use crate::hash::{type_hash, HashError};
use crate::registry::{InterfaceSet, SourceFormat};

/// The language to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    C,
    Cpp,
}

impl Lang {
    /// The header file extension: `h` or `hpp`.
    pub fn extension(self) -> &'static str {
        match self {
            Self::C => "h",
            Self::Cpp => "hpp",
        }
    }
}

/// One file to write, its path relative to the output directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    pub path: PathBuf,
    pub text: String,
}

/// Why headers could not be generated.
#[derive(Debug)]
#[non_exhaustive]
pub enum NativeError {
    /// A requested name is neither a loaded interface nor a package with interfaces.
    UnknownInterface(String),
    /// A field names a type the set does not hold.
    UnresolvedType { user: TypeName, missing: TypeName },
    /// A name that C or C++ cannot use as an identifier (a keyword, or characters outside
    /// `[A-Za-z0-9_]`).
    InvalidName { ty: TypeName, name: String },
    /// A constant value or field default that does not fit its declared type.
    InvalidLiteral {
        ty: TypeName,
        member: String,
        line: usize,
    },
    /// The RIHS01 hash of a type could not be computed.
    Hash(Box<HashError>),
    /// Writing a generated file failed.
    Io { path: PathBuf, error: io::Error },
}

impl fmt::Display for NativeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownInterface(name) => write!(
                f,
                "`{name}` is neither a known interface (pkg/msg/Name, pkg/srv/Name, \
                 pkg/action/Name) nor a package with interfaces"
            ),
            Self::UnresolvedType { user, missing } => write!(
                f,
                "{user} uses {missing}, which is not among the known interfaces"
            ),
            Self::InvalidName { ty, name } => write!(
                f,
                "{ty}: `{name}` cannot be used as a C or C++ identifier (a keyword, or not \
                 [A-Za-z_][A-Za-z0-9_]*); rename it"
            ),
            Self::InvalidLiteral { ty, member, line } => write!(
                f,
                "{ty}: the value of `{member}` (line {line}) does not fit its declared type"
            ),
            Self::Hash(e) => e.fmt(f),
            Self::Io { path, error } => write!(f, "cannot write {}: {error}", path.display()),
        }
    }
}

impl std::error::Error for NativeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Hash(e) => Some(&**e),
            Self::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The runtime header of each language, shipped inside this crate and written by [`generate`]
/// into the output directory (`roslite/cdr.hpp`, `roslite/cdr.h`).
pub fn runtime_file(lang: Lang) -> OutputFile {
    match lang {
        Lang::Cpp => OutputFile {
            path: PathBuf::from("roslite/cdr.hpp"),
            text: include_str!("native/runtime/roslite/cdr.hpp").to_owned(),
        },
        Lang::C => OutputFile {
            path: PathBuf::from("roslite/cdr.h"),
            text: include_str!("native/runtime/roslite/cdr.h").to_owned(),
        },
    }
}

/// The interfaces (file-level names: `pkg/msg/X`, `pkg/srv/X`, `pkg/action/X`) that `requests`
/// name, plus, when `with_deps`, every interface they use, transitively. A request is a full
/// interface name or a package name (all its interfaces). The result is sorted.
///
/// # Errors
/// [`NativeError::UnknownInterface`] for a request the set knows nothing of,
/// [`NativeError::UnresolvedType`] for a field whose type is not loaded.
pub fn select(
    set: &InterfaceSet,
    requests: &[String],
    with_deps: bool,
) -> Result<Vec<TypeName>, NativeError> {
    let mut roots = BTreeSet::new();
    for request in requests {
        let as_type = TypeName::parse(request)
            .filter(|_| request.matches('/').count() == 2)
            .filter(|t| set.interface(t).is_some());
        match as_type {
            Some(name) => {
                roots.insert(name);
            }
            None => {
                let before = roots.len();
                roots.extend(
                    set.interfaces()
                        .map(Interface::name)
                        .filter(|n| n.package == *request)
                        .cloned(),
                );
                if roots.len() == before {
                    return Err(NativeError::UnknownInterface(request.clone()));
                }
            }
        }
    }
    if !with_deps {
        return Ok(roots.into_iter().collect());
    }
    let mut done = BTreeSet::new();
    let mut todo: Vec<TypeName> = roots.into_iter().collect();
    while let Some(name) = todo.pop() {
        if !done.insert(name.clone()) {
            continue;
        }
        let interface = set
            .interface(&name)
            .ok_or_else(|| NativeError::UnknownInterface(name.to_string()))?;
        for dep in dependencies(set, interface)? {
            if !done.contains(&dep) {
                todo.push(dep);
            }
        }
    }
    Ok(done.into_iter().collect())
}

/// Generates the headers of `interfaces` (file-level names, as [`select`] returns) and the
/// runtime header. The set must hold every type they use.
///
/// # Errors
/// [`NativeError::UnknownInterface`], [`NativeError::UnresolvedType`],
/// [`NativeError::InvalidName`], [`NativeError::InvalidLiteral`], [`NativeError::Hash`].
pub fn generate(
    set: &InterfaceSet,
    interfaces: &[TypeName],
    lang: Lang,
) -> Result<Vec<OutputFile>, NativeError> {
    let mut files = vec![runtime_file(lang)];
    for name in interfaces {
        let interface = set
            .interface(name)
            .ok_or_else(|| NativeError::UnknownInterface(name.to_string()))?;
        let text = match lang {
            Lang::Cpp => cpp::header(set, interface)?,
            Lang::C => c::header(set, interface)?,
        };
        files.push(OutputFile {
            path: header_path(name, lang),
            text,
        });
    }
    Ok(files)
}

/// Writes `files` under `out_dir`, creating directories; a file that already holds the same
/// text is left alone (and keeps its modification time). Returns how many were written.
///
/// # Errors
/// [`NativeError::Io`].
pub fn write(out_dir: &Path, files: &[OutputFile]) -> Result<usize, NativeError> {
    let mut written = 0;
    for file in files {
        let path = out_dir.join(&file.path);
        if fs::read_to_string(&path).is_ok_and(|old| old == file.text) {
            continue;
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|error| NativeError::Io {
                path: parent.to_owned(),
                error,
            })?;
        }
        fs::write(&path, &file.text).map_err(|error| NativeError::Io {
            path: path.clone(),
            error,
        })?;
        written += 1;
    }
    Ok(written)
}

/// Where the header of an interface goes: `std_msgs/msg/string.hpp`,
/// `example_interfaces/srv/add_two_ints.h`.
pub fn header_path(name: &TypeName, lang: Lang) -> PathBuf {
    PathBuf::from(format!(
        "{}/{}/{}.{}",
        name.package,
        name.kind.as_str(),
        snake_case(&name.name),
        lang.extension()
    ))
}

/// rosidl's file-name rule (`rosidl_pycommon.convert_camel_case_to_lower_case_underscore`):
/// an underscore before an upper-case letter that starts a lower-case run, then before an
/// upper-case letter that follows a lower-case letter or digit, then lower case.
/// `AddTwoInts` -> `add_two_ints`, `UInt8MultiArray` -> `u_int8_multi_array`,
/// `PointCloud2` -> `point_cloud2`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    // Pass 1: `(.)([A-Z][a-z]+)` -> `\1_\2`, non-overlapping, left to right.
    let mut pass1 = Vec::with_capacity(chars.len() + 4);
    let mut i = 0;
    while i < chars.len() {
        let upper_then_lower = i + 2 < chars.len()
            && chars[i + 1].is_ascii_uppercase()
            && chars[i + 2].is_ascii_lowercase();
        if upper_then_lower && chars[i] != '\n' {
            let mut end = i + 2;
            while end < chars.len() && chars[end].is_ascii_lowercase() {
                end += 1;
            }
            pass1.push(chars[i]);
            pass1.push('_');
            pass1.extend_from_slice(&chars[i + 1..end]);
            i = end;
        } else {
            pass1.push(chars[i]);
            i += 1;
        }
    }
    // Pass 2: `([a-z0-9])([A-Z])` -> `\1_\2`.
    let mut out = String::with_capacity(pass1.len() + 4);
    let mut i = 0;
    while i < pass1.len() {
        let c = pass1[i];
        if i + 1 < pass1.len()
            && (c.is_ascii_lowercase() || c.is_ascii_digit())
            && pass1[i + 1].is_ascii_uppercase()
        {
            out.push(c);
            out.push('_');
            out.push(pass1[i + 1]);
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out.to_lowercase()
}

/// Every message structure an interface file defines, in the order its types must be
/// declared (a service's event uses its request and response).
pub(crate) fn parts(interface: &Interface) -> Vec<&MessageSpec> {
    match interface {
        Interface::Message(m) => vec![m],
        Interface::Service(s) => vec![&s.request, &s.response, &s.event],
        Interface::Action(a) => vec![
            &a.goal,
            &a.result,
            &a.feedback,
            &a.send_goal.request,
            &a.send_goal.response,
            &a.send_goal.event,
            &a.get_result.request,
            &a.get_result.response,
            &a.get_result.event,
            &a.feedback_message,
        ],
    }
}

/// The interface files another interface's fields refer to (not itself), sorted. An action
/// also uses `action_msgs` (its C++ `Impl` names `CancelGoal` and `GoalStatusArray`).
fn dependencies(set: &InterfaceSet, interface: &Interface) -> Result<Vec<TypeName>, NativeError> {
    let mut deps = BTreeSet::new();
    for part in parts(interface) {
        for field in &part.fields {
            let BaseType::Named(target) = &field.ty.base else {
                continue;
            };
            let owner = owner_of(set, target).ok_or_else(|| NativeError::UnresolvedType {
                user: part.name.clone(),
                missing: target.clone(),
            })?;
            if owner != *interface.name() {
                deps.insert(owner);
            }
        }
    }
    if let Interface::Action(_) = interface {
        for extra in ACTION_EXTRAS {
            let name = TypeName::parse(extra).expect("internal bug: constant type name");
            if set.interface(&name).is_none() {
                return Err(NativeError::UnresolvedType {
                    user: interface.name().clone(),
                    missing: name,
                });
            }
            deps.insert(name);
        }
    }
    Ok(deps.into_iter().collect())
}

/// The definition bundle of `interface` ([`crate::bundle`]) that generated code hands
/// `roslite_type_register`: its own text and that of every interface it uses, directly or
/// not, that roslite does not ship. `None` when roslite ships `interface` (the runtime knows it
/// already).
pub(crate) fn definition(
    set: &InterfaceSet,
    interface: &Interface,
) -> Result<Option<String>, NativeError> {
    let source = |name: &TypeName| set.source(name).unwrap_or_default();
    let builtin = |name: &TypeName| crate::build::is_builtin(name, source(name));
    let name = interface.name();
    if builtin(name) {
        return Ok(None);
    }
    let mut order = vec![name.clone()];
    let mut seen = BTreeSet::from([name.clone()]);
    let mut next = 0;
    while let Some(current) = order.get(next) {
        let current = set
            .interface(current)
            .ok_or_else(|| NativeError::UnknownInterface(current.to_string()))?;
        for dep in dependencies(set, current)? {
            if !builtin(&dep) && seen.insert(dep.clone()) {
                order.push(dep);
            }
        }
        next += 1;
    }
    let format = |name: &TypeName| set.format(name).unwrap_or(SourceFormat::Msg);
    Ok(Some(crate::bundle::join(
        order.iter().map(|name| (name, format(name), source(name))),
    )))
}

/// `text` as C/C++ string literal pieces, one per line, each on its own line of code after
/// `indent`.
pub(crate) fn string_pieces(text: &str, indent: &str) -> Vec<String> {
    text.lines()
        .map(|line| format!("{indent}\"{}\\n\"", c_string_body(line)))
        .collect()
}

/// What every action's C++ `Impl` refers to besides its own types.
const ACTION_EXTRAS: &[&str] = &[
    "action_msgs/srv/CancelGoal",
    "action_msgs/msg/GoalStatusArray",
];

/// The interface file that defines the message structure `part` (`pkg/srv/X` for
/// `pkg/srv/X_Request`).
pub(crate) fn owner_of(set: &InterfaceSet, part: &TypeName) -> Option<TypeName> {
    set.message(part)?;
    if set.interface(part).is_some() {
        return Some(part.clone());
    }
    let suffixes: &[&str] = match part.kind {
        InterfaceKind::Msg => &[],
        InterfaceKind::Srv => &["_Request", "_Response", "_Event"],
        InterfaceKind::Action => &[
            "_SendGoal_Request",
            "_SendGoal_Response",
            "_SendGoal_Event",
            "_GetResult_Request",
            "_GetResult_Response",
            "_GetResult_Event",
            "_FeedbackMessage",
            "_Goal",
            "_Result",
            "_Feedback",
        ],
    };
    suffixes.iter().find_map(|suffix| {
        let base = part.name.strip_suffix(suffix)?;
        let owner = TypeName::new(&part.package, part.kind, base);
        set.interface(&owner).is_some().then_some(owner)
    })
}

/// The RIHS01 hash of a message, service or action.
pub(crate) fn hash_of(set: &InterfaceSet, name: &TypeName) -> Result<String, NativeError> {
    type_hash(set, name).map_err(|e| NativeError::Hash(Box::new(e)))
}

/// The services an interface file defines.
pub(crate) fn services(interface: &Interface) -> Vec<&ServiceSpec> {
    match interface {
        Interface::Message(_) => Vec::new(),
        Interface::Service(s) => vec![s],
        Interface::Action(a) => vec![&a.send_goal, &a.get_result],
    }
}

/// How one element of a field (the field itself, or one element of its array or sequence) is
/// encoded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Elem {
    Bool,
    /// Any primitive but `bool`.
    Num(Primitive),
    String(Option<usize>),
    WString(Option<usize>),
    /// A nested message and its smallest wire size.
    Named {
        ty: TypeName,
        min_size: usize,
    },
}

impl Elem {
    /// The fewest bytes one element can occupy, as `roslite-msg-gen`'s Rust codec counts them
    /// for `CdrReader::read_len`.
    pub(crate) fn min_size(&self) -> usize {
        match self {
            Self::Bool => 1,
            Self::Num(p) => p.size(),
            Self::String(_) => 5,
            Self::WString(_) => 4,
            Self::Named { min_size, .. } => *min_size,
        }
    }
}

/// What both generators need to know about a field.
pub(crate) struct FieldInfo<'a> {
    pub(crate) name: &'a str,
    pub(crate) elem: Elem,
    pub(crate) collection: Collection,
    pub(crate) field: &'a crate::ast::Field,
}

/// The fields of `spec` with their element kinds, names checked.
pub(crate) fn fields<'a>(
    set: &InterfaceSet,
    spec: &'a MessageSpec,
) -> Result<Vec<FieldInfo<'a>>, NativeError> {
    spec.fields
        .iter()
        .map(|field| {
            check_ident(&spec.name, &field.name)?;
            let elem = match &field.ty.base {
                BaseType::Primitive(Primitive::Bool) => Elem::Bool,
                BaseType::Primitive(p) => Elem::Num(*p),
                BaseType::String { bound } => Elem::String(*bound),
                BaseType::WString { bound } => Elem::WString(*bound),
                BaseType::Named(ty) => {
                    let nested = set.message(ty).ok_or_else(|| NativeError::UnresolvedType {
                        user: spec.name.clone(),
                        missing: ty.clone(),
                    })?;
                    Elem::Named {
                        ty: ty.clone(),
                        min_size: struct_min_size(set, nested, 0),
                    }
                }
            };
            Ok(FieldInfo {
                name: &field.name,
                elem,
                collection: field.ty.collection,
                field,
            })
        })
        .collect()
}

/// Nesting deeper than this is a cycle, which the registry rejects anyway.
const MAX_NESTING: usize = 64;

/// The smallest wire size of a structure, exactly as the Rust codec computes it.
pub(crate) fn struct_min_size(set: &InterfaceSet, spec: &MessageSpec, depth: usize) -> usize {
    if depth > MAX_NESTING {
        return 1;
    }
    let sum = spec
        .fields
        .iter()
        .map(|f| field_min_size(set, &f.ty, depth))
        .fold(0usize, usize::saturating_add);
    sum.max(1)
}

fn field_min_size(set: &InterfaceSet, ty: &FieldType, depth: usize) -> usize {
    let elem = match &ty.base {
        BaseType::Primitive(p) => p.size(),
        BaseType::String { .. } => 5,
        BaseType::WString { .. } => 4,
        BaseType::Named(name) => match set.message(name) {
            Some(spec) => struct_min_size(set, spec, depth + 1),
            None => 1,
        },
    };
    match ty.collection {
        Collection::Single => elem,
        Collection::Array(n) => elem.saturating_mul(n),
        Collection::BoundedSequence(_) | Collection::UnboundedSequence => 4,
    }
}

/// Keywords of C11 and C++17 (and the alternative operator spellings), which rosidl does not
/// rename either; a field or constant with such a name is refused.
const KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "const",
    "const_cast",
    "constexpr",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
];

pub(crate) fn check_ident(ty: &TypeName, name: &str) -> Result<(), NativeError> {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid && !KEYWORDS.contains(&name) {
        Ok(())
    } else {
        Err(NativeError::InvalidName {
            ty: ty.clone(),
            name: name.to_owned(),
        })
    }
}

/// The include guard of a header: `STD_MSGS__MSG__STRING_HPP_`.
pub(crate) fn include_guard(name: &TypeName, lang: Lang) -> String {
    format!(
        "{}__{}__{}_{}_",
        name.package,
        name.kind.as_str(),
        snake_case(&name.name),
        lang.extension()
    )
    .to_uppercase()
}

/// Other interface files whose headers `interface`'s header includes, sorted.
pub(crate) fn includes(
    set: &InterfaceSet,
    interface: &Interface,
) -> Result<Vec<TypeName>, NativeError> {
    dependencies(set, interface)
}

/// A C/C++ string literal body for UTF-8 text: printable ASCII as is, everything else as
/// three-digit octal escapes (which, unlike `\x`, cannot swallow the next character).
pub(crate) fn c_string_body(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for b in text.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            // `??x` would be a trigraph in old C.
            b'?' => out.push_str("\\?"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}

/// Integer literal text for a value of primitive type `p`, `None` if out of range. The most
/// negative value of a signed type is written as an expression (`-9223372036854775807LL - 1`),
/// since its digits alone do not fit the type.
pub(crate) fn int_literal(p: Primitive, v: i128) -> Option<String> {
    let (min, max, suffix): (i128, i128, &str) = match p {
        Primitive::Byte | Primitive::Char | Primitive::Uint8 => (0, 255, "u"),
        Primitive::Int8 => (-128, 127, ""),
        Primitive::Int16 => (i16::MIN.into(), i16::MAX.into(), ""),
        Primitive::Uint16 => (0, u16::MAX.into(), "u"),
        Primitive::Int32 => (i32::MIN.into(), i32::MAX.into(), ""),
        Primitive::Uint32 => (0, u32::MAX.into(), "u"),
        Primitive::Int64 => (i64::MIN.into(), i64::MAX.into(), "LL"),
        Primitive::Uint64 => (0, u64::MAX.into(), "ULL"),
        Primitive::Bool | Primitive::Float32 | Primitive::Float64 => return None,
    };
    if !(min..=max).contains(&v) {
        return None;
    }
    if v == min && min < 0 {
        return Some(format!("({}{suffix} - 1)", min + 1));
    }
    Some(format!("{v}{suffix}"))
}

/// A floating-point literal (`1.5`, `1e-05f`); `nan`/`inf` as the given expressions.
pub(crate) fn float_literal(v: f64, single: bool, nan: &str, inf: &str) -> Option<String> {
    if v.is_nan() {
        return Some(nan.to_owned());
    }
    if v.is_infinite() {
        return Some(if v > 0.0 {
            inf.to_owned()
        } else {
            format!("-{inf}")
        });
    }
    if single {
        let s = v as f32;
        if s.is_infinite() {
            return None;
        }
        let text = format!("{s:?}");
        let text = if text.contains(['.', 'e']) {
            text
        } else {
            format!("{text}.0")
        };
        Some(format!("{text}f"))
    } else {
        let text = format!("{v:?}");
        Some(if text.contains(['.', 'e']) {
            text
        } else {
            format!("{text}.0")
        })
    }
}

/// A C/C++ literal for one scalar value of type `ty` (a constant's value or one element of a
/// field default), `None` if it does not fit. `nan`/`inf` are the language's spellings.
pub(crate) fn scalar_literal(
    ty: &BaseType,
    lit: &Literal,
    nan: (&str, &str),
    inf: (&str, &str),
) -> Option<String> {
    match (ty, lit) {
        (BaseType::Primitive(Primitive::Bool), Literal::Bool(b)) => Some(b.to_string()),
        (BaseType::Primitive(Primitive::Float32), Literal::Int(i)) => {
            float_literal(*i as f64, true, nan.0, inf.0)
        }
        (BaseType::Primitive(Primitive::Float32), Literal::Float(f)) => {
            float_literal(*f, true, nan.0, inf.0)
        }
        (BaseType::Primitive(Primitive::Float64), Literal::Int(i)) => {
            float_literal(*i as f64, false, nan.1, inf.1)
        }
        (BaseType::Primitive(Primitive::Float64), Literal::Float(f)) => {
            float_literal(*f, false, nan.1, inf.1)
        }
        (BaseType::Primitive(p), Literal::Int(i)) => int_literal(*p, *i),
        // `char c 'A'`: a one-byte string literal for an 8-bit char.
        (BaseType::Primitive(p @ (Primitive::Char | Primitive::Byte)), Literal::String(s)) => {
            match s.as_bytes() {
                [b] => int_literal(*p, i128::from(*b)),
                _ => None,
            }
        }
        (BaseType::String { bound }, Literal::String(s)) => {
            let fits = bound.is_none_or(|b| s.len() <= b) && !s.contains('\0');
            fits.then(|| format!("\"{}\"", c_string_body(s)))
        }
        (BaseType::WString { bound }, Literal::String(s)) => {
            let fits = bound.is_none_or(|b| s.encode_utf16().count() <= b) && !s.contains('\0');
            fits.then(|| format!("u\"{}\"", u16_string_body(s)))
        }
        _ => None,
    }
}

/// A `u"..."` literal body: printable ASCII as is, other ASCII as octal escapes, the rest as
/// universal character names.
pub(crate) fn u16_string_body(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '?' => out.push_str("\\?"),
            ' '..='~' => out.push(c),
            c if u32::from(c) < 0x80 => out.push_str(&format!("\\{:03o}", u32::from(c))),
            c if u32::from(c) <= 0xffff => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08x}", u32::from(c))),
        }
    }
    out
}

/// Generated text with C-style two-space indentation.
#[derive(Default)]
pub(crate) struct Code {
    pub(crate) text: String,
    depth: usize,
}

impl Code {
    pub(crate) fn line(&mut self, line: impl AsRef<str>) {
        let line = line.as_ref();
        if !line.is_empty() {
            for _ in 0..self.depth {
                self.text.push_str("  ");
            }
            self.text.push_str(line);
        }
        self.text.push('\n');
    }

    pub(crate) fn open(&mut self, line: impl AsRef<str>) {
        self.line(line);
        self.depth += 1;
    }

    /// A function signature, then its opening brace on a line of its own.
    pub(crate) fn func(&mut self, signature: impl AsRef<str>) {
        self.line(signature);
        self.open("{");
    }

    pub(crate) fn close(&mut self, line: impl AsRef<str>) {
        self.depth = self.depth.saturating_sub(1);
        self.line(line);
    }

    pub(crate) fn blank(&mut self) {
        self.text.push('\n');
    }
}

/// Interface files by package, for callers listing what they generate.
pub fn by_package(names: &[TypeName]) -> BTreeMap<&str, usize> {
    let mut map = BTreeMap::new();
    for name in names {
        *map.entry(name.package.as_str()).or_insert(0) += 1;
    }
    map
}

#[cfg(test)]
mod tests;
