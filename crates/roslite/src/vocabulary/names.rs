//! ROS 2 names: validation, expansion and remapping.
//!
//! Rules follow `ros2/design: articles/140_topic_and_service_name_mapping.md` and the rcl/rmw
//! validators (`rmw_validate_node_name`, `rmw_validate_namespace`, `rcl_validate_topic_name`,
//! `rmw_validate_full_topic_name`). Every error names the rule that was broken and where.

use std::fmt;

/// Longest node name rmw accepts.
pub const NODE_NAME_MAX_LEN: usize = 255;

/// Longest fully-qualified topic name that still fits a DDS topic name of 256 characters after
/// the `rt/` prefix is added (rmw: `RMW_TOPIC_MAX_NAME_LENGTH`).
pub const TOPIC_NAME_MAX_LEN: usize = 255 - 8;

/// What kind of name failed validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    Namespace,
    Node,
    Topic,
}

impl fmt::Display for NameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Namespace => "namespace",
            Self::Node => "node name",
            Self::Topic => "topic or service name",
        })
    }
}

/// The naming rule a name broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameRule {
    Empty,
    InvalidCharacter(char),
    StartsWithDigit,
    RepeatedSlash,
    EndsWithSlash,
    NotAbsolute,
    MisplacedTilde,
    UnbalancedBrace,
    UnknownSubstitution,
    TooLong { max: usize },
}

/// A name that breaks a ROS 2 naming rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameError {
    pub kind: NameKind,
    pub name: String,
    pub rule: NameRule,
    /// Byte index of the offending character.
    pub index: usize,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            kind, name, index, ..
        } = self;
        write!(f, "invalid {kind} '{name}': ")?;
        match self.rule {
            NameRule::Empty => write!(f, "must not be empty"),
            NameRule::InvalidCharacter(c) => write!(
                f,
                "character '{c}' at index {index} is not allowed; use only letters, digits, '_' \
                 and '/' (and '~', '{{', '}}' in topic names)"
            ),
            NameRule::StartsWithDigit => write!(
                f,
                "the token at index {index} starts with a digit; name tokens must start with a \
                 letter or '_'"
            ),
            NameRule::RepeatedSlash => write!(f, "repeated '/' at index {index}"),
            NameRule::EndsWithSlash => write!(f, "must not end with '/'"),
            NameRule::NotAbsolute => write!(f, "a namespace must start with '/'"),
            NameRule::MisplacedTilde => write!(
                f,
                "'~' at index {index} is only allowed as the first character, followed by '/' \
                 or nothing"
            ),
            NameRule::UnbalancedBrace => write!(f, "unbalanced '{{' or '}}' at index {index}"),
            NameRule::UnknownSubstitution => write!(
                f,
                "unknown substitution at index {index}; only {{node}}, {{ns}} and \
                 {{namespace}} are defined"
            ),
            NameRule::TooLong { max } => write!(f, "longer than {max} characters"),
        }
    }
}

impl std::error::Error for NameError {}

fn error(kind: NameKind, name: &str, rule: NameRule, index: usize) -> NameError {
    NameError {
        kind,
        name: name.to_owned(),
        rule,
        index,
    }
}

/// A node name: letters, digits and `_`, not starting with a digit, at most 255 characters.
///
/// # Errors
/// The first rule the name breaks.
pub fn validate_node_name(name: &str) -> Result<(), NameError> {
    let kind = NameKind::Node;
    if name.is_empty() {
        return Err(error(kind, name, NameRule::Empty, 0));
    }
    if let Some((i, c)) = name
        .char_indices()
        .find(|(_, c)| !c.is_ascii_alphanumeric() && *c != '_')
    {
        return Err(error(kind, name, NameRule::InvalidCharacter(c), i));
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(error(kind, name, NameRule::StartsWithDigit, 0));
    }
    if name.len() > NODE_NAME_MAX_LEN {
        return Err(error(
            kind,
            name,
            NameRule::TooLong {
                max: NODE_NAME_MAX_LEN,
            },
            0,
        ));
    }
    Ok(())
}

/// An absolute namespace: `/` or `/tok1/tok2` with valid tokens.
///
/// # Errors
/// The first rule the namespace breaks.
pub fn validate_namespace(ns: &str) -> Result<(), NameError> {
    validate_absolute(NameKind::Namespace, ns)
}

/// A fully qualified topic name after expansion: absolute, no `~` or substitutions left.
///
/// # Errors
/// The first rule the name breaks.
pub fn validate_full_topic_name(name: &str) -> Result<(), NameError> {
    validate_absolute(NameKind::Topic, name)?;
    if name.len() > TOPIC_NAME_MAX_LEN {
        return Err(error(
            NameKind::Topic,
            name,
            NameRule::TooLong {
                max: TOPIC_NAME_MAX_LEN,
            },
            0,
        ));
    }
    Ok(())
}

fn validate_absolute(kind: NameKind, name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(error(kind, name, NameRule::Empty, 0));
    }
    if !name.starts_with('/') {
        return Err(error(kind, name, NameRule::NotAbsolute, 0));
    }
    if name == "/" {
        return if kind == NameKind::Namespace {
            Ok(())
        } else {
            Err(error(kind, name, NameRule::EndsWithSlash, 0))
        };
    }
    if name.ends_with('/') {
        return Err(error(kind, name, NameRule::EndsWithSlash, name.len() - 1));
    }
    check_tokens(kind, name, 1)
}

/// Checks the `/`-separated tokens of `name[start..]`.
fn check_tokens(kind: NameKind, name: &str, start: usize) -> Result<(), NameError> {
    let mut token_start = true;
    for (i, c) in name.char_indices().skip_while(|(i, _)| *i < start) {
        match c {
            '/' if token_start => return Err(error(kind, name, NameRule::RepeatedSlash, i)),
            '/' => token_start = true,
            c if c.is_ascii_digit() && token_start => {
                return Err(error(kind, name, NameRule::StartsWithDigit, i))
            }
            c if c.is_ascii_alphanumeric() || c == '_' => token_start = false,
            '~' => return Err(error(kind, name, NameRule::MisplacedTilde, i)),
            c => return Err(error(kind, name, NameRule::InvalidCharacter(c), i)),
        }
    }
    Ok(())
}

/// Expands a topic or service name as written by a user (relative, absolute, `~/private`,
/// with `{node}`/`{ns}` substitutions) into a fully qualified name for the given node.
///
/// # Errors
/// A [`NameError`] naming the rule the input or the result breaks.
pub fn expand_topic_name(name: &str, node: &str, namespace: &str) -> Result<String, NameError> {
    let kind = NameKind::Topic;
    if name.is_empty() {
        return Err(error(kind, name, NameRule::Empty, 0));
    }
    if let Some(i) = name
        .char_indices()
        .skip(1)
        .find(|(_, c)| *c == '~')
        .map(|(i, _)| i)
    {
        return Err(error(kind, name, NameRule::MisplacedTilde, i));
    }
    if name.starts_with('~') && !(name.len() == 1 || name[1..].starts_with('/')) {
        return Err(error(kind, name, NameRule::MisplacedTilde, 0));
    }
    let substituted = substitute(name, node, namespace)?;
    let node_fqn = join(namespace, node);
    let expanded = if let Some(rest) = substituted.strip_prefix('~') {
        format!("{node_fqn}{rest}")
    } else if substituted.starts_with('/') {
        substituted
    } else {
        if substituted.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(error(kind, name, NameRule::StartsWithDigit, 0));
        }
        join(namespace, &substituted)
    };
    validate_full_topic_name(&expanded).map_err(|mut e| {
        // Report against what the user wrote when the problem was already there.
        if expanded.ends_with(name.trim_start_matches(['~', '/'])) {
            let offset = expanded.len() - name.trim_start_matches(['~', '/']).len();
            let lead = name.len() - name.trim_start_matches(['~', '/']).len();
            if e.index >= offset {
                e.index = e.index - offset + lead;
                e.name = name.to_owned();
            }
        }
        e
    })?;
    Ok(expanded)
}

fn substitute(name: &str, node: &str, namespace: &str) -> Result<String, NameError> {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    let mut offset = 0;
    while let Some(open) = rest.find(['{', '}']) {
        if rest.as_bytes()[open] == b'}' {
            return Err(error(
                NameKind::Topic,
                name,
                NameRule::UnbalancedBrace,
                offset + open,
            ));
        }
        let Some(close) = rest[open..].find('}').map(|c| c + open) else {
            return Err(error(
                NameKind::Topic,
                name,
                NameRule::UnbalancedBrace,
                offset + open,
            ));
        };
        out.push_str(&rest[..open]);
        match &rest[open + 1..close] {
            "node" => out.push_str(node),
            "ns" | "namespace" => out.push_str(namespace.trim_end_matches('/')),
            _ => {
                return Err(error(
                    NameKind::Topic,
                    name,
                    NameRule::UnknownSubstitution,
                    offset + open,
                ))
            }
        }
        offset += close + 1;
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `namespace` + `/` + `name`, without doubling the slash for the root namespace.
pub fn join(namespace: &str, name: &str) -> String {
    if namespace.ends_with('/') {
        format!("{namespace}{name}")
    } else {
        format!("{namespace}/{name}")
    }
}

/// One `--remap from:=to` rule, optionally limited to one node (`node:from:=to`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemapRule {
    pub node: Option<String>,
    pub from: String,
    pub to: String,
}

impl RemapRule {
    /// Parses `from:=to` or `node:from:=to`.
    pub fn parse(text: &str) -> Option<Self> {
        let (lhs, to) = text.split_once(":=")?;
        let (node, from) = match lhs.split_once(':') {
            Some((node, from)) => (Some(node.to_owned()), from),
            None => (None, lhs),
        };
        if from.is_empty() || to.is_empty() {
            return None;
        }
        Some(Self {
            node,
            from: from.to_owned(),
            to: to.to_owned(),
        })
    }
}

/// Applies the first matching topic remap rule (rules on both sides are expanded for the node
/// first, as rcl does), returning the remapped fully-qualified name.
///
/// # Errors
/// A [`NameError`] if a matching rule's replacement is not a valid name.
pub fn remap_topic(
    rules: &[RemapRule],
    expanded: &str,
    node: &str,
    namespace: &str,
) -> Result<String, NameError> {
    for rule in rules {
        if rule.from.starts_with("__") || rule.node.as_deref().is_some_and(|n| n != node) {
            continue;
        }
        let Ok(from) = expand_topic_name(&rule.from, node, namespace) else {
            continue;
        };
        if from == expanded {
            return expand_topic_name(&rule.to, node, namespace);
        }
    }
    Ok(expanded.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names() {
        assert!(validate_node_name("talker_1").is_ok());
        assert_eq!(validate_node_name("").unwrap_err().rule, NameRule::Empty);
        assert_eq!(
            validate_node_name("1talker").unwrap_err().rule,
            NameRule::StartsWithDigit
        );
        let e = validate_node_name("my-node").unwrap_err();
        assert_eq!((e.rule, e.index), (NameRule::InvalidCharacter('-'), 2));
        assert!(e.to_string().contains("'-' at index 2"), "{e}");
        assert!(validate_node_name(&"a".repeat(256)).is_err());
    }

    #[test]
    fn namespaces() {
        assert!(validate_namespace("/").is_ok());
        assert!(validate_namespace("/robot1/arm").is_ok());
        assert_eq!(
            validate_namespace("robot").unwrap_err().rule,
            NameRule::NotAbsolute
        );
        assert_eq!(
            validate_namespace("/robot/").unwrap_err().rule,
            NameRule::EndsWithSlash
        );
        assert_eq!(
            validate_namespace("/a//b").unwrap_err().rule,
            NameRule::RepeatedSlash
        );
        assert_eq!(
            validate_namespace("/a/2b").unwrap_err().rule,
            NameRule::StartsWithDigit
        );
    }

    #[test]
    fn expansion() {
        let cases = [
            ("chatter", "/", "/chatter"),
            ("chatter", "/ns", "/ns/chatter"),
            ("/chatter", "/ns", "/chatter"),
            ("~", "/ns", "/ns/node"),
            ("~/state", "/ns", "/ns/node/state"),
            ("~/state", "/", "/node/state"),
            ("{node}/out", "/ns", "/ns/node/out"),
            ("{ns}/x", "/a/b", "/a/b/x"),
            ("foo/bar", "/ns", "/ns/foo/bar"),
        ];
        for (name, ns, want) in cases {
            assert_eq!(
                expand_topic_name(name, "node", ns).unwrap(),
                want,
                "{name} in {ns}"
            );
        }
    }

    #[test]
    fn expansion_errors_name_the_rule() {
        let cases = [
            ("", NameRule::Empty),
            ("foo//bar", NameRule::RepeatedSlash),
            ("foo/", NameRule::EndsWithSlash),
            ("8ball", NameRule::StartsWithDigit),
            ("foo/~bar", NameRule::MisplacedTilde),
            ("~bar", NameRule::MisplacedTilde),
            ("foo bar", NameRule::InvalidCharacter(' ')),
            ("{unknown}", NameRule::UnknownSubstitution),
            ("{node", NameRule::UnbalancedBrace),
            ("node}", NameRule::UnbalancedBrace),
        ];
        for (name, rule) in cases {
            let e = expand_topic_name(name, "node", "/").unwrap_err();
            assert_eq!(e.rule, rule, "{name}: {e}");
        }
        let e = expand_topic_name("foo//bar", "node", "/ns").unwrap_err();
        assert_eq!((e.name.as_str(), e.index), ("foo//bar", 4), "{e}");
    }

    #[test]
    fn remapping() {
        let rules = [
            RemapRule::parse("chatter:=talk").unwrap(),
            RemapRule::parse("other:/x:=/y").unwrap(),
            RemapRule::parse("node:/a:=b").unwrap(),
        ];
        let remap = |name: &str, node: &str| {
            let expanded = expand_topic_name(name, node, "/ns").unwrap();
            remap_topic(&rules, &expanded, node, "/ns").unwrap()
        };
        assert_eq!(remap("chatter", "node"), "/ns/talk");
        assert_eq!(remap("/ns/chatter", "node"), "/ns/talk");
        assert_eq!(remap("/x", "node"), "/x");
        assert_eq!(remap("/x", "other"), "/y");
        assert_eq!(remap("/a", "node"), "/ns/b");
        assert!(RemapRule::parse("nonsense").is_none());
    }
}
