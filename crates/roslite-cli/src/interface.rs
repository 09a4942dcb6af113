//! `roslite interface list|packages|show|proto|hash`, shaped like `ros2 interface`.

use anyhow::{bail, Context as _};
use roslite_msg_gen::ast::{BaseType, Interface, InterfaceKind, Literal, MessageSpec, TypeName};
use roslite_msg_gen::registry::{InterfaceSet, SourceFormat};

mod generate;

#[derive(clap::Subcommand)]
pub enum InterfaceCommand {
    /// List every known message, service and action type.
    List {
        /// Only messages.
        #[arg(short = 'm', long = "only-msgs")]
        only_msgs: bool,
        /// Only services.
        #[arg(short = 's', long = "only-srvs")]
        only_srvs: bool,
        /// Only actions.
        #[arg(short = 'a', long = "only-actions")]
        only_actions: bool,
    },
    /// List the packages that provide interfaces.
    Packages,
    /// Show a definition with nested types expanded, like `ros2 interface show`; an interface
    /// written in IDL as its .idl file.
    Show {
        /// e.g. geometry_msgs/msg/Twist or std_srvs/srv/SetBool
        type_name: String,
        /// Drop comments and blank lines everywhere.
        #[arg(long)]
        no_comments: bool,
    },
    /// Print a prototype of the type (its default values as YAML), to fill in for
    /// `roslite topic pub` or `service call`, like `ros2 interface proto`: a service's request,
    /// an action's goal.
    Proto {
        /// e.g. geometry_msgs/msg/Twist or std_srvs/srv/SetBool
        type_name: String,
        /// Print it without the outer quotes
        #[arg(long)]
        no_quotes: bool,
    },
    /// Print the RIHS01 type hash (REP-2011) of a type.
    Hash {
        /// e.g. std_msgs/msg/String, std_srvs/srv/SetBool_Request
        type_name: String,
    },
    Generate(generate::GenerateArgs),
}

/// Built-in definitions first, then every `$AMENT_PREFIX_PATH` entry's share directory; the
/// first definition of a name wins, so built-ins match the types roslite was compiled with.
///
/// A definition that is broken (does not parse, names a type nobody defines, contains itself,
/// is too large), and every type using one, is left out with one warning each on standard
/// error; everything else stays usable. A command naming a type left out says why
/// ([`require_usable`]).
pub fn load_interfaces() -> anyhow::Result<InterfaceSet> {
    let set = load_interfaces_from(std::env::var("AMENT_PREFIX_PATH").ok().as_deref())?;
    for problem in set.problems() {
        eprintln!("warning: skipping a definition from $AMENT_PREFIX_PATH: {problem}");
    }
    Ok(set)
}

/// [`load_interfaces`] with `ament_prefix_path` for `$AMENT_PREFIX_PATH`, and no warnings.
fn load_interfaces_from(ament_prefix_path: Option<&str>) -> anyhow::Result<InterfaceSet> {
    let mut set = InterfaceSet::new();
    for file in roslite_msgs::INTERFACE_FILES {
        let kind = InterfaceKind::from_extension(file.kind)
            .with_context(|| format!("built-in file of unknown kind '{}'", file.kind))?;
        let extension = if file.idl { "idl" } else { file.kind };
        let path = format!("{}/{}/{}.{extension}", file.package, file.kind, file.name);
        if file.idl {
            set.add_idl_source(file.package, kind, file.name, file.text, &path)?;
        } else {
            set.add_source(file.package, kind, file.name, file.text, &path)?;
        }
    }
    if let Some(prefixes) = ament_prefix_path {
        set.add_ament_prefix_path(prefixes);
    }
    set.remove_unusable();
    Ok(set)
}

/// Fails, saying why, when `name` (or the interface it is a part of) was left out of `set`
/// because its definition or one it uses is broken.
pub fn require_usable(set: &InterfaceSet, name: &TypeName) -> anyhow::Result<()> {
    match set.unusable(name) {
        Some(problem) => bail!("'{name}' cannot be used: {problem}"),
        None => Ok(()),
    }
}

pub fn run(command: InterfaceCommand) -> anyhow::Result<()> {
    let set = load_interfaces()?;
    match command {
        InterfaceCommand::List {
            only_msgs,
            only_srvs,
            only_actions,
        } => {
            let all = !(only_msgs || only_srvs || only_actions);
            let sections = [
                ("Messages", InterfaceKind::Msg, only_msgs),
                ("Services", InterfaceKind::Srv, only_srvs),
                ("Actions", InterfaceKind::Action, only_actions),
            ];
            for (title, kind, wanted) in sections {
                if !(all || wanted) {
                    continue;
                }
                println!("{title}:");
                for interface in set.interfaces().filter(|i| i.name().kind == kind) {
                    println!("    {}", interface.name());
                }
            }
        }
        InterfaceCommand::Packages => {
            for package in set.packages() {
                println!("{package}");
            }
        }
        InterfaceCommand::Show {
            type_name,
            no_comments,
        } => {
            let name = parse_type_name(&type_name)?;
            require_usable(&set, &name)?;
            print!("{}", show(&set, &name, no_comments)?);
        }
        InterfaceCommand::Proto {
            type_name,
            no_quotes,
        } => {
            let name = parse_type_name(&type_name)?;
            require_usable(&set, &name)?;
            let yaml = proto(&set, &name)?;
            if no_quotes {
                println!("{yaml}");
            } else {
                println!("\"{yaml}\"");
            }
        }
        InterfaceCommand::Hash { type_name } => {
            let name = parse_type_name(&type_name)?;
            require_usable(&set, &name)?;
            let hash = roslite_msg_gen::hash::type_hash(&set, &name)
                .map_err(|e| anyhow::anyhow!("cannot hash '{name}': {e}"))?;
            println!("{hash}");
        }
        InterfaceCommand::Generate(args) => generate::run(set, &args)?,
    }
    Ok(())
}

/// A service type name from the command line (`std_srvs/srv/SetBool`, or the short
/// `std_srvs/SetBool` ros2 also accepts).
pub(crate) fn parse_service_type(text: &str) -> anyhow::Result<TypeName> {
    parse_kind_type(text, InterfaceKind::Srv, "std_srvs/srv/SetBool")
}

/// Checks that `ty` is a service `set` defines and can use.
///
/// # Errors
/// An unusable definition, or a service roslite has no definition of.
pub(crate) fn require_service(set: &InterfaceSet, ty: &TypeName) -> anyhow::Result<()> {
    require_usable(set, ty)?;
    if set.service(ty).is_none() {
        bail!(
            "unknown service type '{ty}': roslite has no definition of it; put its package's \
             share directory on $AMENT_PREFIX_PATH (`roslite interface list` shows the known \
             types)"
        );
    }
    Ok(())
}

/// A service or action type name from the command line: `pkg/<kind>/Name`, or the short
/// `pkg/Name` ros2 also accepts; the error names the form and shows `example`.
pub(crate) fn parse_kind_type(
    text: &str,
    kind: InterfaceKind,
    example: &str,
) -> anyhow::Result<TypeName> {
    let (word, what) = match kind {
        InterfaceKind::Msg => ("msg", "message"),
        InterfaceKind::Srv => ("srv", "service"),
        InterfaceKind::Action => ("action", "action"),
    };
    let full = match text.split('/').count() {
        2 => text.replacen('/', &format!("/{word}/"), 1),
        _ => text.to_owned(),
    };
    match TypeName::parse(&full) {
        Some(name) if name.kind == kind => Ok(name),
        _ => bail!(
            "'{text}' is not {} {what} type name; write it as <package>/{word}/<Name>, e.g. \
             {example}",
            if what == "action" { "an" } else { "a" }
        ),
    }
}

/// The type `ty` with `suffix` (`_Request`, `_Goal`, ...): one of its parts.
pub(crate) fn type_part(ty: &TypeName, suffix: &str) -> anyhow::Result<TypeName> {
    TypeName::parse(&format!("{ty}{suffix}"))
        .with_context(|| format!("'{ty}{suffix}' is not a valid type name"))
}

fn parse_type_name(text: &str) -> anyhow::Result<TypeName> {
    match TypeName::parse(text) {
        Some(name) if text.matches('/').count() == 2 => Ok(name),
        _ => bail!(
            "'{text}' is not a full interface type name; write it as <package>/<msg|srv|action>/<Name>, \
             e.g. geometry_msgs/msg/Twist"
        ),
    }
}

/// The YAML of `name`'s default value, as `ros2 interface proto` prints it between its
/// quotes: for a service its request, for an action its goal.
pub fn proto(set: &InterfaceSet, name: &TypeName) -> anyhow::Result<String> {
    let part = match name.kind {
        InterfaceKind::Msg => None,
        InterfaceKind::Srv => Some("_Request"),
        InterfaceKind::Action => Some("_Goal"),
    };
    let message = match part {
        Some(suffix) if set.interface(name).is_some() => TypeName {
            name: format!("{}{suffix}", name.name),
            ..name.clone()
        },
        _ => name.clone(),
    };
    let value = roslite_msg_gen::dynamic::default_value(set, &message)
        .map_err(|e| anyhow::anyhow!("{e} (`roslite interface list` shows the known ones)"))?;
    Ok(roslite_msg_gen::dynamic::to_yaml(
        set,
        &message,
        &value,
        &roslite_msg_gen::dynamic::YamlOptions::default(),
    ))
}

/// The text `ros2 interface show` prints: the file itself, and under each field of a nested
/// type, that type's fields and constants indented by one tab per level. An interface written
/// in IDL is shown as its `.idl` file, without the nested types (which the IDL names in full).
pub fn show(set: &InterfaceSet, name: &TypeName, no_comments: bool) -> anyhow::Result<String> {
    let Some(interface) = set.interface(name) else {
        if let Some(message) = set.message(name) {
            // A service or action part such as std_srvs/srv/SetBool_Request.
            let mut out = String::new();
            expand_fields(set, message, 0, &mut out);
            return Ok(out);
        }
        bail!("unknown interface type '{name}'; `roslite interface list` shows the known ones");
    };
    let source = set
        .source(name)
        .with_context(|| format!("no source text for '{name}'"))?;
    if set.format(name) == Some(SourceFormat::Idl) {
        return Ok(show_idl(source, no_comments));
    }
    let parts: Vec<&MessageSpec> = match interface {
        Interface::Message(m) => vec![m],
        Interface::Service(s) => vec![&s.request, &s.response],
        Interface::Action(a) => vec![&a.goal, &a.result, &a.feedback],
    };
    let mut out = String::new();
    let mut part = 0;
    for (index, line) in source.lines().enumerate() {
        let line_no = index + 1;
        if line.trim() == "---" {
            part += 1;
            out.push_str("---\n");
            continue;
        }
        let code = strip_comment(line);
        if no_comments && code.trim().is_empty() {
            continue;
        }
        out.push_str(if no_comments { code.trim_end() } else { line });
        out.push('\n');
        let field = parts
            .get(part)
            .and_then(|m| m.fields.iter().find(|f| f.line == line_no));
        if let Some(BaseType::Named(nested)) = field.map(|f| &f.ty.base) {
            if let Some(nested) = set.message(nested) {
                expand_fields(set, nested, 1, &mut out);
            }
        }
    }
    Ok(out)
}

/// An `.idl` file as written, or without its comments and blank lines.
fn show_idl(source: &str, no_comments: bool) -> String {
    let mut out = String::new();
    let mut in_block_comment = false;
    for line in source.lines() {
        if !no_comments {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut code = String::new();
        let mut rest = line;
        while !rest.is_empty() {
            if in_block_comment {
                match rest.find("*/") {
                    Some(end) => {
                        in_block_comment = false;
                        rest = &rest[end + 2..];
                    }
                    None => rest = "",
                }
                continue;
            }
            // A comment starts outside string literals only.
            let mut in_string = false;
            let mut cut = None;
            let bytes = rest.as_bytes();
            for (i, &b) in bytes.iter().enumerate() {
                match b {
                    b'"' if i == 0 || bytes[i - 1] != b'\\' => in_string = !in_string,
                    b'/' if !in_string && matches!(bytes.get(i + 1), Some(b'/' | b'*')) => {
                        cut = Some(i);
                        break;
                    }
                    _ => {}
                }
            }
            match cut {
                Some(i) => {
                    code.push_str(&rest[..i]);
                    if rest[i..].starts_with("//") {
                        rest = "";
                    } else {
                        in_block_comment = true;
                        rest = &rest[i + 2..];
                    }
                }
                None => {
                    code.push_str(rest);
                    rest = "";
                }
            }
        }
        if !code.trim().is_empty() {
            out.push_str(code.trim_end());
            out.push('\n');
        }
    }
    out
}

/// Fields and constants of a nested message, comment-free, as ros2 prints them.
fn expand_fields(set: &InterfaceSet, message: &MessageSpec, depth: usize, out: &mut String) {
    let Some(source) = set.source(&message.name) else {
        return;
    };
    let indent = "\t".repeat(depth);
    if set.format(&message.name) == Some(SourceFormat::Idl) {
        // The IDL's lines are no `.msg` lines: its definition as `.msg` text instead.
        for line in msg_lines(message) {
            out.push_str(&indent);
            out.push_str(&line);
            out.push('\n');
        }
        for field in &message.fields {
            if let BaseType::Named(nested) = &field.ty.base {
                if let Some(nested) = set.message(nested) {
                    expand_fields(set, nested, depth + 1, out);
                }
            }
        }
        return;
    }
    for (index, line) in source.lines().enumerate() {
        let code = strip_comment(line).trim_end();
        if code.trim().is_empty() {
            continue;
        }
        out.push_str(&indent);
        out.push_str(code);
        out.push('\n');
        let field = message.fields.iter().find(|f| f.line == index + 1);
        if let Some(BaseType::Named(nested)) = field.map(|f| &f.ty.base) {
            if let Some(nested) = set.message(nested) {
                expand_fields(set, nested, depth + 1, out);
            }
        }
    }
}

/// A message read from IDL in `.msg` syntax: constants, then fields with their defaults, key
/// fields marked by a comment (`.msg` files have no keys).
fn msg_lines(message: &MessageSpec) -> Vec<String> {
    let mut lines: Vec<String> = message
        .constants
        .iter()
        .map(|c| {
            let ty = roslite_msg_gen::ast::FieldType {
                base: c.ty.clone(),
                collection: roslite_msg_gen::ast::Collection::Single,
            };
            format!("{ty} {}={}", c.name, msg_literal(&c.value))
        })
        .collect();
    for field in &message.fields {
        let mut line = format!("{} {}", field.ty, field.name);
        if let Some(default) = &field.default {
            line.push(' ');
            line.push_str(&msg_literal(default));
        }
        if field.key {
            line.push_str("  # @key");
        }
        lines.push(line);
    }
    lines
}

/// A literal as a `.msg` file writes it.
fn msg_literal(value: &Literal) -> String {
    match value {
        Literal::Bool(b) => b.to_string(),
        Literal::Int(v) => v.to_string(),
        Literal::Float(v) => format!("{v:?}"),
        Literal::String(s) => format!("\"{}\"", s.escape_default()),
        Literal::Array(items) => {
            let items: Vec<String> = items.iter().map(msg_literal).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

/// The line without a trailing `#` comment; a `#` inside a quoted default is kept.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') => return &line[..i],
            _ => {}
        }
    }
    line
}

#[cfg(test)]
mod tests {
    #[test]
    fn service_types_accept_the_short_form_and_refuse_messages() {
        assert_eq!(
            parse_service_type("std_srvs/SetBool").unwrap().to_string(),
            "std_srvs/srv/SetBool"
        );
        assert_eq!(
            parse_service_type("std_srvs/srv/SetBool")
                .unwrap()
                .to_string(),
            "std_srvs/srv/SetBool"
        );
        let err = parse_service_type("std_msgs/msg/String").unwrap_err();
        assert!(err.to_string().contains("<package>/srv/<Name>"), "{err}");
    }

    use super::*;

    #[test]
    fn broken_definitions_are_errors_naming_file_and_line_in_every_command() {
        let dir = std::env::temp_dir().join(format!("roslite-cli-broken-{}", std::process::id()));
        let msg_dir = dir.join("share/cyc/msg");
        std::fs::create_dir_all(&msg_dir).unwrap();
        std::fs::write(msg_dir.join("A.msg"), "B b\n").unwrap();
        std::fs::write(msg_dir.join("B.msg"), "A a\n").unwrap();
        std::fs::write(msg_dir.join("Huge.msg"), "int32[4294967295] x\n").unwrap();
        std::fs::write(msg_dir.join("Bound.msg"), "int32[4294967296] x\n").unwrap();
        std::fs::write(msg_dir.join("Fine.msg"), "int32 x\n").unwrap();
        let set = load_interfaces_from(Some(dir.to_str().unwrap())).unwrap();
        let a = msg_dir.join("A.msg").display().to_string();
        for (name, expected) in [
            ("cyc/msg/A", format!("{a}:1: recursive type")),
            ("cyc/msg/B", "B.msg:1: recursive type".to_owned()),
            (
                "cyc/msg/Huge",
                "Huge.msg:1: every cyc/msg/Huge takes at least".to_owned(),
            ),
            (
                "cyc/msg/Bound",
                "Bound.msg:1: array size 4294967296".to_owned(),
            ),
        ] {
            let ty = parse_type_name(name).unwrap();
            // What show, proto, hash, topic pub/echo and service call check first.
            let e = require_usable(&set, &ty).unwrap_err().to_string();
            assert!(e.starts_with(&format!("'{name}' cannot be used: ")), "{e}");
            assert!(e.contains(&expected), "{name}: {e}");
            let e = crate::topic::type_info(&set, &ty).unwrap_err().to_string();
            assert!(e.contains(&expected), "{name}: {e}");
            // Without the check the commands still fail cleanly: the type is not in the set.
            assert!(show(&set, &ty, false).is_err());
            assert!(proto(&set, &ty).is_err());
            assert!(roslite_msg_gen::hash::type_hash(&set, &ty).is_err());
        }
        let fine = parse_type_name("cyc/msg/Fine").unwrap();
        assert_eq!(show(&set, &fine, false).unwrap(), "int32 x\n");
        assert_eq!(set.problems().count(), 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn idl_interfaces_show_as_their_file_and_nest_as_msg_lines() {
        let dir = std::env::temp_dir().join(format!("roslite-cli-idl-{}", std::process::id()));
        let msg_dir = dir.join("share/idl_pkg/msg");
        std::fs::create_dir_all(&msg_dir).unwrap();
        let idl = "// A keyed type.\nmodule idl_pkg { module msg {\n  module Thing_Constants { \
                   const int32 MAX = 3; };\n  struct Thing {\n    @key long id; /* the key */\n    \
                   @default (value=\"x\") string<4> label;\n  };\n}; };\n";
        std::fs::write(msg_dir.join("Thing.idl"), idl).unwrap();
        std::fs::write(msg_dir.join("Holder.msg"), "# holds one\nThing thing\n").unwrap();
        let set = load_interfaces_from(Some(dir.to_str().unwrap())).unwrap();
        let thing = parse_type_name("idl_pkg/msg/Thing").unwrap();
        assert_eq!(show(&set, &thing, false).unwrap(), idl);
        assert_eq!(
            show(&set, &thing, true).unwrap(),
            "module idl_pkg { module msg {\n  module Thing_Constants { const int32 MAX = 3; };\n  \
             struct Thing {\n    @key long id;\n    @default (value=\"x\") string<4> label;\n  \
             };\n}; };\n"
        );
        let holder = parse_type_name("idl_pkg/msg/Holder").unwrap();
        assert_eq!(
            show(&set, &holder, false).unwrap(),
            "# holds one\nThing thing\n\tint32 MAX=3\n\tint32 id  # @key\n\tstring<=4 label \"x\"\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_prototype_reads_back_as_the_default_value() {
        let set = load_interfaces().unwrap();
        for text in [
            "geometry_msgs/msg/Twist",
            "sensor_msgs/msg/PointCloud2",
            "rcl_interfaces/msg/Log",
            "std_msgs/msg/Empty",
        ] {
            let name = parse_type_name(text).unwrap();
            let yaml = proto(&set, &name).unwrap();
            let read = roslite_msg_gen::dynamic::from_yaml(&set, &name, &yaml)
                .unwrap_or_else(|e| panic!("{text}: {e}\n{yaml}"));
            assert_eq!(
                read,
                roslite_msg_gen::dynamic::default_value(&set, &name).unwrap(),
                "{text}"
            );
        }
    }
}
