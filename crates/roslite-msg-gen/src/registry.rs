//! A set of parsed interfaces, loaded from sources or `share/` directories, with lookups by
//! full type name and a check that every referenced type exists.
//!
//! Ownership: the set owns each parsed [`Interface`] together with its file text. Every message
//! structure a file defines (a `.msg`, a service's `_Request`/`_Response`/`_Event`, each of the
//! eleven structures of an action) is indexed by its full name and points back at the
//! interface that owns it, so lookups never copy.
//!
//! Layout on disk follows ament: `<prefix>/share/<package>/{msg,srv,action}/<Name>.<ext>`
//! (`ament_index` / `rosidl_cmake` install rules), where `<ext>` is the folder's own
//! (`.msg`, `.srv`, `.action`) or `.idl`. rosidl installs both for every interface it
//! generated from a `.msg`-style file; the `.msg`-style one is read then (it keeps the
//! comments `interface show` prints), the `.idl` only for interfaces written in IDL. The first
//! definition of a name wins, as the first prefix of `AMENT_PREFIX_PATH` shadows later ones.
//!
//! Two ways to load: strictly ([`InterfaceSet::add_share_dir`] and [`InterfaceSet::check`],
//! for builds, where any broken file is an error), and for tools
//! ([`InterfaceSet::add_ament_prefix_path`] then [`InterfaceSet::remove_unusable`]), where one
//! broken file costs only its own types and those that use them: each is recorded as
//! [`Unusable`], and every type left in the set resolves, contains no cycle and has a fixed
//! part of at most [`MAX_FIXED_SIZE`] bytes, so tools can walk and build it without checks.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::ast::{
    BaseType, Collection, Interface, InterfaceKind, MessageSpec, ServiceSpec, TypeName,
};
use crate::parse::{parse_idl, parse_interface, ParseError};

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
    /// last step leads back to the first. `file` and `line` are those of the first step's
    /// field.
    Recursive {
        cycle: Vec<(TypeName, String)>,
        file: String,
        line: usize,
    },
    /// A message whose fixed part is larger than [`MAX_FIXED_SIZE`].
    TooLarge(Box<TooLargeMessage>),
}

/// The most bytes the fixed part of a message may take in CDR: what every instance holds
/// whatever its sequences and strings hold (fixed arrays multiplied out, nested messages
/// included, 4 bytes for each sequence or string). Tools build a default instance element by
/// element (`interface proto`, `topic pub`), so an `int32[4294967295]` would need hundreds of
/// gigabytes; real types carry large data in sequences and have fixed parts of a few
/// kilobytes at most.
pub const MAX_FIXED_SIZE: u64 = 16 << 20;

/// A message whose fixed part exceeds [`MAX_FIXED_SIZE`], and its largest field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLargeMessage {
    pub message: TypeName,
    /// The bytes every instance takes at least (saturating at `u64::MAX`).
    pub size: u64,
    /// The field that takes the most of them, its bytes, its file and line.
    pub field: String,
    pub field_size: u64,
    pub file: String,
    pub line: usize,
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
             package defines (expected a file {}/msg/{}.msg or .idl)",
            missing.package, missing.name
        )
    }
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownType(unknown) => unknown.fmt(f),
            Self::Recursive { cycle, file, line } => {
                write!(
                    f,
                    "{file}:{line}: recursive type: expected messages not to contain themselves, \
                     found "
                )?;
                for (message, field) in cycle {
                    write!(f, "{message}.{field} -> ")?;
                }
                if let Some((first, _)) = cycle.first() {
                    write!(f, "{first}")?;
                }
                f.write_str("; remove or retype one of these fields (ROS 2 has no recursive types)")
            }
            Self::TooLarge(large) => {
                let TooLargeMessage {
                    message,
                    size,
                    field,
                    field_size,
                    file,
                    line,
                } = &**large;
                write!(
                    f,
                    "{file}:{line}: every {message} takes at least {size} bytes ({field_size} of \
                     them in field '{field}'), more than the {MAX_FIXED_SIZE} bytes roslite \
                     allows for the fixed part of a message; make large arrays sequences \
                     (T[] or T[<=N]) or smaller"
                )
            }
        }
    }
}

impl std::error::Error for ResolveError {}

/// Why an interface found under a share directory cannot be used (see
/// [`InterfaceSet::remove_unusable`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unusable {
    /// The file or directory could not be read.
    Unreadable { path: String, error: String },
    /// The file is not a valid definition.
    Parse(ParseError),
    /// One of its messages names a type nobody defines, contains itself or is too large.
    Resolve(ResolveError),
    /// A field's type is itself unusable.
    Uses {
        message: TypeName,
        field: String,
        file: String,
        line: usize,
        unusable: TypeName,
    },
}

impl fmt::Display for Unusable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreadable { path, error } => write!(f, "cannot read {path}: {error}"),
            Self::Parse(e) => e.fmt(f),
            Self::Resolve(e) => e.fmt(f),
            Self::Uses {
                message,
                field,
                file,
                line,
                unusable,
            } => write!(
                f,
                "{file}:{line}: field '{field}' of {message} has type {unusable}, which cannot be \
                 used either (fix {unusable} first)"
            ),
        }
    }
}

impl std::error::Error for Unusable {}

/// The language an interface file is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    /// IDL, as rosidl reads it ([`crate::parse::parse_idl`]).
    Idl,
    /// The `.msg`/`.srv`/`.action` language ([`crate::parse::parse_interface`]).
    Msg,
}

impl SourceFormat {
    /// The file extension of an interface of `kind` in this format: `idl`, or `kind`'s own.
    pub fn extension(self, kind: InterfaceKind) -> &'static str {
        match self {
            Self::Idl => "idl",
            Self::Msg => kind.extension(),
        }
    }
}

/// One loaded file.
#[derive(Clone, Debug)]
struct Entry {
    interface: Interface,
    source: String,
    format: SourceFormat,
    file: String,
}

/// Parsed interfaces keyed by full type name.
#[derive(Clone, Debug, Default)]
pub struct InterfaceSet {
    entries: BTreeMap<TypeName, Entry>,
    /// Every message structure and (sub-)service name, mapped to the interface defining it.
    owners: BTreeMap<TypeName, TypeName>,
    /// Interfaces left out, by interface name (`pkg/srv/X`, never a part of it).
    unusable: BTreeMap<TypeName, Unusable>,
    /// Share directories or package directories that could not be listed.
    unreadable_dirs: Vec<Unusable>,
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
        self.insert(package, kind, name, text, file, SourceFormat::Msg)
            .map(|_| ())
    }

    /// As [`InterfaceSet::add_source`] for the text of an `.idl` file (`name` is its stem,
    /// `kind` the folder it is in).
    ///
    /// # Errors
    ///
    /// The [`ParseError`] of `text`.
    pub fn add_idl_source(
        &mut self,
        package: &str,
        kind: InterfaceKind,
        name: &str,
        text: &str,
        file: &str,
    ) -> Result<(), ParseError> {
        self.insert(package, kind, name, text, file, SourceFormat::Idl)
            .map(|_| ())
    }

    /// Adds every `<share>/<package>/{msg,srv,action}/*.{msg,srv,action,idl}`, in sorted
    /// order, and returns how many new interfaces were added; an `.idl` file only where no
    /// `.msg`/`.srv`/`.action` file of the same name is next to it. Other files (`.json`) and
    /// directories without interfaces are ignored.
    ///
    /// # Errors
    ///
    /// [`LoadError::Io`] if `share` or a file in it cannot be read, [`LoadError::Parse`] for
    /// the first invalid file.
    pub fn add_share_dir(&mut self, share: &Path) -> Result<usize, LoadError> {
        self.load_share_dir(share, Broken::Fail)
    }

    /// Adds the `share` directory of every prefix in an `AMENT_PREFIX_PATH`-style list
    /// (`:`-separated, earlier prefixes win), and returns how many interfaces were added.
    /// Prefixes without `share/` are skipped, as ament does.
    ///
    /// A file or directory that cannot be read or parsed is left out and recorded (see
    /// [`InterfaceSet::problems`]); the rest still loads. A broken file still takes its name,
    /// so that the same name in a later prefix does not silently stand in for it.
    pub fn add_ament_prefix_path(&mut self, value: &str) -> usize {
        let mut added = 0;
        for prefix in value.split(':').filter(|p| !p.is_empty()) {
            let share = Path::new(prefix).join("share");
            if share.is_dir() {
                added += self
                    .load_share_dir(&share, Broken::Skip)
                    .expect("internal bug: Broken::Skip records problems instead of failing");
            }
        }
        added
    }

    fn load_share_dir(&mut self, share: &Path, broken: Broken) -> Result<usize, LoadError> {
        let mut added = 0;
        let Some(package_dirs) = self.list_dir(share, broken)? else {
            return Ok(0);
        };
        for package_dir in package_dirs {
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
                let Some(paths) = self.list_dir(&dir, broken)? else {
                    continue;
                };
                // The folder's own format first, so that it wins over the `.idl` beside it.
                let files = [SourceFormat::Msg, SourceFormat::Idl]
                    .into_iter()
                    .flat_map(|format| {
                        paths
                            .iter()
                            .filter(move |p| {
                                p.extension().and_then(|e| e.to_str())
                                    == Some(format.extension(kind))
                            })
                            .map(move |p| (p.clone(), format))
                    });
                for (path, format) in files.collect::<Vec<_>>() {
                    let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
                        continue;
                    };
                    let key = TypeName::new(package, kind, name);
                    if self.entries.contains_key(&key) || self.unusable.contains_key(&key) {
                        continue;
                    }
                    let file = path.display().to_string();
                    let text = match fs::read_to_string(&path) {
                        Ok(text) => text,
                        Err(source) if broken == Broken::Fail => {
                            return Err(LoadError::Io { path, source });
                        }
                        Err(e) => {
                            let problem = Unusable::Unreadable {
                                path: file,
                                error: e.to_string(),
                            };
                            self.unusable.insert(key, problem);
                            continue;
                        }
                    };
                    match self.insert(package, kind, name, &text, &file, format) {
                        Ok(true) => added += 1,
                        Ok(false) => {}
                        Err(e) if broken == Broken::Fail => return Err(e.into()),
                        Err(e) => {
                            self.unusable.insert(key, Unusable::Parse(e));
                        }
                    }
                }
            }
        }
        Ok(added)
    }

    /// The sorted entries of `dir`; `None` when it cannot be read and `broken` says to skip
    /// it (recorded in `unreadable_dirs`).
    fn list_dir(&mut self, dir: &Path, broken: Broken) -> Result<Option<Vec<PathBuf>>, LoadError> {
        match sorted_dir(dir) {
            Ok(paths) => Ok(Some(paths)),
            Err(e) if broken == Broken::Fail => Err(e),
            Err(e) => {
                let error = match &e {
                    LoadError::Io { source, .. } => source.to_string(),
                    LoadError::Parse(p) => p.to_string(),
                };
                self.unreadable_dirs.push(Unusable::Unreadable {
                    path: dir.display().to_string(),
                    error,
                });
                Ok(None)
            }
        }
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

    /// The language of the file that defines `name` (or the part `name`).
    pub fn format(&self, name: &TypeName) -> Option<SourceFormat> {
        let owner = self
            .entries
            .get(name)
            .or_else(|| self.entries.get(self.owners.get(name)?));
        owner.map(|e| e.format)
    }

    /// The file name given when the file defining `name` (or the part `name`) was added.
    pub fn file(&self, name: &TypeName) -> Option<&str> {
        let owner = self
            .entries
            .get(name)
            .or_else(|| self.entries.get(self.owners.get(name)?));
        owner.map(|e| e.file.as_str())
    }

    /// Checks that every message-typed field names a loaded message, that no message
    /// contains itself, and that no message's fixed part exceeds [`MAX_FIXED_SIZE`].
    ///
    /// # Errors
    ///
    /// The first problem found, visiting interfaces in name order.
    pub fn check(&self) -> Result<(), ResolveError> {
        if let Some((_, unknown)) = self.unknown_field_types().into_iter().next() {
            return Err(ResolveError::UnknownType(Box::new(unknown)));
        }
        if let Some(cycle) = self.find_cycle() {
            return Err(cycle.into_iter().next().expect("a cycle has a step").1);
        }
        match self.too_large().into_iter().next() {
            Some((_, large)) => Err(ResolveError::TooLarge(Box::new(large))),
            None => Ok(()),
        }
    }

    /// Takes out every interface that [`InterfaceSet::check`] would complain about, and every
    /// interface using one of them, recording why for [`InterfaceSet::unusable`]. What stays
    /// passes `check`.
    pub fn remove_unusable(&mut self) {
        // Cycles first: the search for unknown types and the sizes assume none.
        while let Some(steps) = self.find_cycle() {
            for (interface, error) in steps {
                self.make_unusable(&interface, Unusable::Resolve(error));
            }
        }
        self.remove_unresolved();
        let too_large = self.too_large();
        if !too_large.is_empty() {
            for (interface, large) in too_large {
                let problem = Unusable::Resolve(ResolveError::TooLarge(Box::new(large)));
                self.make_unusable(&interface, problem);
            }
            self.remove_unresolved();
        }
    }

    /// Why the interface `name`, or the interface a part such as `pkg/srv/X_Request` belongs
    /// to, was left out, if it was.
    pub fn unusable(&self, name: &TypeName) -> Option<&Unusable> {
        if let Some(problem) = self.unusable.get(name) {
            return Some(problem);
        }
        // A part of a service or action: `X_Request`, `X_SendGoal_Event`, ...
        self.unusable.iter().find_map(|(interface, problem)| {
            let part_of = interface.package == name.package
                && interface.kind == name.kind
                && name
                    .name
                    .strip_prefix(interface.name.as_str())
                    .is_some_and(|rest| rest.starts_with('_'));
            part_of.then_some(problem)
        })
    }

    /// Every problem recorded while loading and by [`InterfaceSet::remove_unusable`]:
    /// directories that could not be listed, then interfaces left out, by name.
    pub fn problems(&self) -> impl Iterator<Item = &Unusable> {
        self.unreadable_dirs.iter().chain(self.unusable.values())
    }

    /// Takes out interfaces with a field whose type is not in the set, until none is left:
    /// the first such field of each, as an unknown type or a use of an unusable one.
    fn remove_unresolved(&mut self) {
        loop {
            let unresolved = self.unknown_field_types();
            if unresolved.is_empty() {
                return;
            }
            for (interface, unknown) in unresolved {
                let problem = if self.unusable(&unknown.missing).is_some() {
                    Unusable::Uses {
                        message: unknown.message,
                        field: unknown.field,
                        file: unknown.file,
                        line: unknown.line,
                        unusable: unknown.missing,
                    }
                } else {
                    Unusable::Resolve(ResolveError::UnknownType(Box::new(unknown)))
                };
                self.make_unusable(&interface, problem);
            }
        }
    }

    fn make_unusable(&mut self, interface: &TypeName, problem: Unusable) {
        if self.entries.remove(interface).is_some() {
            self.owners.retain(|_, owner| owner != interface);
        }
        self.unusable.entry(interface.clone()).or_insert(problem);
    }

    /// The first field of each interface whose message type is not loaded.
    fn unknown_field_types(&self) -> Vec<(TypeName, UnknownFieldType)> {
        let mut found = Vec::new();
        for (name, entry) in &self.entries {
            let unknown = message_specs(&entry.interface)
                .into_iter()
                .find_map(|message| {
                    message
                        .fields
                        .iter()
                        .find_map(|field| match &field.ty.base {
                            BaseType::Named(target) if self.message(target).is_none() => {
                                Some(UnknownFieldType {
                                    message: message.name.clone(),
                                    field: field.name.clone(),
                                    file: entry.file.clone(),
                                    line: field.line,
                                    missing: target.clone(),
                                })
                            }
                            _ => None,
                        })
                });
            if let Some(unknown) = unknown {
                found.push((name.clone(), unknown));
            }
        }
        found
    }

    /// Messages whose fixed part exceeds [`MAX_FIXED_SIZE`], with the interface defining
    /// each. Assumes no cycle; unknown types count as empty.
    fn too_large(&self) -> Vec<(TypeName, TooLargeMessage)> {
        let mut sizes: BTreeMap<TypeName, u64> = BTreeMap::new();
        let mut found = Vec::new();
        for (name, entry) in &self.entries {
            for message in message_specs(&entry.interface) {
                let size = self.fixed_size(message, &mut sizes);
                if size <= MAX_FIXED_SIZE || found.iter().any(|(n, _)| n == name) {
                    continue;
                }
                let (field, field_size) = message
                    .fields
                    .iter()
                    .map(|field| {
                        (
                            field,
                            self.field_fixed_size(&field.ty.base, &field.ty.collection, &mut sizes),
                        )
                    })
                    .max_by_key(|(_, size)| *size)
                    .expect("internal bug: a message over the size limit has fields");
                found.push((
                    name.clone(),
                    TooLargeMessage {
                        message: message.name.clone(),
                        size,
                        field: field.name.clone(),
                        field_size,
                        file: entry.file.clone(),
                        line: field.line,
                    },
                ));
            }
        }
        found
    }

    /// The CDR bytes every instance of `message` takes at least, saturating; `sizes` keeps
    /// those already computed. Recursion follows nesting, which has no cycle here.
    fn fixed_size(&self, message: &MessageSpec, sizes: &mut BTreeMap<TypeName, u64>) -> u64 {
        if let Some(&size) = sizes.get(&message.name) {
            return size;
        }
        let size = message.fields.iter().fold(0u64, |total, field| {
            total.saturating_add(self.field_fixed_size(&field.ty.base, &field.ty.collection, sizes))
        });
        sizes.insert(message.name.clone(), size);
        size
    }

    fn field_fixed_size(
        &self,
        base: &BaseType,
        collection: &Collection,
        sizes: &mut BTreeMap<TypeName, u64>,
    ) -> u64 {
        // A sequence's fixed part is its 32-bit length.
        const LENGTH: u64 = 4;
        let element = match base {
            BaseType::Primitive(p) => p.size() as u64,
            BaseType::String { .. } | BaseType::WString { .. } => LENGTH,
            BaseType::Named(name) => match self.message(name) {
                Some(nested) => self.fixed_size(nested, sizes),
                None => 0,
            },
        };
        match collection {
            Collection::Single => element,
            Collection::Array(n) => element.saturating_mul(*n as u64),
            Collection::BoundedSequence(_) | Collection::UnboundedSequence => LENGTH,
        }
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
        format: SourceFormat,
    ) -> Result<bool, ParseError> {
        let key = TypeName::new(package, kind, name);
        if self.entries.contains_key(&key) {
            return Ok(false);
        }
        let interface = match format {
            SourceFormat::Idl => parse_idl(package, kind, name, text, file)?,
            SourceFormat::Msg => parse_interface(package, kind, name, text, file)?,
        };
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
                format,
                file: file.to_owned(),
            },
        );
        Ok(true)
    }

    /// Depth-first search over message-typed fields; a field leading to a message still on
    /// the stack closes a cycle. Returns each interface on the first cycle found, with the
    /// cycle as seen from its own step (its file and line first). Unknown types are skipped.
    fn find_cycle(&self) -> Option<Vec<(TypeName, ResolveError)>> {
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
                        let steps: Vec<&crate::ast::Field> = stack[start..]
                            .iter()
                            .map(|(m, next)| &m.fields[next - 1])
                            .collect();
                        let names: Vec<(TypeName, String)> = stack[start..]
                            .iter()
                            .zip(&steps)
                            .map(|((m, _), field)| (m.name.clone(), field.name.clone()))
                            .collect();
                        let mut found = Vec::new();
                        for (i, ((message, _), field)) in
                            stack[start..].iter().zip(&steps).enumerate()
                        {
                            let interface = self.owners[&message.name].clone();
                            if found.iter().any(|(n, _)| *n == interface) {
                                continue;
                            }
                            let mut cycle = names[i..].to_vec();
                            cycle.extend_from_slice(&names[..i]);
                            let error = ResolveError::Recursive {
                                cycle,
                                file: self.file(&message.name).unwrap_or_default().to_owned(),
                                line: field.line,
                            };
                            found.push((interface, error));
                        }
                        return Some(found);
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
        None
    }
}

/// What loading does with a file or directory it cannot read or parse.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Broken {
    /// Stop with its error.
    Fail,
    /// Record it and go on.
    Skip,
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
             package defines (expected a file q/msg/Missing.msg or .idl)"
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
            "p/msg/A.msg:2: recursive type: expected messages not to contain themselves, found \
             p/msg/A.b -> p/msg/B.cs -> p/msg/C.back -> p/msg/A; remove or retype one of these \
             fields (ROS 2 has no recursive types)"
        );
        let only_self = set_with_self_reference();
        assert!(matches!(
            only_self.check(),
            Err(ResolveError::Recursive { cycle, file, line })
                if cycle == vec![(tn("p/msg/D"), "children".into())]
                    && file == "p/msg/D.msg" && line == 2
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
        assert_eq!(set.add_ament_prefix_path(&prefixes), 1);
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

    /// A set as tools load it: what `files` define, with the broken ones taken out.
    fn tool_set(files: &[(&str, InterfaceKind, &str, &str)]) -> InterfaceSet {
        let mut set = set(files);
        set.remove_unusable();
        set.check()
            .expect("what remove_unusable leaves passes check");
        set
    }

    #[test]
    fn cycles_are_unusable_and_named_at_each_step() {
        let set = tool_set(&[
            ("p", InterfaceKind::Msg, "A", "int8 x\nB b\n"),
            ("p", InterfaceKind::Msg, "B", "A a\n"),
            ("p", InterfaceKind::Msg, "Self", "Self[<=1] me\n"),
            ("p", InterfaceKind::Msg, "UsesA", "int8 y\nA[] a\n"),
            ("p", InterfaceKind::Msg, "Fine", "int8 z\n"),
            ("p", InterfaceKind::Srv, "Get", "---\nB b\n"),
        ]);
        assert!(set.message(&tn("p/msg/Fine")).is_some());
        let why = |name: &str| set.unusable(&tn(name)).map(ToString::to_string);
        assert_eq!(
            why("p/msg/A").unwrap(),
            "p/msg/A.msg:2: recursive type: expected messages not to contain themselves, found \
             p/msg/A.b -> p/msg/B.a -> p/msg/A; remove or retype one of these fields (ROS 2 has \
             no recursive types)"
        );
        assert!(why("p/msg/B")
            .unwrap()
            .starts_with("p/msg/B.msg:1: recursive type"));
        assert!(why("p/msg/Self")
            .unwrap()
            .starts_with("p/msg/Self.msg:1: recursive type"));
        assert_eq!(
            why("p/msg/UsesA").unwrap(),
            "p/msg/UsesA.msg:2: field 'a' of p/msg/UsesA has type p/msg/A, which cannot be used \
             either (fix p/msg/A first)"
        );
        // A service's parts answer for the service.
        assert!(why("p/srv/Get_Response")
            .unwrap()
            .contains("p/srv/Get.srv:2: field 'b'"));
        assert!(set.message(&tn("p/srv/Get_Response")).is_none());
        assert_eq!(why("p/msg/Fine"), None);
        assert_eq!(set.problems().count(), 5);
    }

    #[test]
    fn messages_larger_than_the_fixed_limit_are_unusable() {
        let set = tool_set(&[
            (
                "p",
                InterfaceKind::Msg,
                "Huge",
                "int8 x\nint32[4294967295] data\n",
            ),
            // 4 MiB each, 32 MiB together: every part is small, the whole is not.
            ("p", InterfaceKind::Msg, "Block", "uint8[4194304] bytes\n"),
            ("p", InterfaceKind::Msg, "Blocks", "Block[8] blocks\n"),
            ("p", InterfaceKind::Msg, "UsesBlocks", "Blocks b\n"),
            // Sequences and strings hold their data outside the fixed part.
            (
                "p",
                InterfaceKind::Msg,
                "Seqs",
                "int32[<=4294967295] a\nstring<=4294967294 s\nBlock[] many\n",
            ),
        ]);
        assert!(set.message(&tn("p/msg/Block")).is_some());
        assert!(set.message(&tn("p/msg/Seqs")).is_some());
        let Some(Unusable::Resolve(ResolveError::TooLarge(huge))) = set.unusable(&tn("p/msg/Huge"))
        else {
            panic!("Huge must be too large")
        };
        assert_eq!(
            (huge.size, huge.field.as_str(), huge.line),
            (4 * 4294967295 + 1, "data", 2)
        );
        let message = set.unusable(&tn("p/msg/Huge")).unwrap().to_string();
        assert!(
            message.starts_with("p/msg/Huge.msg:2: every p/msg/Huge takes at least"),
            "{message}"
        );
        assert!(message.contains("make large arrays sequences"), "{message}");
        let blocks = set.unusable(&tn("p/msg/Blocks")).unwrap().to_string();
        assert!(blocks.contains("33554432 bytes"), "{blocks}");
        assert!(set.unusable(&tn("p/msg/UsesBlocks")).is_some());
        // The strict check stops at the first.
        let mut strict = set_without_removal();
        strict
            .add_source(
                "p",
                InterfaceKind::Msg,
                "Huge",
                "uint8[16777217] a\n",
                "Huge.msg",
            )
            .unwrap();
        assert!(matches!(strict.check(), Err(ResolveError::TooLarge(_))));
    }

    fn set_without_removal() -> InterfaceSet {
        set(&[("p", InterfaceKind::Msg, "Max", "uint8[16777216] a\n")])
    }

    #[test]
    fn one_broken_file_leaves_the_rest_of_the_path_usable() {
        let dir = std::env::temp_dir().join(format!("roslite-broken-{}", std::process::id()));
        let first = dir.join("first/share");
        let later = dir.join("later/share");
        for (share, package, name, text) in [
            (&first, "apkg", "Bad", "int32\n"),
            (&first, "apkg", "Good", "int32 x\n"),
            (&first, "apkg", "UsesBad", "Bad b\n"),
            (&first, "apkg", "Zeta", "Good g\n"),
            (&later, "bpkg", "Later", "apkg/Good g\n"),
            // Shadowed by the broken file of the same name: not a silent stand-in.
            (&later, "apkg", "Bad", "int32 fine\n"),
        ] {
            let msg_dir = share.join(package).join("msg");
            fs::create_dir_all(&msg_dir).unwrap();
            fs::write(msg_dir.join(format!("{name}.msg")), text).unwrap();
        }
        let mut set = InterfaceSet::new();
        let path = format!(
            "{}:{}",
            dir.join("first").display(),
            dir.join("later").display()
        );
        // Good, UsesBad, Zeta, Later: everything that parses.
        assert_eq!(set.add_ament_prefix_path(&path), 4);
        set.remove_unusable();
        for good in ["apkg/msg/Good", "apkg/msg/Zeta", "bpkg/msg/Later"] {
            assert!(set.message(&tn(good)).is_some(), "{good}");
        }
        let problems: Vec<String> = set.problems().map(ToString::to_string).collect();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].ends_with(
                "apkg/msg/Bad.msg:1: expected a field name after type 'int32', \
                                   found end of line"
            ),
            "{problems:?}"
        );
        assert!(
            problems[1].contains("UsesBad.msg:1: field 'b' of apkg/msg/UsesBad"),
            "{problems:?}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
