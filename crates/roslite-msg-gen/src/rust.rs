//! Rust code generation: one interface package becomes `pub mod msg`, `pub mod srv` and
//! `pub mod action` (only the non-empty ones), written against `roslite-msgs`' traits.
//!
//! Each message is a plain struct with public fields, a hand-written `Default` that honours the
//! `.msg` default values, `CdrEncode`/`CdrDecode` written directly against `CdrWriter` and
//! `CdrReader` (module `codec`), and `roslite_msgs::Message` with its type name, DDS type name,
//! RIHS01 hash and, for a keyed IDL type, its key layout ([`crate::key`]). A service or action is a unit marker struct whose trait impl ties the
//! synthesized messages (`_Request`, `_Response`, `_Event`, `_Goal`, ...) together.
//!
//! Invariants of the output:
//! - Everything from outside the module is named by an absolute path (`::std::string::String`,
//!   `::core::result::Result`, `<msgs>::cdr::CdrWriter`): interface names such as
//!   `std_msgs/msg/String` or a user's `Result.msg` become structs in the same module and would
//!   shadow the prelude.
//! - Other packages are reached through [`RustOptions::msgs_crate`]; the package's own types are
//!   named relatively (`Foo`, `super::msg::Foo`), so the same text works as a module file inside
//!   `roslite-msgs` and `include!`d at the root of a user crate.
//! - The text depends only on the interfaces (sorted, no hash-map order, no timestamps), so
//!   checked-in output can be compared byte for byte.

mod codec;
#[cfg(test)]
mod tests;

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::ast::{ActionSpec, Interface, InterfaceKind, MessageSpec, ServiceSpec, TypeName};
use crate::hash::{type_description, type_hash, HashError, TypeDescription};
use crate::parse::ParseError;
use crate::registry::{InterfaceSet, LoadError, ResolveError};

/// How the generated code reaches `roslite-msgs` and the definition texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RustOptions {
    /// The path of the `roslite-msgs` crate as seen from generated code: `crate` inside
    /// `roslite-msgs` itself, `::roslite_msgs` anywhere else.
    pub msgs_crate: String,
    /// How a type description holds the text of the file that defined the type.
    pub definition_text: DefinitionText,
}

/// Where generated code takes a definition file's text from, for the type descriptions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefinitionText {
    /// A string literal in the generated code.
    Inline,
    /// `include_str!("../../interfaces/<pkg>/<kind>/<Name>.<ext>")`: the layout of
    /// `roslite-msgs` (`interfaces/` and `src/generated/`), whose checked-in code then does not
    /// repeat the vendored definitions.
    VendoredInterfaces,
}

impl RustOptions {
    /// For the packages checked in to `roslite-msgs`.
    pub fn for_msgs_crate() -> Self {
        Self {
            msgs_crate: "crate".to_owned(),
            definition_text: DefinitionText::VendoredInterfaces,
        }
    }

    /// For a user crate that depends on `roslite-msgs`.
    pub fn for_user_crate() -> Self {
        Self {
            msgs_crate: "::roslite_msgs".to_owned(),
            definition_text: DefinitionText::Inline,
        }
    }
}

impl Default for RustOptions {
    fn default() -> Self {
        Self::for_user_crate()
    }
}

/// Why code could not be generated.
#[derive(Debug)]
#[non_exhaustive]
pub enum GenError {
    /// The set holds no interface of this package.
    UnknownPackage(String),
    /// A field names a type the set does not hold.
    UnresolvedType { user: TypeName, missing: TypeName },
    /// A name that cannot be a Rust identifier, not even a raw one (`self`, `super`, `crate`,
    /// `Self`, or characters outside `[A-Za-z0-9_]`).
    InvalidName { ty: TypeName, name: String },
    /// A constant value or field default that does not fit its declared type.
    InvalidLiteral {
        ty: TypeName,
        member: String,
        line: usize,
    },
    /// The RIHS01 hash of a type could not be computed.
    Hash(Box<HashError>),
    /// A definition file could not be read or parsed.
    Load(LoadError),
    /// A definition text does not follow the grammar.
    Parse(ParseError),
    /// The definitions refer to types none of them defines, or contain themselves.
    Resolve(Box<ResolveError>),
    /// A user crate defines an interface `roslite-msgs` ships (a crate may add interfaces to a
    /// package `roslite-msgs` ships part of, as `test_msgs` beside its `Fibonacci` action, but
    /// not define one again).
    ShippedInterface(TypeName),
    /// A user crate's interface refers to one of its own package that `roslite-msgs` ships;
    /// generated code names its own package's types relatively, so it cannot reach it.
    ShippedReference { user: TypeName, shipped: TypeName },
    /// Reading a definition file or directory failed.
    Read { path: PathBuf, error: io::Error },
    /// Writing generated files failed.
    Io { path: PathBuf, error: io::Error },
    /// A build-script helper ran without the environment Cargo gives build scripts.
    MissingEnv(&'static str),
}

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownPackage(package) => {
                write!(f, "no interfaces found for package `{package}`")
            }
            Self::UnresolvedType { user, missing } => {
                write!(
                    f,
                    "{user} uses {missing}, which is not among the known interfaces"
                )
            }
            Self::InvalidName { ty, name } => {
                write!(f, "{ty}: `{name}` cannot be used as a Rust identifier")
            }
            Self::InvalidLiteral { ty, member, line } => write!(
                f,
                "{ty}: the value of `{member}` (line {line}) does not fit its declared type"
            ),
            Self::Hash(e) => e.fmt(f),
            Self::Load(e) => e.fmt(f),
            Self::Parse(e) => e.fmt(f),
            Self::Resolve(e) => e.fmt(f),
            Self::ShippedInterface(name) => write!(
                f,
                "{name} is one roslite-msgs ships: use `roslite_msgs::{}::{}::{}` instead of \
                 defining it again, or give the user package another name",
                name.package,
                name.kind.as_str(),
                name.name
            ),
            Self::ShippedReference { user, shipped } => write!(
                f,
                "{user} uses {shipped}, which roslite-msgs ships in the same package; a crate \
                 that adds interfaces to a shipped package cannot refer to the shipped ones of \
                 that package: give the user package another name"
            ),
            Self::Read { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            Self::Io { path, error } => write!(f, "cannot write {}: {error}", path.display()),
            Self::MissingEnv(var) => {
                write!(
                    f,
                    "{var} is not set; call this from a build script run by Cargo"
                )
            }
        }
    }
}

impl From<LoadError> for GenError {
    fn from(e: LoadError) -> Self {
        Self::Load(e)
    }
}

impl From<ParseError> for GenError {
    fn from(e: ParseError) -> Self {
        Self::Parse(e)
    }
}

impl From<ResolveError> for GenError {
    fn from(e: ResolveError) -> Self {
        Self::Resolve(Box::new(e))
    }
}

impl std::error::Error for GenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Hash(e) => Some(e),
            Self::Load(e) => Some(e),
            Self::Parse(e) => Some(e),
            Self::Resolve(e) => Some(&**e),
            Self::Read { error, .. } | Self::Io { error, .. } => Some(error),
            Self::UnknownPackage(_)
            | Self::ShippedInterface(_)
            | Self::ShippedReference { .. }
            | Self::MissingEnv(_)
            | Self::UnresolvedType { .. }
            | Self::InvalidName { .. }
            | Self::InvalidLiteral { .. } => None,
        }
    }
}

/// Generates the Rust modules (`pub mod msg {..}`, `pub mod srv {..}`, `pub mod action {..}`,
/// only the non-empty ones) for every interface of `package` in `set`.
///
/// The set must also hold every package the interfaces refer to, for type resolution and
/// hashing.
///
/// # Errors
/// [`GenError::UnknownPackage`] when `set` holds nothing of `package`; the other variants for
/// names, literals and hashes that cannot be expressed.
pub fn generate_package(
    set: &InterfaceSet,
    package: &str,
    opts: &RustOptions,
) -> Result<String, GenError> {
    generate_package_where(set, package, opts, &|_| true)
}

/// [`generate_package`] for the interfaces of `package` that `keep` holds to, the others
/// (types `roslite-msgs` ships in a package a user crate adds to) being left out.
pub(crate) fn generate_package_where(
    set: &InterfaceSet,
    package: &str,
    opts: &RustOptions,
    keep: &dyn Fn(&TypeName) -> bool,
) -> Result<String, GenError> {
    let interfaces: Vec<&Interface> = set
        .interfaces()
        .filter(|i| i.name().package == package && keep(i.name()))
        .collect();
    let resolve = |name: &TypeName| set.message(name);
    generate_interfaces(&interfaces, package, opts, &resolve, &set)
}

/// Lints the generated modules silence, each because the names or values come from the
/// interface definitions rather than from us.
const ALLOWED_LINTS: &[&str] = &[
    "missing_docs",
    // `SetBool_Request`, `Fibonacci_SendGoal`: rosidl's names, also on the wire.
    "non_camel_case_types",
    "non_snake_case",
    "non_upper_case_globals",
    // Constants like `PI = 3.14159` are the interface's.
    "clippy::approx_constant",
    // `Default` is written out uniformly, even where a derive would do.
    "clippy::derivable_impls",
    // Type names such as `UUID`.
    "clippy::upper_case_acronyms",
];

/// What code generation looks up about a type beyond its own definition: in the
/// [`InterfaceSet`], or stand-ins for unit tests on hand-built ASTs.
trait TypeFacts {
    /// The RIHS01 hash.
    fn hash(&self, name: &TypeName) -> Result<String, GenError>;
    /// The REP 2011 type description.
    fn description(&self, name: &TypeName) -> Result<TypeDescription, GenError>;
    /// Whether `name` is a service (such as an action's `_SendGoal`), whose description others
    /// reach through the `Service` trait rather than `Message`.
    fn is_service(&self, name: &TypeName) -> bool;
}

impl TypeFacts for &InterfaceSet {
    fn hash(&self, name: &TypeName) -> Result<String, GenError> {
        type_hash(self, name).map_err(|e| GenError::Hash(Box::new(e)))
    }

    fn description(&self, name: &TypeName) -> Result<TypeDescription, GenError> {
        type_description(self, name).map_err(|e| GenError::Hash(Box::new(e)))
    }

    fn is_service(&self, name: &TypeName) -> bool {
        self.service(name).is_some()
    }
}

/// [`generate_package`] over an explicit list of interfaces.
fn generate_interfaces<'a>(
    interfaces: &[&'a Interface],
    package: &str,
    opts: &RustOptions,
    resolve: &codec::Resolver<'a>,
    types: &dyn TypeFacts,
) -> Result<String, GenError> {
    if interfaces.is_empty() {
        return Err(GenError::UnknownPackage(package.to_owned()));
    }
    let mut sorted = interfaces.to_vec();
    sorted.sort_by(|a, b| a.name().cmp(b.name()));

    let mut code = Code::default();
    for kind in [
        InterfaceKind::Msg,
        InterfaceKind::Srv,
        InterfaceKind::Action,
    ] {
        let members: Vec<&Interface> = sorted
            .iter()
            .copied()
            .filter(|i| i.name().kind == kind)
            .collect();
        if members.is_empty() {
            continue;
        }
        let scope = Scope {
            package,
            kind,
            msgs: &opts.msgs_crate,
            definition_text: opts.definition_text,
        };
        if !code.text.is_empty() {
            code.blank();
        }
        let what = match kind {
            InterfaceKind::Msg => "Messages",
            InterfaceKind::Srv => "Services",
            InterfaceKind::Action => "Actions",
        };
        code.line(format!("/// {what} of `{package}`."));
        code.open("#[allow(");
        for (i, lint) in ALLOWED_LINTS.iter().enumerate() {
            // rustfmt drops the trailing comma in attributes.
            let comma = if i + 1 < ALLOWED_LINTS.len() { "," } else { "" };
            code.line(format!("{lint}{comma}"));
        }
        code.close(")]");
        code.open(format!("pub mod {} {{", kind.as_str()));
        let mut first = true;
        for interface in members {
            if !first {
                code.blank();
            }
            first = false;
            match interface {
                Interface::Message(spec) => emit_message(&mut code, &scope, spec, resolve, types)?,
                Interface::Service(spec) => emit_service(&mut code, &scope, spec, resolve, types)?,
                Interface::Action(spec) => emit_action(&mut code, &scope, spec, resolve, types)?,
            }
        }
        code.close("}");
    }
    Ok(code.text)
}

fn emit_message(
    code: &mut Code,
    scope: &Scope<'_>,
    spec: &MessageSpec,
    resolve: &codec::Resolver<'_>,
    types: &dyn TypeFacts,
) -> Result<(), GenError> {
    codec::emit_message(code, scope, spec, resolve)?;
    let name = scope.type_ident(&spec.name)?;
    code.blank();
    code.open(format!("impl {}::Message for {name} {{", scope.msgs));
    code.line(format!(
        "const TYPE_NAME: &'static str = \"{}\";",
        spec.name
    ));
    code.line(format!(
        "const DDS_TYPE_NAME: &'static str = \"{}\";",
        spec.name.dds_name()
    ));
    code.line("const TYPE_HASH: &'static str =");
    code.line(format!("    \"{}\";", types.hash(&spec.name)?));
    emit_type_description(code, scope, &spec.name, types)?;
    let key = crate::key::tree(spec, resolve).map_err(|missing| GenError::UnresolvedType {
        user: spec.name.clone(),
        missing,
    })?;
    if let Some(key) = key {
        let cdr = format!("{}::cdr", scope.msgs);
        code.line(format!(
            "const KEY: ::core::option::Option<&'static {cdr}::key::KeyStruct> ="
        ));
        let expr = crate::key::rust_expr(&key, &cdr, "");
        let mut lines = expr.lines();
        if let Some(first) = lines.next() {
            code.line(format!("    ::core::option::Option::Some(&{first}"));
        }
        for line in lines {
            code.line(format!("    {line}"));
        }
        // `rust_expr` ends with the struct's closing brace; close the `Some(`.
        if let Some(end) = code.text.strip_suffix('\n') {
            code.text = format!("{end});\n");
        }
    }
    code.close("}");
    Ok(())
}

fn emit_service(
    code: &mut Code,
    scope: &Scope<'_>,
    spec: &ServiceSpec,
    resolve: &codec::Resolver<'_>,
    types: &dyn TypeFacts,
) -> Result<(), GenError> {
    emit_service_marker(code, scope, spec, types)?;
    for part in [&spec.request, &spec.response, &spec.event] {
        code.blank();
        emit_message(code, scope, part, resolve, types)?;
    }
    Ok(())
}

fn emit_service_marker(
    code: &mut Code,
    scope: &Scope<'_>,
    spec: &ServiceSpec,
    types: &dyn TypeFacts,
) -> Result<(), GenError> {
    let name = scope.type_ident(&spec.name)?;
    code.line(format!("/// Service `{}`.", spec.name));
    code.line("#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]");
    code.line(format!("pub struct {name};"));
    code.blank();
    code.open(format!("impl {}::Service for {name} {{", scope.msgs));
    code.line(format!(
        "type Request = {};",
        scope.type_path(&spec.request.name)?
    ));
    code.line(format!(
        "type Response = {};",
        scope.type_path(&spec.response.name)?
    ));
    let event = scope.type_path(&spec.event.name)?;
    code.line(format!("type Event = {event};"));
    code.line(format!(
        "const TYPE_NAME: &'static str = \"{}\";",
        spec.name
    ));
    code.line("const TYPE_HASH: &'static str =");
    code.line(format!("    \"{}\";", types.hash(&spec.name)?));
    emit_type_description(code, scope, &spec.name, types)?;
    let info = TypeName::new("service_msgs", InterfaceKind::Msg, "ServiceEventInfo");
    code.open(format!(
        "fn event(info: {}, request: ::core::option::Option<Self::Request>, \
         response: ::core::option::Option<Self::Response>) -> {event} {{",
        scope.type_path(&info)?
    ));
    code.line(format!(
        "{event} {{ info, request: request.into_iter().collect(), \
         response: response.into_iter().collect() }}"
    ));
    code.close("}");
    code.close("}");
    Ok(())
}

fn emit_action(
    code: &mut Code,
    scope: &Scope<'_>,
    spec: &ActionSpec,
    resolve: &codec::Resolver<'_>,
    types: &dyn TypeFacts,
) -> Result<(), GenError> {
    let name = scope.type_ident(&spec.name)?;
    code.line(format!("/// Action `{}`.", spec.name));
    code.line("#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]");
    code.line(format!("pub struct {name};"));
    code.blank();
    code.open(format!("impl {}::Action for {name} {{", scope.msgs));
    for (assoc, ty) in [
        ("Goal", &spec.goal.name),
        ("Result", &spec.result.name),
        ("Feedback", &spec.feedback.name),
        ("SendGoal", &spec.send_goal.name),
        ("GetResult", &spec.get_result.name),
        ("FeedbackMessage", &spec.feedback_message.name),
    ] {
        code.line(format!("type {assoc} = {};", scope.type_path(ty)?));
    }
    code.line(format!(
        "const TYPE_NAME: &'static str = \"{}\";",
        spec.name
    ));
    code.line("const TYPE_HASH: &'static str =");
    code.line(format!("    \"{}\";", types.hash(&spec.name)?));
    emit_type_description(code, scope, &spec.name, types)?;
    emit_action_wrapping(code, scope, spec)?;
    code.close("}");
    for part in [&spec.goal, &spec.result, &spec.feedback] {
        code.blank();
        emit_message(code, scope, part, resolve, types)?;
    }
    for service in [&spec.send_goal, &spec.get_result] {
        code.blank();
        emit_service(code, scope, service, resolve, types)?;
    }
    code.blank();
    emit_message(code, scope, &spec.feedback_message, resolve, types)
}

/// The `TYPE_DESCRIPTION` constant of a message, service or action trait impl: the type's own
/// description written out, each referenced type's taken from that type's constant.
fn emit_type_description(
    code: &mut Code,
    scope: &Scope<'_>,
    name: &TypeName,
    types: &dyn TypeFacts,
) -> Result<(), GenError> {
    let description = types.description(name)?;
    let module = format!("{}::description", scope.msgs);
    let own = &description.type_description;
    code.line(format!(
        "const TYPE_DESCRIPTION: ::core::option::Option<&'static {module}::TypeDescription> ="
    ));
    code.indent();
    code.open(format!(
        "::core::option::Option::Some(&{module}::TypeDescription {{"
    ));
    code.open(format!(
        "type_description: &{module}::IndividualTypeDescription {{"
    ));
    code.line(format!(
        "type_name: {},",
        rust_str(&own.type_name.to_string())
    ));
    code.open("fields: &[");
    for field in &own.fields {
        let nested = field
            .nested_type_name
            .as_ref()
            .map(TypeName::to_string)
            .unwrap_or_default();
        code.line(format!(
            "{module}::FieldDescription {{ name: {}, type_id: {}, capacity: {}, \
             string_capacity: {}, nested_type_name: {}, default_value: {} }},",
            rust_str(&field.name),
            field.type_id,
            field.capacity,
            field.string_capacity,
            rust_str(&nested),
            rust_str(&field.default_value),
        ));
    }
    code.close("],");
    code.line(format!("encoding: {},", rust_str(own.encoding)));
    let raw = own.raw_file_contents.as_str();
    let raw_code = match scope.definition_text {
        // Most files are embedded as they are but for their last line break; the few that
        // rosidl escapes (backslashes, non-ASCII, `\r\n`) are written out as it embeds them.
        DefinitionText::VendoredInterfaces if own.encoding != "implicit" => {
            let include = format!(
                "include_str!(\"../../interfaces/{}/{}/{}.{}\")",
                name.package,
                name.kind.as_str(),
                name.name,
                own.encoding
            );
            if raw == own.source {
                include
            } else if Some(raw) == own.source.strip_suffix('\n') {
                format!("{module}::without_final_line_break({include})")
            } else {
                rust_str(raw)
            }
        }
        _ => rust_str(raw),
    };
    code.line(format!("raw_file_contents: {raw_code},"));
    code.close("},");
    if description.referenced_type_descriptions.is_empty() {
        code.line("referenced_type_descriptions: &[],");
    } else {
        code.open("referenced_type_descriptions: &[");
        for referenced in &description.referenced_type_descriptions {
            let trait_name = if types.is_service(&referenced.type_name) {
                "Service"
            } else {
                "Message"
            };
            code.line(format!(
                "{module}::individual(<{} as {}::{trait_name}>::TYPE_DESCRIPTION),",
                scope.type_path(&referenced.type_name)?,
                scope.msgs
            ));
        }
        code.close("],");
    }
    code.close("});");
    code.dedent();
    Ok(())
}

/// `text` as a Rust string literal.
fn rust_str(text: &str) -> String {
    format!("{text:?}")
}

/// The `Action` trait's functions that wrap and unwrap goal, result and feedback in the
/// action's service and topic messages (fields named as rosidl's action expansion names them).
fn emit_action_wrapping(
    code: &mut Code,
    scope: &Scope<'_>,
    spec: &ActionSpec,
) -> Result<(), GenError> {
    let msgs = scope.msgs;
    let uuid = format!("{msgs}::unique_identifier_msgs::msg::UUID");
    let time = format!("{msgs}::builtin_interfaces::msg::Time");
    let send_request = scope.type_path(&spec.send_goal.request.name)?;
    let send_response = scope.type_path(&spec.send_goal.response.name)?;
    let result_request = scope.type_path(&spec.get_result.request.name)?;
    let result_response = scope.type_path(&spec.get_result.response.name)?;
    let feedback_message = scope.type_path(&spec.feedback_message.name)?;
    let functions = [
        format!(
            "fn send_goal_request(goal_id: {uuid}, goal: Self::Goal) -> {send_request} {{\n    \
             {send_request} {{ goal_id, goal }}\n}}"
        ),
        format!(
            "fn split_send_goal_request(request: {send_request}) -> ({uuid}, Self::Goal) {{\n    \
             (request.goal_id, request.goal)\n}}"
        ),
        format!(
            "fn send_goal_response(accepted: bool, stamp: {time}) -> {send_response} {{\n    \
             {send_response} {{ accepted, stamp }}\n}}"
        ),
        format!(
            "fn split_send_goal_response(response: {send_response}) -> (bool, {time}) {{\n    \
             (response.accepted, response.stamp)\n}}"
        ),
        format!(
            "fn get_result_request(goal_id: {uuid}) -> {result_request} {{\n    \
             {result_request} {{ goal_id }}\n}}"
        ),
        format!(
            "fn get_result_request_goal_id(request: &{result_request}) -> {uuid} {{\n    \
             request.goal_id.clone()\n}}"
        ),
        format!(
            "fn get_result_response(status: i8, result: Self::Result) -> {result_response} {{\n    \
             {result_response} {{ status, result }}\n}}"
        ),
        format!(
            "fn split_get_result_response(response: {result_response}) -> (i8, Self::Result) {{\n    \
             (response.status, response.result)\n}}"
        ),
        format!(
            "fn feedback_message(goal_id: {uuid}, feedback: Self::Feedback) -> {feedback_message} {{\n    \
             {feedback_message} {{ goal_id, feedback }}\n}}"
        ),
        format!(
            "fn split_feedback_message(message: {feedback_message}) -> ({uuid}, Self::Feedback) {{\n    \
             (message.goal_id, message.feedback)\n}}"
        ),
    ];
    for function in functions {
        code.blank();
        for line in function.lines() {
            code.line(line);
        }
    }
    Ok(())
}

/// Where generated code is: which package and which of its `msg`/`srv`/`action` modules.
struct Scope<'a> {
    package: &'a str,
    kind: InterfaceKind,
    msgs: &'a str,
    definition_text: DefinitionText,
}

impl Scope<'_> {
    fn cdr(&self) -> String {
        format!("{}::cdr", self.msgs)
    }

    /// The identifier a type is declared as in its own module.
    fn type_ident(&self, ty: &TypeName) -> Result<String, GenError> {
        ident(&ty.name).ok_or_else(|| GenError::InvalidName {
            ty: ty.clone(),
            name: ty.name.clone(),
        })
    }

    fn field_ident(&self, owner: &TypeName, field: &str) -> Result<String, GenError> {
        ident(field).ok_or_else(|| GenError::InvalidName {
            ty: owner.clone(),
            name: field.to_owned(),
        })
    }

    /// How code in this scope names `ty`.
    fn type_path(&self, ty: &TypeName) -> Result<String, GenError> {
        let name = self.type_ident(ty)?;
        if ty.package == self.package {
            if ty.kind == self.kind {
                return Ok(name);
            }
            return Ok(format!("super::{}::{name}", ty.kind.as_str()));
        }
        let package = ident(&ty.package).ok_or_else(|| GenError::InvalidName {
            ty: ty.clone(),
            name: ty.package.clone(),
        })?;
        Ok(format!(
            "{}::{package}::{}::{name}",
            self.msgs,
            ty.kind.as_str()
        ))
    }
}

/// `name` as a Rust identifier: raw (`r#type`) for keywords; `None` when even a raw identifier
/// cannot spell it.
fn ident(name: &str) -> Option<String> {
    const KEYWORDS: &[&str] = &[
        "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do",
        "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in",
        "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
        "return", "static", "struct", "trait", "true", "try", "type", "typeof", "unsafe",
        "unsized", "use", "virtual", "where", "while", "yield",
    ];
    // Path keywords have no raw form.
    const UNSPELLABLE: &[&str] = &["_", "crate", "self", "Self", "super"];
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid || UNSPELLABLE.contains(&name) {
        return None;
    }
    if KEYWORDS.contains(&name) {
        return Some(format!("r#{name}"));
    }
    Some(name.to_owned())
}

/// Generated text with the current indentation (four spaces per level, as rustfmt).
#[derive(Default)]
struct Code {
    text: String,
    depth: usize,
}

impl Code {
    fn line(&mut self, line: impl AsRef<str>) {
        let line = line.as_ref();
        if !line.is_empty() {
            for _ in 0..self.depth {
                self.text.push_str("    ");
            }
            self.text.push_str(line);
        }
        self.text.push('\n');
    }

    /// A line that ends in an opening bracket; what follows is indented.
    fn open(&mut self, line: impl AsRef<str>) {
        self.line(line);
        self.depth += 1;
    }

    /// A line that starts with a closing bracket, one level out.
    fn close(&mut self, line: impl AsRef<str>) {
        self.depth = self.depth.saturating_sub(1);
        self.line(line);
    }

    fn indent(&mut self) {
        self.depth += 1;
    }

    fn dedent(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn blank(&mut self) {
        self.text.push('\n');
    }
}
