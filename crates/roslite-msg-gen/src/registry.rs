//! A set of parsed interfaces, loaded from sources or `share/` directories, with lookups by
//! full type name and a check that every referenced type exists.
//!
//! Ownership: the set owns each parsed [`Interface`] together with its file text. Every message
//! structure a file defines (a `.msg`, a service's `_Request`/`_Response`/`_Event`, each of the
//! eleven structures of an action) is indexed by its full name and points back at the
//! interface that owns it, so lookups never copy.
//!
//! Layout on disk follows ament: `<prefix>/share/<package>/{msg,srv,action}/<Name>.<ext>`
//! (`ament_index` / `rosidl_cmake` install rules). The first definition of a name wins, as the
//! first prefix of `AMENT_PREFIX_PATH` shadows later ones.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::ast::{BaseType, Interface, InterfaceKind, MessageSpec, ServiceSpec, TypeName};
use crate::parse::{parse_interface, ParseError};

/// Loading interface files failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadError {
    /// A directory or file could not be read.
    Io { path: PathBuf, source: io::Error },
    /// A file was read but is not a valid interface definition.
    Parse(ParseError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            Self::Parse(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            Self::Parse(e) => Some(e),
        }
    }
}

impl From<ParseError> for LoadError {
    fn from(e: ParseError) -> Self {
        Self::Parse(e)
    }
}

/// The loaded interfaces do not form a closed, finite set of types.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolveError {
    /// A field names a message type that no loaded file defines.
    UnknownType(Box<UnknownFieldType>),
    /// A message contains itself, directly or through other messages, so it would have no
    /// finite size or C layout. Each step is a message and the field leading to the next; the
    /// last step leads back to the first.
    Recursive { cycle: Vec<(TypeName, String)> },
}

/// A message-typed field whose type is not loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFieldType {
    /// The message whose field is broken.
    pub message: TypeName,
    pub field: String,
    /// The file defining `message` and the field's line in it (0 for synthesized fields).
    pub file: String,
    pub line: usize,
    pub missing: TypeName,
}

impl fmt::Display for UnknownFieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            message,
            field,
            file,
            line,
            missing,
        } = self;
        write!(
            f,
            "{file}:{line}: field '{field}' of {message} has type {missing}, which no loaded \
             package defines (expected a .msg file {}/msg/{}.msg)",
            missing.package, missing.name
        )
    }
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownType(unknown) => unknown.fmt(f),
            Self::Recursive { cycle } => {
                write!(
                    f,
                    "recursive type: expected messages not to contain themselves, found "
                )?;
                for (message, field) in cycle {
                    write!(f, "{message}.{field} -> ")?;
                }
                match cycle.first() {
                    Some((first, _)) => write!(f, "{first}"),
                    None => Ok(()),
                }
            }
        }
    }
}

impl std::error::Error for ResolveError {}

/// One loaded file.
#[derive(Clone, Debug)]
struct Entry {
    interface: Interface,
    source: String,
    file: String,
}

/// Parsed interfaces keyed by full type name.
#[derive(Clone, Debug, Default)]
pub struct InterfaceSet {
    entries: BTreeMap<TypeName, Entry>,
    /// Every message structure and (sub-)service name, mapped to the interface defining it.
    owners: BTreeMap<TypeName, TypeName>,
}

impl InterfaceSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses and adds one file's text. If `package/kind/name` is already loaded, the earlier
    /// definition is kept and `text` is not even parsed.
    ///
    /// # Errors
    ///
    /// The [`ParseError`] of `text`.
    pub fn add_source(
        &mut self,
        package: &str,
        kind: InterfaceKind,
        name: &str,
        text: &str,
        file: &str,
    ) -> Result<(), ParseError> {
        self.insert(package, kind, name, text, file).map(|_| ())
    }

    /// Adds every `<share>/<package>/{msg,srv,action}/*.{msg,srv,action}`, in sorted order, and
    /// returns how many new interfaces were added. Other files (`.idl`, `.json`) and
    /// directories without interfaces are ignored.
    ///
    /// # Errors
    ///
    /// [`LoadError::Io`] if `share` or a file in it cannot be read, [`LoadError::Parse`] for
    /// the first invalid file.
    pub fn add_share_dir(&mut self, share: &Path) -> Result<usize, LoadError> {
        let mut added = 0;
        for package_dir in sorted_dir(share)? {
            let Some(package) = package_dir.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            for kind in [
                InterfaceKind::Msg,
                InterfaceKind::Srv,
                InterfaceKind::Action,
            ] {
                let dir = package_dir.join(kind.as_str());
                if !dir.is_dir() {
                    continue;
                }
                for path in sorted_dir(&dir)? {
                    if path.extension().and_then(|e| e.to_str()) != Some(kind.extension()) {
                        continue;
                    }
                    let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
                        continue;
                    };
                    let text = fs::read_to_string(&path).map_err(|source| LoadError::Io {
                        path: path.clone(),
                        source,
                    })?;
                    let file = path.display().to_string();
                    if self.insert(package, kind, name, &text, &file)? {
                        added += 1;
                    }
                }
            }
        }
        Ok(added)
    }

    /// Adds the `share` directory of every prefix in an `AMENT_PREFIX_PATH`-style list
    /// (`:`-separated, earlier prefixes win). Prefixes without `share/` are skipped, as ament
    /// does.
    ///
    /// # Errors
    ///
    /// As [`InterfaceSet::add_share_dir`].
    pub fn add_ament_prefix_path(&mut self, value: &str) -> Result<usize, LoadError> {
        let mut added = 0;
        for prefix in value.split(':').filter(|p| !p.is_empty()) {
            let share = Path::new(prefix).join("share");
            if share.is_dir() {
                added += self.add_share_dir(&share)?;
            }
        }
        Ok(added)
    }

    /// All loaded interfaces, sorted by [`TypeName`].
    pub fn interfaces(&self) -> impl Iterator<Item = &Interface> {
        self.entries.values().map(|e| &e.interface)
    }

    /// The interface defined by the file `name` (`pkg/msg/X`, `pkg/srv/X`, `pkg/action/X`).
    pub fn interface(&self, name: &TypeName) -> Option<&Interface> {
        self.entries.get(name).map(|e| &e.interface)
    }

    /// Any message structure by full name: a `.msg`, a service's `_Request`, `_Response` or
    /// `_Event`, or an action's `_Goal`, `_Result`, `_Feedback`, `_FeedbackMessage` and the
    /// request/response/event of its `_SendGoal` and `_GetResult` services.
    pub fn message(&self, name: &TypeName) -> Option<&MessageSpec> {
        let owner = self.entries.get(self.owners.get(name)?)?;
        message_specs(&owner.interface)
            .into_iter()
            .find(|m| m.name == *name)
    }

    /// A service by full name: a `.srv`, or an action's `_SendGoal`/`_GetResult`.
    pub fn service(&self, name: &TypeName) -> Option<&ServiceSpec> {
        let owner = self.entries.get(self.owners.get(name)?)?;
        service_specs(&owner.interface)
            .into_iter()
            .find(|s| s.name == *name)
    }

    /// Every message structure of every loaded interface, synthesized ones included, sorted
    /// by name.
    pub fn messages(&self) -> impl Iterator<Item = &MessageSpec> {
        self.owners.keys().filter_map(|name| self.message(name))
    }

    /// The text of the file that defines `name`; for a part such as `pkg/srv/X_Request`, the
    /// text of the whole `X.srv`.
    pub fn source(&self, name: &TypeName) -> Option<&str> {
        let owner = self
            .entries
            .get(name)
            .or_else(|| self.entries.get(self.owners.get(name)?));
        owner.map(|e| e.source.as_str())
    }

    /// The file name given when the file defining `name` (or the part `name`) was added.
    pub fn file(&self, name: &TypeName) -> Option<&str> {
        let owner = self
            .entries
            .get(name)
            .or_else(|| self.entries.get(self.owners.get(name)?));
        owner.map(|e| e.file.as_str())
    }

    /// Checks that every message-typed field names a loaded message and that no message
    /// contains itself.
    ///
    /// # Errors
    ///
    /// The first problem found, visiting interfaces in name order.
    pub fn check(&self) -> Result<(), ResolveError> {
        for entry in self.entries.values() {
            for message in message_specs(&entry.interface) {
                for field in &message.fields {
                    let BaseType::Named(target) = &field.ty.base else {
                        continue;
                    };
                    if self.message(target).is_none() {
                        return Err(ResolveError::UnknownType(Box::new(UnknownFieldType {
                            message: message.name.clone(),
                            field: field.name.clone(),
                            file: entry.file.clone(),
                            line: field.line,
                            missing: target.clone(),
                        })));
                    }
                }
            }
        }
        self.check_acyclic()
    }

    /// The names of all packages with at least one loaded interface, sorted.
    pub fn packages(&self) -> Vec<&str> {
        let set: BTreeSet<&str> = self.entries.keys().map(|t| t.package.as_str()).collect();
        set.into_iter().collect()
    }

    /// Parses and stores one file unless its name is taken; returns whether it was added.
    fn insert(
        &mut self,
        package: &str,
        kind: InterfaceKind,
        name: &str,
        text: &str,
        file: &str,
    ) -> Result<bool, ParseError> {
        let key = TypeName::new(package, kind, name);
        if self.entries.contains_key(&key) {
            return Ok(false);
        }
        let interface = parse_interface(package, kind, name, text, file)?;
        for part in message_specs(&interface) {
            self.owners.insert(part.name.clone(), key.clone());
        }
        for service in service_specs(&interface) {
            self.owners.insert(service.name.clone(), key.clone());
        }
        self.entries.insert(
            key,
            Entry {
                interface,
                source: text.to_owned(),
                file: file.to_owned(),
            },
        );
        Ok(true)
    }

    /// Depth-first search over message-typed fields; a field leading to a message still on
    /// the stack closes a cycle. Unknown types were reported by `check` already.
    fn check_acyclic(&self) -> Result<(), ResolveError> {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            OnStack,
            Done,
        }
        let mut state: BTreeMap<&TypeName, State> = BTreeMap::new();
        for root in self.messages() {
            if state.contains_key(&root.name) {
                continue;
            }
            // Each frame: a message and the index of the next field to follow.
            let mut stack: Vec<(&MessageSpec, usize)> = vec![(root, 0)];
            state.insert(&root.name, State::OnStack);
            while let Some((message, next)) = stack.last_mut() {
                let Some(field) = message.fields.get(*next) else {
                    state.insert(&message.name, State::Done);
                    stack.pop();
                    continue;
                };
                *next += 1;
                let BaseType::Named(target) = &field.ty.base else {
                    continue;
                };
                match state.get(target) {
                    Some(State::Done) => {}
                    Some(State::OnStack) => {
                        let start = stack
                            .iter()
                            .position(|(m, _)| m.name == *target)
                            .expect("internal bug: an OnStack message is on the stack");
                        let cycle = stack[start..]
                            .iter()
                            .map(|(m, next)| (m.name.clone(), m.fields[next - 1].name.clone()))
                            .collect();
                        return Err(ResolveError::Recursive { cycle });
                    }
                    None => {
                        if let Some(child) = self.message(target) {
                            state.insert(&child.name, State::OnStack);
                            stack.push((child, 0));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Every message structure an interface defines, synthesized ones included.
fn message_specs(interface: &Interface) -> Vec<&MessageSpec> {
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

/// Every service an interface defines: a `.srv` itself, or an action's two services.
fn service_specs(interface: &Interface) -> Vec<&ServiceSpec> {
    match interface {
        Interface::Message(_) => Vec::new(),
        Interface::Service(s) => vec![s],
        Interface::Action(a) => vec![&a.send_goal, &a.get_result],
    }
}

/// The entries of a directory, sorted so that loading is deterministic.
fn sorted_dir(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let io_error = |source| LoadError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut paths = fs::read_dir(dir)
        .map_err(io_error)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io_error)?;
    paths.sort();
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(files: &[(&str, InterfaceKind, &str, &str)]) -> InterfaceSet {
        let mut set = InterfaceSet::new();
        for (package, kind, name, text) in files {
            let file = format!("{package}/{}/{name}.{}", kind.as_str(), kind.extension());
            set.add_source(package, *kind, name, text, &file).unwrap();
        }
        set
    }

    fn tn(s: &str) -> TypeName {
        TypeName::parse(s).unwrap()
    }

    #[test]
    fn parts_of_services_and_actions_are_found_by_full_name() {
        let set = set(&[
            ("p", InterfaceKind::Srv, "Add", "int64 a\n---\nint64 sum\n"),
            (
                "p",
                InterfaceKind::Action,
                "Fib",
                "int32 order\n---\nint32[] seq\n---\nint32[] seq\n",
            ),
        ]);
        for name in ["p/srv/Add_Request", "p/srv/Add_Response", "p/srv/Add_Event"] {
            assert_eq!(set.message(&tn(name)).unwrap().name, tn(name));
        }
        for suffix in [
            "Goal",
            "Result",
            "Feedback",
            "FeedbackMessage",
            "SendGoal_Request",
            "SendGoal_Response",
            "SendGoal_Event",
            "GetResult_Request",
            "GetResult_Response",
            "GetResult_Event",
        ] {
            let name = tn(&format!("p/action/Fib_{suffix}"));
            assert_eq!(set.message(&name).unwrap().name, name);
        }
        assert!(set.message(&tn("p/srv/Add")).is_none());
        assert!(set.service(&tn("p/srv/Add")).is_some());
        assert!(set.service(&tn("p/action/Fib_SendGoal")).is_some());
        assert!(set.service(&tn("p/action/Fib_GetResult")).is_some());
        assert!(set.interface(&tn("p/action/Fib")).is_some());
        assert_eq!(
            set.source(&tn("p/srv/Add_Request")),
            Some("int64 a\n---\nint64 sum\n")
        );
        assert_eq!(set.packages(), vec!["p"]);
        assert_eq!(set.messages().count(), 3 + 10);
    }

    #[test]
    fn first_definition_wins() {
        let mut set = set(&[("p", InterfaceKind::Msg, "A", "int32 first\n")]);
        set.add_source("p", InterfaceKind::Msg, "A", "int32 second\n", "A.msg")
            .unwrap();
        // Not parsed at all, so a broken shadowed file is no error either.
        set.add_source("p", InterfaceKind::Msg, "A", "broken", "A.msg")
            .unwrap();
        assert_eq!(set.message(&tn("p/msg/A")).unwrap().fields[0].name, "first");
    }

    #[test]
    fn interfaces_are_sorted_by_type_name() {
        let set = set(&[
            ("b", InterfaceKind::Msg, "Z", ""),
            ("a", InterfaceKind::Srv, "Y", "---\n"),
            ("a", InterfaceKind::Msg, "X", ""),
        ]);
        let names: Vec<String> = set.interfaces().map(|i| i.name().to_string()).collect();
        assert_eq!(names, ["a/msg/X", "a/srv/Y", "b/msg/Z"]);
        assert_eq!(set.packages(), vec!["a", "b"]);
    }

    #[test]
    fn check_names_the_missing_type_and_field() {
        let set = set(&[("p", InterfaceKind::Msg, "A", "int32 x\nq/Missing thing\n")]);
        let err = set.check().unwrap_err();
        assert_eq!(
            err,
            ResolveError::UnknownType(Box::new(UnknownFieldType {
                message: tn("p/msg/A"),
                field: "thing".into(),
                file: "p/msg/A.msg".into(),
                line: 2,
                missing: tn("q/msg/Missing"),
            }))
        );
        assert_eq!(
            err.to_string(),
            "p/msg/A.msg:2: field 'thing' of p/msg/A has type q/msg/Missing, which no loaded \
             package defines (expected a .msg file q/msg/Missing.msg)"
        );
    }

    #[test]
    fn check_reports_synthesized_references() {
        // Without service_msgs loaded the `_Event` cannot resolve.
        let set = set(&[("p", InterfaceKind::Srv, "S", "---\n")]);
        let ResolveError::UnknownType(unknown) = set.check().unwrap_err() else {
            panic!("expected UnknownType");
        };
        assert_eq!(
            (&unknown.message, unknown.field.as_str()),
            (&tn("p/srv/S_Event"), "info")
        );
        assert_eq!((unknown.file.as_str(), unknown.line), ("p/srv/S.srv", 0));
        assert_eq!(unknown.missing, tn("service_msgs/msg/ServiceEventInfo"));
    }

    #[test]
    fn check_finds_recursion() {
        let set = set(&[
            ("p", InterfaceKind::Msg, "A", "int32 x\nB b\n"),
            ("p", InterfaceKind::Msg, "B", "C[] cs\n"),
            ("p", InterfaceKind::Msg, "C", "A[<=1] back\n"),
            ("p", InterfaceKind::Msg, "D", "D[] children\n"),
        ]);
        let err = set.check().unwrap_err();
        assert_eq!(
            err.to_string(),
            "recursive type: expected messages not to contain themselves, found \
             p/msg/A.b -> p/msg/B.cs -> p/msg/C.back -> p/msg/A"
        );
        let only_self = set_with_self_reference();
        assert!(matches!(
            only_self.check(),
            Err(ResolveError::Recursive { cycle }) if cycle == vec![(tn("p/msg/D"), "children".into())]
        ));
    }

    fn set_with_self_reference() -> InterfaceSet {
        set(&[("p", InterfaceKind::Msg, "D", "int8 x\nD[] children\n")])
    }

    #[test]
    fn check_accepts_shared_non_recursive_references() {
        let set = set(&[
            ("p", InterfaceKind::Msg, "Leaf", "int8 x\n"),
            ("p", InterfaceKind::Msg, "Mid", "Leaf a\nLeaf b\n"),
            ("p", InterfaceKind::Msg, "Top", "Mid m\nLeaf l\nMid[] ms\n"),
        ]);
        set.check().unwrap();
    }

    #[test]
    fn share_dir_loading_reports_io_and_parse_errors() {
        let dir = std::env::temp_dir().join(format!("roslite-registry-{}", std::process::id()));
        let msg_dir = dir.join("share/demo_pkg/msg");
        fs::create_dir_all(&msg_dir).unwrap();
        fs::create_dir_all(dir.join("share/not_interfaces/cmake")).unwrap();
        fs::write(msg_dir.join("Good.msg"), "int32 x\n").unwrap();
        fs::write(msg_dir.join("Good.idl"), "ignored").unwrap();
        fs::write(msg_dir.join("Good.json"), "ignored").unwrap();

        let mut set = InterfaceSet::new();
        let prefixes = format!("/nonexistent/prefix::{}", dir.display());
        assert_eq!(set.add_ament_prefix_path(&prefixes).unwrap(), 1);
        assert_eq!(
            set.add_share_dir(&dir.join("share")).unwrap(),
            0,
            "already loaded"
        );
        assert!(set.message(&tn("demo_pkg/msg/Good")).is_some());

        fs::write(msg_dir.join("Bad.msg"), "int32\n").unwrap();
        let err = InterfaceSet::new()
            .add_share_dir(&dir.join("share"))
            .unwrap_err();
        assert!(matches!(&err, LoadError::Parse(e) if e.line == 1 && e.file.ends_with("Bad.msg")));

        let err = InterfaceSet::new()
            .add_share_dir(&dir.join("missing"))
            .unwrap_err();
        assert!(err.to_string().starts_with("cannot read "), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
