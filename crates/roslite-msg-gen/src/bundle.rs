//! A definition bundle: one text carrying an interface's definition and those of the types it
//! uses, for a program to hand the runtime (`roslite_type_register` in the C ABI) so that a
//! type roslite does not ship is known to it without any file.
//!
//! The layout follows rosbag2's concatenated `ros2msg` schemas, with a header on every
//! section: each section is a line `MSG: pkg/msg/Name` (`SRV: pkg/srv/Name`,
//! `ACTION: pkg/action/Name`) followed by that file's text; sections are separated by a line
//! of `=` characters (80 when written).
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

/// The bundle of `sections`, each an interface name and its file's text, in order.
pub fn join<'a>(sections: impl IntoIterator<Item = (&'a TypeName, &'a str)>) -> String {
    let mut out = String::new();
    for (name, text) in sections {
        if !out.is_empty() {
            out.push_str(SEPARATOR);
            out.push('\n');
        }
        out.push_str(&format!("{}: {name}\n", kind_word(name.kind)));
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The sections of a bundle: each interface name and its text.
///
/// # Errors
/// What is wrong with the layout: an empty bundle, a section without its `MSG:`/`SRV:`/
/// `ACTION:` line, a name not of the form `package/kind/Name` or of another kind than the
/// word says.
pub fn split(bundle: &str) -> Result<Vec<(TypeName, String)>, String> {
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
            let kind = match word {
                "MSG" => InterfaceKind::Msg,
                "SRV" => InterfaceKind::Srv,
                "ACTION" => InterfaceKind::Action,
                _ => return None,
            };
            let name = TypeName::parse(name.trim())?;
            (name.kind == kind && name.to_string() == name.to_string().trim()).then_some(name)
        });
        let Some(name) = parsed else {
            return Err(format!(
                "section {} of the definition starts with '{first}'; expected 'MSG: pkg/msg/Name', \
                 'SRV: pkg/srv/Name' or 'ACTION: pkg/action/Name' (the kind matching the name)",
                index + 1
            ));
        };
        let mut text = lines[header + 1..].join("\n");
        text.push('\n');
        out.push((name, text));
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
        let bundle = join([(&a, "int32 x\n"), (&s, "A a\n---\nbool ok")]);
        assert_eq!(
            bundle,
            format!("MSG: p/msg/A\nint32 x\n{SEPARATOR}\nSRV: p/srv/S\nA a\n---\nbool ok\n")
        );
        assert_eq!(
            split(&bundle).unwrap(),
            vec![
                (a, "int32 x\n".to_owned()),
                (s, "A a\n---\nbool ok\n".to_owned())
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
