//! One message struct: its Rust field types, `Default`, `CdrEncode` and `CdrDecode`.
//!
//! Wire layout is plain CDR (XCDR1, DDS-XTypes 1.3 §7.4.1) as ROS 2's DDS RMWs write it (see
//! docs/ros2-interop.md §7): primitives aligned to their size from the start of
//! the stream, strings as `u32` length with NUL, sequences as `u32` count then elements, fixed
//! arrays without a count, and a struct with no fields as one dummy byte.
//!
//! Everything here only produces text; which types exist and what they hash to is the caller's
//! business ([`Resolver`]).

use super::{Code, GenError, Scope};
use crate::ast::{
    BaseType, Collection, Field, FieldType, Literal, MessageSpec, Primitive, TypeName,
};

/// Finds the definition of a nested type, for its minimum wire size.
pub(super) type Resolver<'a> = dyn Fn(&TypeName) -> Option<&'a MessageSpec> + 'a;

/// Nesting deeper than this is a definition cycle (rejected by the registry anyway); the minimum
/// size computation stops there instead of recursing forever.
const MAX_NESTING: usize = 64;

/// Writes the struct, its constants, `Default`, `CdrEncode` and `CdrDecode`.
pub(super) fn emit_message(
    code: &mut Code,
    scope: &Scope<'_>,
    spec: &MessageSpec,
    resolve: &Resolver<'_>,
) -> Result<(), GenError> {
    let name = scope.type_ident(&spec.name)?;
    let fields = spec
        .fields
        .iter()
        .map(|field| FieldGen::new(scope, spec, field, resolve))
        .collect::<Result<Vec<_>, _>>()?;
    let cdr = scope.cdr();

    code.line(format!("/// Message `{}`.", spec.name));
    code.line("#[derive(Clone, Debug, PartialEq)]");
    if fields.is_empty() {
        code.line(format!("pub struct {name} {{}}"));
    } else {
        code.open(format!("pub struct {name} {{"));
        for f in &fields {
            code.line(format!("pub {}: {},", f.ident, f.ty));
        }
        code.close("}");
    }

    if !spec.constants.is_empty() {
        code.blank();
        code.open(format!("impl {name} {{"));
        for constant in &spec.constants {
            let (ty, value) = constant_code(&constant.ty, &constant.value).ok_or_else(|| {
                GenError::InvalidLiteral {
                    ty: spec.name.clone(),
                    member: constant.name.clone(),
                    line: constant.line,
                }
            })?;
            code.line(format!("pub const {}: {ty} = {value};", constant.name));
        }
        code.close("}");
    }

    code.blank();
    code.open(format!("impl ::core::default::Default for {name} {{"));
    code.open("fn default() -> Self {");
    if fields.is_empty() {
        code.line("Self {}");
    } else {
        code.open("Self {");
        for f in &fields {
            code.line(format!("{}: {},", f.ident, f.default));
        }
        code.close("}");
    }
    code.close("}");
    code.close("}");

    code.blank();
    code.open(format!("impl {cdr}::CdrEncode for {name} {{"));
    code.open("fn encode(");
    code.line("&self,");
    code.line(format!("w: &mut {cdr}::CdrWriter,"));
    code.close(format!(
        ") -> ::core::result::Result<(), {cdr}::EncodeError> {{"
    ));
    code.indent();
    if fields.is_empty() {
        code.line("w.write_empty_struct();");
    }
    for f in &fields {
        f.emit_encode(code);
    }
    code.line("::core::result::Result::Ok(())");
    code.close("}");
    code.close("}");

    code.blank();
    code.open(format!("impl {cdr}::CdrDecode for {name} {{"));
    code.open("fn decode(");
    code.line(format!("r: &mut {cdr}::CdrReader<'_>,"));
    code.close(format!(
        ") -> ::core::result::Result<Self, {cdr}::DecodeError> {{"
    ));
    code.indent();
    if fields.is_empty() {
        code.line("r.read_empty_struct()?;");
        code.line("::core::result::Result::Ok(Self {})");
    } else {
        // Struct literal fields are evaluated in the order written, which is the wire order.
        code.open("::core::result::Result::Ok(Self {");
        for f in &fields {
            f.emit_decode(code);
        }
        code.close("})");
    }
    code.close("}");
    code.close("}");
    Ok(())
}

/// How one element (a single value, or one element of an array or sequence) is handled.
enum Elem {
    /// A primitive that `roslite_cdr::Prim` covers: any number, not `bool`.
    Numeric(Primitive),
    Bool,
    String(Option<usize>),
    WString(Option<usize>),
    Named {
        path: String,
        min_size: usize,
    },
}

struct FieldGen {
    ident: String,
    ty: String,
    default: String,
    elem: Elem,
    collection: Collection,
    cdr: String,
}

impl FieldGen {
    fn new(
        scope: &Scope<'_>,
        spec: &MessageSpec,
        field: &Field,
        resolve: &Resolver<'_>,
    ) -> Result<Self, GenError> {
        let ident = scope.field_ident(&spec.name, &field.name)?;
        let elem = match &field.ty.base {
            BaseType::Primitive(Primitive::Bool) => Elem::Bool,
            BaseType::Primitive(p) => Elem::Numeric(*p),
            BaseType::String { bound } => Elem::String(*bound),
            BaseType::WString { bound } => Elem::WString(*bound),
            BaseType::Named(name) => {
                let nested = resolve(name).ok_or_else(|| GenError::UnresolvedType {
                    user: spec.name.clone(),
                    missing: name.clone(),
                })?;
                Elem::Named {
                    path: scope.type_path(name)?,
                    min_size: struct_min_size(nested, resolve, 0),
                }
            }
        };
        let ty = rust_type(scope, &elem, field.ty.collection);
        let default =
            default_code(scope, &elem, &field.ty, field.default.as_ref()).ok_or_else(|| {
                GenError::InvalidLiteral {
                    ty: spec.name.clone(),
                    member: field.name.clone(),
                    line: field.line,
                }
            })?;
        Ok(Self {
            ident,
            ty,
            default,
            elem,
            collection: field.ty.collection,
            cdr: scope.cdr(),
        })
    }

    fn emit_encode(&self, code: &mut Code) {
        let this = format!("self.{}", self.ident);
        match (self.collection, &self.elem) {
            (Collection::Single, Elem::Numeric(p)) => {
                code.line(format!("w.write_{}({this});", prim_type(*p)));
            }
            (Collection::Single, Elem::Bool) => code.line(format!("w.write_bool({this});")),
            (Collection::Single, elem) => encode_elem(code, elem, &format!("&{this}"), &self.cdr),
            (Collection::Array(_), Elem::Numeric(_)) => {
                code.line(format!("w.write_prim_slice(&{this});"));
            }
            (Collection::Array(_), elem) => {
                code.open(format!("for item in &{this} {{"));
                encode_elem(code, elem, "item", &self.cdr);
                code.close("}");
            }
            // `Seq<T>`: roslite-cdr writes the length and the body (an empty body gets no
            // alignment padding), or leaves the body as a hole for a reserved sequence.
            (Collection::BoundedSequence(bound), Elem::Numeric(_)) => {
                code.line(format!("w.write_bounded_prim_seq(&{this}, {bound})?;"));
            }
            (Collection::UnboundedSequence, Elem::Numeric(_)) => {
                code.line(format!("w.write_prim_seq(&{this})?;"));
            }
            (Collection::BoundedSequence(_) | Collection::UnboundedSequence, elem) => {
                match self.collection {
                    Collection::BoundedSequence(bound) => {
                        code.line(format!("w.write_bounded_len({this}.len(), {bound})?;"));
                    }
                    _ => code.line(format!("w.write_len({this}.len())?;")),
                }
                code.open(format!("for item in &{this} {{"));
                encode_elem(code, elem, "item", &self.cdr);
                code.close("}");
            }
        }
    }

    fn emit_decode(&self, code: &mut Code) {
        let ident = &self.ident;
        match (self.collection, &self.elem) {
            (Collection::Single, elem) => {
                assign(code, ident, &decode_elem(elem, &self.cdr));
            }
            (Collection::Array(_), Elem::Numeric(_)) => {
                code.line(format!("{ident}: r.read_prim_array()?,"));
            }
            (Collection::Array(n), elem) => {
                code.open(format!("{ident}: {{"));
                code.line(format!(
                    "let mut items: {} = {};",
                    self.ty,
                    array_fill(elem, n, "::core::default::Default::default()"),
                ));
                code.open("for item in &mut items {");
                let value = decode_elem(elem, &self.cdr);
                if let [single] = value.as_slice() {
                    code.line(format!("*item = {single};"));
                } else {
                    block(code, "*item = ", &value, ";");
                }
                code.close("}");
                code.line("items");
                code.close("},");
            }
            (Collection::BoundedSequence(_) | Collection::UnboundedSequence, elem) => {
                let min_size = elem_min_size(elem);
                code.open(format!("{ident}: {{"));
                match self.collection {
                    Collection::BoundedSequence(bound) => {
                        code.line(format!(
                            "let len = r.read_bounded_len({min_size}, {bound})?;"
                        ));
                    }
                    _ => code.line(format!("let len = r.read_len({min_size})?;")),
                }
                match elem {
                    Elem::Numeric(_) => code.line("r.read_prim_seq(len)?"),
                    elem => {
                        code.line("let mut items = ::std::vec::Vec::with_capacity(len);");
                        code.open("for _ in 0..len {");
                        let value = decode_elem(elem, &self.cdr);
                        if let [single] = value.as_slice() {
                            code.line(format!("items.push({single});"));
                        } else {
                            block(code, "items.push(", &value, ");");
                        }
                        code.close("}");
                        code.line("items");
                    }
                }
                code.close("},");
            }
        }
    }
}

/// `ident: value,` where `value` may span several lines (a block).
fn assign(code: &mut Code, ident: &str, value: &[String]) {
    if let [single] = value {
        code.line(format!("{ident}: {single},"));
    } else {
        block(code, &format!("{ident}: "), value, ",");
    }
}

/// `prefix{ <lines> }suffix`.
fn block(code: &mut Code, prefix: &str, lines: &[String], suffix: &str) {
    code.open(format!("{prefix}{{"));
    for line in lines {
        code.line(line);
    }
    code.close(format!("}}{suffix}"));
}

/// Statements that write one element; `item` is an expression of reference type.
fn encode_elem(code: &mut Code, elem: &Elem, item: &str, cdr: &str) {
    match elem {
        Elem::Numeric(p) => code.line(format!("w.write_{}(*{item});", prim_type(*p))),
        Elem::Bool => code.line(format!("w.write_bool(*{item});")),
        Elem::String(None) => code.line(format!("w.write_string({item})?;")),
        Elem::String(Some(bound)) => {
            code.line(format!("w.write_bounded_string({item}, {bound})?;"))
        }
        Elem::WString(None) => code.line(format!("w.write_wstring({item})?;")),
        // Bounds are counted strictly when sending (bytes, UTF-16 units: rclcpp's reading)
        // and leniently on receipt (characters: rclpy's); see `roslite_cdr::CdrReader`.
        Elem::WString(Some(bound)) => {
            code.line(format!("w.write_bounded_wstring({item}, {bound})?;"))
        }
        Elem::Named { .. } => code.line(format!("{cdr}::CdrEncode::encode({item}, w)?;")),
    }
}

/// An expression (one line, or the lines of a block body) reading one element.
fn decode_elem(elem: &Elem, cdr: &str) -> Vec<String> {
    match elem {
        Elem::Numeric(p) => vec![format!("r.read_{}()?", prim_type(*p))],
        Elem::Bool => vec!["r.read_bool()?".to_owned()],
        Elem::String(None) => vec!["::std::string::String::from(r.read_string()?)".to_owned()],
        Elem::String(Some(bound)) => {
            vec![format!(
                "::std::string::String::from(r.read_bounded_string({bound})?)"
            )]
        }
        Elem::WString(None) => vec!["r.read_wstring()?".to_owned()],
        Elem::WString(Some(bound)) => vec![format!("r.read_bounded_wstring({bound})?")],
        // The element type is inferred from the field, which keeps lines short.
        Elem::Named { .. } => vec![format!("{cdr}::CdrDecode::decode(r)?")],
    }
}

/// The fewest bytes one element can occupy on the wire, ignoring padding: what `read_len`
/// multiplies a received count by before anything is reserved.
fn elem_min_size(elem: &Elem) -> usize {
    match elem {
        Elem::Numeric(p) => p.size(),
        Elem::Bool => 1,
        // Length plus at least the NUL.
        Elem::String(_) => 5,
        // Fast DDS sends no terminator, so an empty wstring is only its length.
        Elem::WString(_) => 4,
        Elem::Named { min_size, .. } => *min_size,
    }
}

fn field_min_size(ty: &FieldType, resolve: &Resolver<'_>, depth: usize) -> usize {
    let elem = match &ty.base {
        BaseType::Primitive(p) => p.size(),
        BaseType::String { .. } => 5,
        BaseType::WString { .. } => 4,
        BaseType::Named(name) => match resolve(name) {
            Some(spec) => struct_min_size(spec, resolve, depth + 1),
            None => 1,
        },
    };
    match ty.collection {
        Collection::Single => elem,
        Collection::Array(n) => elem.saturating_mul(n),
        Collection::BoundedSequence(_) | Collection::UnboundedSequence => 4,
    }
}

fn struct_min_size(spec: &MessageSpec, resolve: &Resolver<'_>, depth: usize) -> usize {
    if depth > MAX_NESTING {
        return 1;
    }
    let sum = spec
        .fields
        .iter()
        .map(|f| field_min_size(&f.ty, resolve, depth))
        .fold(0usize, usize::saturating_add);
    // A struct without fields is one dummy byte.
    sum.max(1)
}

pub(super) fn prim_type(p: Primitive) -> &'static str {
    match p {
        Primitive::Bool => "bool",
        Primitive::Byte | Primitive::Char | Primitive::Uint8 => "u8",
        Primitive::Int8 => "i8",
        Primitive::Int16 => "i16",
        Primitive::Uint16 => "u16",
        Primitive::Int32 => "i32",
        Primitive::Uint32 => "u32",
        Primitive::Int64 => "i64",
        Primitive::Uint64 => "u64",
        Primitive::Float32 => "f32",
        Primitive::Float64 => "f64",
    }
}

fn elem_type(elem: &Elem) -> String {
    match elem {
        Elem::Numeric(p) => prim_type(*p).to_owned(),
        Elem::Bool => "bool".to_owned(),
        Elem::String(_) | Elem::WString(_) => "::std::string::String".to_owned(),
        Elem::Named { path, .. } => path.clone(),
    }
}

fn rust_type(scope: &Scope<'_>, elem: &Elem, collection: Collection) -> String {
    let t = elem_type(elem);
    match (collection, elem) {
        (Collection::Single, _) => t,
        (Collection::Array(n), _) => format!("[{t}; {n}]"),
        (_, Elem::Numeric(_)) => format!("{}::Seq<{t}>", scope.cdr()),
        _ => format!("::std::vec::Vec<{t}>"),
    }
}

/// `[x; n]` for `Copy` elements, `from_fn` otherwise (`[T; n]` with `n > 32` has no `Default`).
fn array_fill(elem: &Elem, n: usize, non_copy: &str) -> String {
    match elem {
        Elem::Numeric(p) => format!("[{}; {n}]", zero(*p)),
        Elem::Bool => format!("[false; {n}]"),
        _ => format!("::core::array::from_fn(|_| {non_copy})"),
    }
}

fn zero(p: Primitive) -> &'static str {
    match p {
        Primitive::Bool => "false",
        Primitive::Float32 | Primitive::Float64 => "0.0",
        _ => "0",
    }
}

/// The `Default` expression of a field; `None` if its `.msg` default does not fit its type.
fn default_code(
    scope: &Scope<'_>,
    elem: &Elem,
    ty: &FieldType,
    default: Option<&Literal>,
) -> Option<String> {
    let Some(default) = default else {
        return Some(match (ty.collection, elem) {
            (Collection::Single, Elem::Numeric(p)) => zero(*p).to_owned(),
            (Collection::Single, Elem::Bool) => "false".to_owned(),
            (Collection::Single, Elem::String(_) | Elem::WString(_)) => {
                "::std::string::String::new()".to_owned()
            }
            (Collection::Single, Elem::Named { .. }) => {
                "::core::default::Default::default()".to_owned()
            }
            (Collection::Array(n), elem) => {
                array_fill(elem, n, "::core::default::Default::default()")
            }
            (_, Elem::Numeric(_)) => format!("{}::Seq::new()", scope.cdr()),
            (_, _) => "::std::vec::Vec::new()".to_owned(),
        });
    };
    let value = |lit: &Literal| -> Option<String> {
        let text = literal_code(&ty.base, lit)?;
        Some(match elem {
            Elem::String(_) | Elem::WString(_) if text == "\"\"" => {
                "::std::string::String::new()".to_owned()
            }
            Elem::String(_) | Elem::WString(_) => format!("::std::string::String::from({text})"),
            _ => text,
        })
    };
    match ty.collection {
        Collection::Single => value(default),
        collection => {
            let Literal::Array(items) = default else {
                return None;
            };
            let items = items.iter().map(value).collect::<Option<Vec<_>>>()?;
            let fits = match collection {
                Collection::Array(n) => items.len() == n,
                Collection::BoundedSequence(bound) => items.len() <= bound,
                _ => true,
            };
            if !fits {
                return None;
            }
            let list = format!("[{}]", items.join(", "));
            Some(match (collection, elem) {
                (Collection::Array(_), _) => list,
                (_, _) if items.is_empty() => return default_code(scope, elem, ty, None),
                (_, Elem::Numeric(_)) => {
                    format!("{}::Seq::from(::std::vec::Vec::from({list}))", scope.cdr())
                }
                (_, _) => format!("::std::vec::Vec::from({list})"),
            })
        }
    }
}

/// The Rust type and value of a constant; `None` if the value does not fit.
fn constant_code(ty: &BaseType, value: &Literal) -> Option<(&'static str, String)> {
    let rust = match ty {
        BaseType::Primitive(p) => prim_type(*p),
        BaseType::String { .. } | BaseType::WString { .. } => "&'static str",
        BaseType::Named(_) => return None,
    };
    Some((rust, literal_code(ty, value)?))
}

/// A Rust literal for one scalar value of type `ty`.
fn literal_code(ty: &BaseType, lit: &Literal) -> Option<String> {
    match (ty, lit) {
        (BaseType::Primitive(Primitive::Bool), Literal::Bool(b)) => Some(b.to_string()),
        (BaseType::Primitive(Primitive::Float32), Literal::Int(i)) => float_code(*i as f64, true),
        (BaseType::Primitive(Primitive::Float32), Literal::Float(f)) => float_code(*f, true),
        (BaseType::Primitive(Primitive::Float64), Literal::Int(i)) => float_code(*i as f64, false),
        (BaseType::Primitive(Primitive::Float64), Literal::Float(f)) => float_code(*f, false),
        (BaseType::Primitive(p), Literal::Int(i)) => int_in_range(*p, *i).then(|| i.to_string()),
        // `char c 'A'`: a one-byte string literal for an 8-bit char.
        (BaseType::Primitive(p @ (Primitive::Char | Primitive::Byte)), Literal::String(s)) => {
            match s.as_bytes() {
                [b] => int_in_range(*p, i128::from(*b)).then(|| b.to_string()),
                _ => None,
            }
        }
        (BaseType::String { bound } | BaseType::WString { bound }, Literal::String(s)) => {
            let len = match ty {
                BaseType::WString { .. } => s.encode_utf16().count(),
                _ => s.len(),
            };
            let fits = match bound {
                Some(b) => len <= *b,
                None => true,
            };
            fits.then(|| format!("{s:?}"))
        }
        _ => None,
    }
}

fn int_in_range(p: Primitive, v: i128) -> bool {
    let (min, max): (i128, i128) = match p {
        Primitive::Byte | Primitive::Char | Primitive::Uint8 => (0, u8::MAX.into()),
        Primitive::Int8 => (i8::MIN.into(), i8::MAX.into()),
        Primitive::Int16 => (i16::MIN.into(), i16::MAX.into()),
        Primitive::Uint16 => (0, u16::MAX.into()),
        Primitive::Int32 => (i32::MIN.into(), i32::MAX.into()),
        Primitive::Uint32 => (0, u32::MAX.into()),
        Primitive::Int64 => (i64::MIN.into(), i64::MAX.into()),
        Primitive::Uint64 => (0, u64::MAX.into()),
        Primitive::Bool | Primitive::Float32 | Primitive::Float64 => return false,
    };
    (min..=max).contains(&v)
}

/// Shortest text that reads back as the same value, so no precision lint fires and the output is
/// stable; the element type comes from the context the literal appears in.
fn float_code(v: f64, single: bool) -> Option<String> {
    let t = if single { "f32" } else { "f64" };
    if v.is_nan() {
        return Some(format!("{t}::NAN"));
    }
    if v.is_infinite() {
        return Some(format!(
            "{t}::{}",
            if v > 0.0 { "INFINITY" } else { "NEG_INFINITY" }
        ));
    }
    if single {
        let s = v as f32;
        if s.is_infinite() {
            return None;
        }
        Some(format!("{s:?}"))
    } else {
        Some(format!("{v:?}"))
    }
}
