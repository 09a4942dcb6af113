//! The IDL interface files rosidl writes and reads: `share/<pkg>/{msg,srv,action}/<Name>.idl`.
//!
//! ROS 2 builds every interface from IDL: `rosidl_adapter` turns each `.msg`, `.srv` and
//! `.action` into an `.idl` file, and a package may write `.idl` files itself (test_msgs'
//! keyed types exist only as `.idl`). What is read here is the subset of OMG IDL 4.2 that
//! `rosidl_parser` reads (`rosidl_parser/grammar.lark` and `parser.py`), with the same
//! meaning:
//!
//! - a file holds `module <package> { module <msg|srv|action> { ... }; };` with one struct
//!   for a message, `<Name>_Request` and `<Name>_Response` for a service, and `<Name>_Goal`,
//!   `<Name>_Result` and `<Name>_Feedback` for an action (the types rosidl builds around a
//!   service or an action are added as for `.srv` and `.action` files);
//! - member types: `boolean`, `octet`, `int8` ... `uint64` and their IDL spellings (`short`,
//!   `long`, `long long`, `unsigned ...`), `float`, `double`, `string`, `wstring`,
//!   `string<N>`, `wstring<N>`, `sequence<T>`, `sequence<T, N>`, fixed arrays `T name[N]`,
//!   other messages as `pkg::msg::Name`, and typedefs of all of these declared anywhere in the
//!   file (rosidl_adapter writes `typedef double double__9[9];`);
//! - constants in a module `<Struct>_Constants` beside the struct;
//! - annotations: `@key` makes a member part of the key, `@default(value=...)` gives its
//!   default (for arrays and sequences a Python tuple or list in a string, as
//!   `rosidl_adapter` writes it). Every other annotation is accepted and has no effect, as in
//!   rosidl, whose generators read only `key`, `default` and `verbatim`: `@verbatim` (comments),
//!   `@unit`, `@range`, `@min`, `@max` document a member; `@optional`, `@id`, `@final`,
//!   `@appendable`, `@mutable` and the other XTypes annotations change nothing in the types
//!   rosidl generates, so a member marked `@optional` is always present, as it is for rclcpp
//!   and rclpy;
//! - a struct whose one member is rosidl's `uint8 structure_needs_at_least_one_member` is an
//!   empty message, as an empty `.msg` file is.
//!
//! Refused, each where it is written and with what to do instead: IDL `char`, `wchar`,
//! `long double` and `fixed` (rosidl maps a `.msg` `char` to `uint8`, which is read), unions,
//! inheritance, multi-dimensional arrays, sequences of sequences or of arrays, bounds given as
//! constants, expressions with operators, octal literals, preprocessor directives other than
//! `#include`, and files whose modules or structs do not match the package, the folder and the
//! file name. Defaults and constants are checked against their types as `.msg` ones are.

mod grammar;
mod lexer;
mod pylit;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use crate::ast::{
    BaseType, Collection, Constant, Field, FieldType, Interface, InterfaceKind, MessageSpec,
    TypeName,
};

use self::grammar::{
    Annotation, AnnotationParams, ConstDcl, Definition, Expr, Ident, Member, StructDef, TypeSpec,
    TypedefDcl, Value,
};
use super::{
    build_action, build_service, is_lower_snake, is_upper_camel, value, ParseError,
    LOWER_SNAKE_RULE, UPPER_CAMEL_RULE,
};

/// A place in the file: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    line: usize,
    column: usize,
}

/// The member rosidl_adapter writes into the struct of an empty `.msg`
/// (`rosidl_parser/definition.py`, `EMPTY_STRUCTURE_REQUIRED_MEMBER_NAME`).
const EMPTY_STRUCTURE_MEMBER: &str = "structure_needs_at_least_one_member";

/// How deep typedefs may refer to typedefs before a chain counts as a cycle.
const MAX_TYPEDEF_DEPTH: usize = 32;

/// Parses the `.idl` file of interface `name` (the file stem) of `package`, found in the
/// `kind` folder. `file` is only used in error messages.
///
/// # Errors
///
/// [`ParseError`] with line and column for the first thing rosidl would not read, or would
/// read as another type than the file's name and folder say.
pub fn parse_idl(
    package: &str,
    kind: InterfaceKind,
    name: &str,
    text: &str,
    file: &str,
) -> Result<Interface, ParseError> {
    let ctx = Ctx {
        package,
        kind,
        file,
    };
    if !is_lower_snake(package) {
        return Err(ctx.whole_file(format!(
            "invalid package name '{package}': expected {LOWER_SNAKE_RULE}"
        )));
    }
    if !is_upper_camel(name) {
        return Err(ctx.whole_file(format!(
            "invalid interface name '{name}': expected {UPPER_CAMEL_RULE}"
        )));
    }
    let tokens = lexer::tokens(text).map_err(|(pos, message)| ctx.error(pos, message))?;
    let definitions =
        grammar::specification(&tokens).map_err(|(pos, message)| ctx.error(pos, message))?;
    let mut found = Found::default();
    found.collect(&definitions, &mut Vec::new());
    let file_ctx = FileCtx {
        ctx: &ctx,
        typedefs: &found.typedefs,
        enums: &found.enums,
        structs: found
            .structs
            .iter()
            .map(|(_, s)| s.name.text.as_str())
            .collect(),
    };

    let parts: &[&str] = match kind {
        InterfaceKind::Msg => &[""],
        InterfaceKind::Srv => &["_Request", "_Response"],
        InterfaceKind::Action => &["_Goal", "_Result", "_Feedback"],
    };
    let wanted: Vec<String> = parts.iter().map(|p| format!("{name}{p}")).collect();
    let module = format!("{package}::{}", kind.as_str());
    for (path, def) in &found.structs {
        if !wanted.contains(&def.name.text) {
            return Err(ctx.error(
                def.name.pos,
                format!(
                    "unexpected struct '{}': {} defines {} (the file name says which)",
                    def.name.text,
                    describe_file(kind, name),
                    list(&wanted)
                ),
            ));
        }
        if path.join("::") != module {
            return Err(ctx.error(
                def.name.pos,
                format!(
                    "struct '{}' is in module '{}': expected module '{module}' (the package and \
                     the folder the file is in)",
                    def.name.text,
                    path.join("::")
                ),
            ));
        }
    }
    let mut specs = Vec::new();
    for wanted_name in &wanted {
        let mut matching = found
            .structs
            .iter()
            .filter(|(_, s)| s.name.text == *wanted_name);
        let Some((_, def)) = matching.next() else {
            return Err(ctx.error(
                end_of(&tokens),
                format!(
                    "expected struct '{wanted_name}' in module '{module}': {} defines {}",
                    describe_file(kind, name),
                    list(&wanted)
                ),
            ));
        };
        if let Some((_, again)) = matching.next() {
            return Err(ctx.error(
                again.name.pos,
                format!(
                    "struct '{wanted_name}' is defined twice (first on line {})",
                    def.name.pos.line
                ),
            ));
        }
        let type_name = TypeName::new(package, kind, wanted_name);
        specs.push(file_ctx.message(type_name, def)?);
    }
    file_ctx.attach_constants(&found.constants, &mut specs, &module)?;

    let interface_name = TypeName::new(package, kind, name);
    let mut specs = specs.into_iter();
    let mut next = || {
        specs
            .next()
            .expect("internal bug: one spec per wanted struct")
    };
    Ok(match kind {
        InterfaceKind::Msg => Interface::Message(next()),
        InterfaceKind::Srv => {
            let request = next();
            Interface::Service(build_service(interface_name, request, next()))
        }
        InterfaceKind::Action => {
            let goal = next();
            let result = next();
            Interface::Action(build_action(interface_name, goal, result, next()))
        }
    })
}

fn describe_file(kind: InterfaceKind, name: &str) -> String {
    let what = match kind {
        InterfaceKind::Msg => "message",
        InterfaceKind::Srv => "service",
        InterfaceKind::Action => "action",
    };
    format!("the {what} file {name}.idl")
}

fn list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match quoted.as_slice() {
        [one] => format!("struct {one} only"),
        [init @ .., last] => format!("structs {} and {last}", init.join(", ")),
        [] => "no struct".to_owned(),
    }
}

fn end_of(tokens: &[(Pos, lexer::Tok)]) -> Pos {
    tokens
        .last()
        .map_or(Pos { line: 1, column: 1 }, |(pos, _)| *pos)
}

struct Ctx<'a> {
    package: &'a str,
    kind: InterfaceKind,
    file: &'a str,
}

impl Ctx<'_> {
    fn error(&self, pos: Pos, message: impl Into<String>) -> ParseError {
        ParseError {
            file: self.file.to_owned(),
            line: pos.line,
            column: pos.column,
            message: message.into(),
        }
    }

    fn whole_file(&self, message: String) -> ParseError {
        ParseError {
            file: self.file.to_owned(),
            line: 0,
            column: 0,
            message,
        }
    }
}

/// Everything the file declares, by kind, with the module path of each.
#[derive(Default)]
struct Found<'a> {
    structs: Vec<(Vec<String>, &'a StructDef)>,
    /// Every typedef of each name: rosidl keys typedefs by name across the whole file.
    typedefs: BTreeMap<String, Vec<&'a TypedefDcl>>,
    constants: Vec<(Vec<String>, &'a ConstDcl)>,
    enums: BTreeSet<String>,
}

impl<'a> Found<'a> {
    fn collect(&mut self, definitions: &'a [Definition], path: &mut Vec<String>) {
        for definition in definitions {
            match definition {
                Definition::Module { name, body } => {
                    path.push(name.text.clone());
                    self.collect(body, path);
                    path.pop();
                }
                Definition::Const(c) => self.constants.push((path.clone(), c)),
                Definition::Struct(s) => self.structs.push((path.clone(), s)),
                Definition::Typedef(t) => self
                    .typedefs
                    .entry(t.declarator.name.text.clone())
                    .or_default()
                    .push(t),
                Definition::Enum(e) => {
                    self.enums.insert(e.text.clone());
                }
                Definition::ForwardStruct(_) | Definition::Include => {}
            }
        }
    }
}

/// What resolving names needs to know about the whole file.
struct FileCtx<'a> {
    ctx: &'a Ctx<'a>,
    typedefs: &'a BTreeMap<String, Vec<&'a TypedefDcl>>,
    enums: &'a BTreeSet<String>,
    structs: Vec<&'a str>,
}

impl FileCtx<'_> {
    fn error(&self, pos: Pos, message: impl Into<String>) -> ParseError {
        self.ctx.error(pos, message)
    }

    /// One struct as a message: its members in order, keys and defaults.
    fn message(&self, name: TypeName, def: &StructDef) -> Result<MessageSpec, ParseError> {
        let mut fields: Vec<Field> = Vec::new();
        for member in &def.members {
            let ty = self.resolve(&member.ty, 0)?;
            let (key, default) = self.member_annotations(member)?;
            for declarator in &member.declarators {
                let ty = match declarator.array {
                    None => ty.clone(),
                    Some(n) if ty.collection == Collection::Single => FieldType {
                        base: ty.base.clone(),
                        collection: Collection::Array(n as usize),
                    },
                    Some(_) => {
                        return Err(self.error(
                            declarator.name.pos,
                            format!(
                                "'{}' is an array of {}, a multi-dimensional array, which rosidl \
                                 does not support",
                                declarator.name.text, ty
                            ),
                        ));
                    }
                };
                if let Some(earlier) = fields.iter().find(|f| f.name == declarator.name.text) {
                    return Err(self.error(
                        declarator.name.pos,
                        format!(
                            "duplicate member name '{}': expected a name not already used on \
                             line {}",
                            declarator.name.text, earlier.line
                        ),
                    ));
                }
                let default = match default {
                    None => None,
                    Some(expr) => Some(self.default_value(&declarator.name, &ty, expr)?),
                };
                fields.push(Field {
                    name: declarator.name.text.clone(),
                    ty,
                    default,
                    line: declarator.name.pos.line,
                    key,
                });
            }
        }
        if let [only] = fields.as_slice() {
            let placeholder = FieldType {
                base: BaseType::Primitive(crate::ast::Primitive::Uint8),
                collection: Collection::Single,
            };
            if only.name == EMPTY_STRUCTURE_MEMBER && only.ty == placeholder && !only.key {
                fields.clear();
            }
        }
        Ok(MessageSpec {
            name,
            fields,
            constants: Vec::new(),
        })
    }

    /// A type as written, typedefs followed, as the field type it stands for.
    fn resolve(&self, spec: &TypeSpec, depth: usize) -> Result<FieldType, ParseError> {
        let single = |base| FieldType {
            base,
            collection: Collection::Single,
        };
        match spec {
            TypeSpec::Primitive(p, _) => Ok(single(BaseType::Primitive(*p))),
            TypeSpec::String { wide, bound, .. } => {
                let bound = bound.map(|n| n as usize);
                Ok(single(if *wide {
                    BaseType::WString { bound }
                } else {
                    BaseType::String { bound }
                }))
            }
            TypeSpec::Sequence {
                element,
                bound,
                pos,
            } => {
                let element = self.resolve(element, depth)?;
                if element.collection != Collection::Single {
                    return Err(self.error(
                        *pos,
                        format!(
                            "a sequence of {element} (an array or sequence) is not supported by \
                             rosidl: wrap the inner one in a struct"
                        ),
                    ));
                }
                Ok(FieldType {
                    base: element.base,
                    collection: match bound {
                        Some(n) => Collection::BoundedSequence(*n as usize),
                        None => Collection::UnboundedSequence,
                    },
                })
            }
            TypeSpec::Scoped { parts, pos } => match parts.as_slice() {
                [alias] => self.typedef(alias, *pos, depth),
                [package, kind, name] => self.message_type(package, kind, name, *pos),
                _ => Err(self.error(
                    *pos,
                    format!(
                        "unknown type '{}': expected a typedef declared in this file or a \
                         message written 'package::msg::Name'",
                        parts.join("::")
                    ),
                )),
            },
        }
    }

    /// A name declared with `typedef`, resolved. rosidl keeps one typedef per name; the same
    /// name declared again must say the same.
    fn typedef(&self, alias: &str, pos: Pos, depth: usize) -> Result<FieldType, ParseError> {
        let Some(declarations) = self.typedefs.get(alias) else {
            let hint = if self.enums.contains(alias) {
                "it is an enum, and rosidl's generators have no enum types (use an integer \
                 type and constants)"
                    .to_owned()
            } else if self.structs.contains(&alias) {
                format!(
                    "a struct of this file is named so; write it as '{}::{}::{alias}'",
                    self.ctx.package,
                    self.ctx.kind.as_str()
                )
            } else {
                "expected a primitive type, string, wstring, sequence<...>, a typedef declared \
                 in this file, or a message written 'package::msg::Name'"
                    .to_owned()
            };
            return Err(self.error(pos, format!("unknown type '{alias}': {hint}")));
        };
        if depth >= MAX_TYPEDEF_DEPTH {
            return Err(self.error(
                pos,
                format!("typedef '{alias}' leads back to itself through other typedefs"),
            ));
        }
        let mut resolved: Option<FieldType> = None;
        for declaration in declarations {
            let ty = self.resolve(&declaration.ty, depth + 1)?;
            let ty = match declaration.declarator.array {
                None => ty,
                Some(n) if ty.collection == Collection::Single => FieldType {
                    base: ty.base,
                    collection: Collection::Array(n as usize),
                },
                Some(_) => {
                    return Err(self.error(
                        declaration.declarator.name.pos,
                        format!(
                            "typedef '{alias}' is an array of {ty}, a multi-dimensional array, \
                             which rosidl does not support"
                        ),
                    ));
                }
            };
            match &resolved {
                Some(first) if *first != ty => {
                    return Err(self.error(
                        declaration.declarator.name.pos,
                        format!(
                            "typedef '{alias}' is declared again as another type: {ty} here, \
                             {first} before"
                        ),
                    ));
                }
                _ => resolved = Some(ty),
            }
        }
        Ok(resolved.expect("internal bug: a typedef name has a declaration"))
    }

    /// `package::msg::Name`.
    fn message_type(
        &self,
        package: &str,
        kind: &str,
        name: &str,
        pos: Pos,
    ) -> Result<FieldType, ParseError> {
        if kind != "msg" {
            return Err(self.error(
                pos,
                format!(
                    "expected a message type 'package::msg::Name', found \
                     '{package}::{kind}::{name}' (members can only be messages)"
                ),
            ));
        }
        if !is_lower_snake(package) {
            return Err(self.error(
                pos,
                format!("invalid package name '{package}' in type '{package}::msg::{name}': expected {LOWER_SNAKE_RULE}"),
            ));
        }
        if !is_upper_camel(name) {
            return Err(self.error(
                pos,
                format!("invalid message name '{name}' in type '{package}::msg::{name}': expected {UPPER_CAMEL_RULE}"),
            ));
        }
        Ok(FieldType {
            base: BaseType::Named(TypeName::new(package, InterfaceKind::Msg, name)),
            collection: Collection::Single,
        })
    }

    /// `@key` and the expression of `@default(value=...)`; every other annotation has no
    /// effect (see the module documentation).
    fn member_annotations<'m>(
        &self,
        member: &'m Member,
    ) -> Result<(bool, Option<&'m Expr>), ParseError> {
        let mut key = false;
        let mut default: Option<&Expr> = None;
        for Annotation { name, pos, params } in &member.annotations {
            match name.as_str() {
                "key" => {
                    key = match params {
                        AnnotationParams::None => true,
                        AnnotationParams::Single(e) => self.key_flag(e)?,
                        AnnotationParams::Named(named) => match named.as_slice() {
                            [(param, e)] if param.text == "value" => self.key_flag(e)?,
                            _ => {
                                return Err(self.error(
                                    *pos,
                                    "expected '@key', '@key(TRUE)' or '@key(value=TRUE)'",
                                ))
                            }
                        },
                    };
                }
                "default" => {
                    if default.is_some() {
                        return Err(self.error(
                            *pos,
                            "a second '@default': expected at most one default per member",
                        ));
                    }
                    default =
                        Some(match params {
                            AnnotationParams::Named(named) => {
                                match named.as_slice() {
                                    [(param, e)] if param.text == "value" => e,
                                    _ => return Err(self.error(
                                        *pos,
                                        "expected '@default(value=...)' with the one parameter \
                                     'value'",
                                    )),
                                }
                            }
                            _ => return Err(self.error(
                                *pos,
                                "expected '@default(value=...)': rosidl reads the default from \
                                 the parameter 'value'",
                            )),
                        });
                }
                _ => {}
            }
        }
        Ok((key, default))
    }

    /// rosidl's type supports treat a member with any `@key` as a key, so `@key(FALSE)`, which
    /// would mean the opposite in DDS, is refused rather than read either way.
    fn key_flag(&self, expr: &Expr) -> Result<bool, ParseError> {
        match expr.value {
            Value::Bool(true) => Ok(true),
            Value::Bool(false) => Err(self.error(
                expr.pos,
                "'@key(FALSE)' is not supported: rosidl's type supports make every member with \
                 a '@key' annotation a key; remove the annotation instead",
            )),
            ref other => Err(self.error(
                expr.pos,
                format!("expected TRUE in '@key(...)', found {}", other.describe()),
            )),
        }
    }

    /// A member's `@default` value, checked against its type as a `.msg` default is.
    fn default_value(
        &self,
        member: &Ident,
        ty: &FieldType,
        expr: &Expr,
    ) -> Result<crate::ast::Literal, ParseError> {
        if let BaseType::Named(_) = ty.base {
            return Err(self.error(
                expr.pos,
                format!(
                    "member '{}' has the message type {ty}, which cannot have a default value",
                    member.text
                ),
            ));
        }
        let text = if ty.collection == Collection::Single {
            self.scalar_text(expr)?
        } else {
            let Value::String(python) = &expr.value else {
                return Err(self.error(
                    expr.pos,
                    format!(
                        "expected the default of array member '{}' as a string holding a Python \
                         tuple or list (as rosidl_adapter writes it, e.g. \"(1, 2, 3)\"), found {}",
                        member.text,
                        expr.value.describe()
                    ),
                ));
            };
            let elements = pylit::parse_sequence(python).map_err(|message| {
                self.error(
                    expr.pos,
                    format!("default of member '{}': {message}", member.text),
                )
            })?;
            let texts: Vec<String> = elements.iter().map(pylit::Element::to_msg_text).collect();
            format!("[{}]", texts.join(", "))
        };
        value::parse_default(ty, &ty.to_string(), &text).map_err(|message| {
            self.error(
                expr.pos,
                format!("default value of member '{}': {message}", member.text),
            )
        })
    }

    /// A literal written as `.msg` text, for the `.msg` value rules to check.
    fn scalar_text(&self, expr: &Expr) -> Result<String, ParseError> {
        Ok(match &expr.value {
            Value::Bool(b) => b.to_string(),
            Value::Int(v) => v.to_string(),
            Value::Float(v) => format!("{v:?}"),
            Value::String(s) | Value::WString(s) => pylit::quote_msg_string(s),
            Value::Name(name) => {
                return Err(self.error(
                    expr.pos,
                    format!(
                        "expected a literal value, found the name '{name}' (rosidl reads only \
                         literal values here)"
                    ),
                ))
            }
        })
    }

    /// Adds each `<Struct>_Constants` module's constants to its struct.
    fn attach_constants(
        &self,
        constants: &[(Vec<String>, &ConstDcl)],
        specs: &mut [MessageSpec],
        module: &str,
    ) -> Result<(), ParseError> {
        for (path, constant) in constants {
            let Some((holder, outer)) = path.split_last() else {
                return Err(self.error(
                    constant.name.pos,
                    format!(
                        "constant '{}' is outside any module: expected it in module \
                         '{module}::<Struct>_Constants'",
                        constant.name.text
                    ),
                ));
            };
            let owner = holder
                .strip_suffix("_Constants")
                .and_then(|s| specs.iter().position(|spec| spec.name.name == s));
            let (Some(index), true) = (owner, outer.join("::") == module) else {
                return Err(self.error(
                    constant.name.pos,
                    format!(
                        "constant '{}' is in module '{}': rosidl attaches constants to a struct \
                         only from module '{module}::<Struct>_Constants' of a struct this file \
                         defines",
                        constant.name.text,
                        path.join("::")
                    ),
                ));
            };
            let spec = &mut specs[index];
            let constant = self.constant(constant)?;
            if spec.constants.iter().any(|c| c.name == constant.name) {
                return Err(self.error(
                    Pos {
                        line: constant.line,
                        column: 0,
                    },
                    format!(
                        "duplicate constant name '{}' in module '{}'",
                        constant.name, holder
                    ),
                ));
            }
            spec.constants.push(constant);
        }
        Ok(())
    }

    fn constant(&self, dcl: &ConstDcl) -> Result<Constant, ParseError> {
        let ty = match &dcl.ty {
            TypeSpec::Primitive(p, _) => BaseType::Primitive(*p),
            // rosidl types a string constant by its value (`BoundedString(len(value))`), so a
            // bound written in the declaration means nothing.
            TypeSpec::String { wide: false, .. } => BaseType::String { bound: None },
            TypeSpec::String { wide: true, .. } => BaseType::WString { bound: None },
            other => {
                return Err(self.error(
                    other.pos(),
                    format!(
                        "constant '{}' has a type that is no primitive type, string or \
                         wstring, which rosidl does not support for constants",
                        dcl.name.text
                    ),
                ))
            }
        };
        let ty_text = FieldType {
            base: ty.clone(),
            collection: Collection::Single,
        }
        .to_string();
        let text = self.scalar_text(&dcl.value)?;
        let value = value::parse_constant(&ty, &ty_text, &text).map_err(|message| {
            self.error(
                dcl.value.pos,
                format!("value of constant '{}': {message}", dcl.name.text),
            )
        })?;
        Ok(Constant {
            name: dcl.name.text.clone(),
            ty,
            value,
            line: dcl.name.pos.line,
        })
    }
}
