//! A definition bundle: one text carrying an interface's definition and those of the types it
//! uses, for a program to hand the runtime (`roslite_type_register` in the C ABI) so that a
//! type roslite does not ship is known to it without any file.
//!
//! The layout follows rosbag2's concatenated `ros2msg` schemas, with a header on every
//! section: each section is a line `MSG: pkg/msg/Name` (`SRV: pkg/srv/Name`,
//! `ACTION: pkg/action/Name`) followed by that file's text; sections are separated by a line
//! of `=` characters (80 when written). An interface written in IDL has the header
//! `IDL: pkg/<kind>/Name` and the text of its `.idl` file.
//!
//! ```text
//! MSG: my_msgs/msg/Pose2D
//! float64 x
//! my_msgs/Angle theta
//! ================================================================================
//! MSG: my_msgs/msg/Angle
//! float64 radians
//! ```

use crate::ast::{InterfaceKind, TypeName};
use crate::registry::SourceFormat;

/// One section of a bundle: an interface, the language of its text, and the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: TypeName,
    pub format: SourceFormat,
    pub text: String,
}

/// What separates two sections.
pub const SEPARATOR: &str =
    "================================================================================";

fn kind_word(kind: InterfaceKind) -> &'static str {
    match kind {
        InterfaceKind::Msg => "MSG",
        InterfaceKind::Srv => "SRV",
        InterfaceKind::Action => "ACTION",
    }
}

/// The bundle of `sections`, each an interface name, the language of its file and the file's
/// text, in order.
pub fn join<'a>(
    sections: impl IntoIterator<Item = (&'a TypeName, SourceFormat, &'a str)>,
) -> String {
    let mut out = String::new();
    for (name, format, text) in sections {
        if !out.is_empty() {
            out.push_str(SEPARATOR);
            out.push('\n');
        }
        let word = match format {
            SourceFormat::Idl => "IDL",
            SourceFormat::Msg => kind_word(name.kind),
        };
        out.push_str(&format!("{word}: {name}\n"));
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The sections of a bundle.
///
/// # Errors
/// What is wrong with the layout: an empty bundle, a section without its `MSG:`/`SRV:`/
/// `ACTION:`/`IDL:` line, a name not of the form `package/kind/Name` or of another kind than
/// the word says.
pub fn split(bundle: &str) -> Result<Vec<Section>, String> {
    let mut sections: Vec<Vec<&str>> = vec![Vec::new()];
    for line in bundle.lines() {
        let trimmed = line.trim_end();
        if trimmed.len() >= 3 && trimmed.bytes().all(|b| b == b'=') {
            sections.push(Vec::new());
        } else if let Some(section) = sections.last_mut() {
            section.push(line);
        }
    }
    let mut out = Vec::new();
    for (index, lines) in sections.iter().enumerate() {
        let Some(header) = lines.iter().position(|l| !l.trim().is_empty()) else {
            return Err(format!(
                "section {} of the definition is empty; each starts with a line such as \
                 'MSG: my_msgs/msg/Name'",
                index + 1
            ));
        };
        let first = lines[header].trim();
        let parsed = first.split_once(':').and_then(|(word, name)| {
            let (kind, format) = match word {
                "MSG" => (Some(InterfaceKind::Msg), SourceFormat::Msg),
                "SRV" => (Some(InterfaceKind::Srv), SourceFormat::Msg),
                "ACTION" => (Some(InterfaceKind::Action), SourceFormat::Msg),
                "IDL" => (None, SourceFormat::Idl),
                _ => return None,
            };
            let name = TypeName::parse(name.trim())?;
            let kind_fits = kind.is_none_or(|kind| kind == name.kind);
            (kind_fits && name.to_string() == name.to_string().trim()).then_some((name, format))
        });
        let Some((name, format)) = parsed else {
            return Err(format!(
                "section {} of the definition starts with '{first}'; expected 'MSG: pkg/msg/Name', \
                 'SRV: pkg/srv/Name', 'ACTION: pkg/action/Name' (the kind matching the name) or \
                 'IDL: pkg/<kind>/Name'",
                index + 1
            ));
        };
        let mut text = lines[header + 1..].join("\n");
        text.push('\n');
        out.push(Section { name, format, text });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_and_split_round_trip() {
        let a = TypeName::parse("p/msg/A").unwrap();
        let s = TypeName::parse("p/srv/S").unwrap();
        let k = TypeName::parse("p/msg/K").unwrap();
        let idl = "module p { module msg { struct K { @key long id; }; }; };\n";
        let bundle = join([
            (&a, SourceFormat::Msg, "int32 x\n"),
            (&s, SourceFormat::Msg, "A a\n---\nbool ok"),
            (&k, SourceFormat::Idl, idl),
        ]);
        assert_eq!(
            bundle,
            format!(
                "MSG: p/msg/A\nint32 x\n{SEPARATOR}\nSRV: p/srv/S\nA a\n---\nbool ok\n\
                 {SEPARATOR}\nIDL: p/msg/K\n{idl}"
            )
        );
        let section = |name: &TypeName, format, text: &str| Section {
            name: name.clone(),
            format,
            text: text.to_owned(),
        };
        assert_eq!(
            split(&bundle).unwrap(),
            vec![
                section(&a, SourceFormat::Msg, "int32 x\n"),
                section(&s, SourceFormat::Msg, "A a\n---\nbool ok\n"),
                section(&k, SourceFormat::Idl, idl),
            ]
        );
    }

    #[test]
    fn split_names_what_is_wrong() {
        assert!(split("")
            .unwrap_err()
            .contains("section 1 of the definition is empty"));
        assert!(split("int32 x\n")
            .unwrap_err()
            .contains("starts with 'int32 x'; expected 'MSG: pkg/msg/Name'"));
        assert!(split("SRV: p/msg/A\nint32 x\n")
            .unwrap_err()
            .contains("the kind matching the name"));
        assert!(split("MSG: p/msg/A\nint32 x\n===\n")
            .unwrap_err()
            .contains("section 2 of the definition is empty"));
    }
}
