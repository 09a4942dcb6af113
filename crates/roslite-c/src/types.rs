//! Which message types the runtime knows, checked once per type name and cached:
//! `roslite_type_register` and the check every endpoint's type goes through, which also gives
//! a keyed type's key, so that its endpoints are keyed as rclpy's are (docs/ros2-interop.md §8).
//!
//! roslite knows a type when it ships it (`roslite_msgs::TYPE_HASHES`, looked up without
//! parsing anything), when the program registered its definition (`roslite_type_register`,
//! which generated code does for types roslite does not ship), or when a prefix on
//! `$AMENT_PREFIX_PATH` holds `share/<package>/<kind>/<Name>.<ext>`; the first of these wins,
//! as for `roslite interface show`. A known type must carry the hash roslite computes from
//! its definition; an unknown type is refused.
//!
//! Computing a hash from a definition takes the interface parser and every built-in
//! definition's text, about 0.3 MB of a static node (docs/footprint.md). A library built
//! without the `definitions` feature (the size-optimised one for small boards) leaves them
//! out: built-in types are still checked by their hash (and keyed by `TYPE_KEYS`), a
//! registered type is known by its name and trusted to carry the hash its generator computed,
//! but without its definition it cannot be keyed (its endpoints are keyless), and
//! `$AMENT_PREFIX_PATH` is not read (the `lean` module, compiled only then).

#[cfg(feature = "definitions")]
use std::collections::BTreeMap;
#[cfg(feature = "definitions")]
use std::ffi::c_char;
#[cfg(feature = "definitions")]
use std::sync::{Mutex, MutexGuard};

#[cfg(feature = "definitions")]
use roslite_msg_gen::ast::TypeName;
#[cfg(feature = "definitions")]
use roslite_msg_gen::bundle::Section;
#[cfg(feature = "definitions")]
use roslite_msg_gen::registry::{InterfaceSet, SourceFormat};

use roslite::msgs::cdr::key::KeyStruct;

#[cfg(feature = "definitions")]
use crate::status::{guard, Status, ROSLITE_INVALID_ARGUMENT};
use crate::status::{Failure, ROSLITE_UNKNOWN_TYPE};
#[cfg(feature = "definitions")]
use crate::text::text;

/// A keyed type's key members; `None` for a keyless type.
pub(crate) type Key = Option<&'static KeyStruct>;

/// The file name registered definitions carry inside the interface set.
#[cfg(feature = "definitions")]
const REGISTERED: &str = "<registered by roslite_type_register>";

/// A hash roslite computed from a definition, where the definition came from, and the key it
/// defines.
#[cfg(feature = "definitions")]
#[derive(Clone)]
struct Computed {
    hash: String,
    origin: String,
    key: Key,
}

#[cfg(feature = "definitions")]
#[derive(Default)]
struct Known {
    /// Interface definitions the program registered, by interface name: the language and the
    /// text of each.
    registered: BTreeMap<TypeName, (SourceFormat, String)>,
    /// Per message type name not built in: its computed hash, or why it is not known.
    /// Cleared when a registration adds a definition.
    computed: BTreeMap<String, Result<Computed, String>>,
    /// Every definition known, made when first asked for; dropped when a registration adds
    /// one. ($AMENT_PREFIX_PATH is read once, when it is made.)
    set: Option<std::sync::Arc<InterfaceSet>>,
}

#[cfg(feature = "definitions")]
static KNOWN: Mutex<Known> = Mutex::new(Known {
    registered: BTreeMap::new(),
    computed: BTreeMap::new(),
    set: None,
});

#[cfg(feature = "definitions")]
fn known() -> MutexGuard<'static, Known> {
    // A panic while holding the lock leaves the maps consistent (each insert is one step).
    KNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg_attr(not(feature = "definitions"), allow(dead_code))]
fn regenerate_hint() -> &'static str {
    "regenerate the C/C++ types (`roslite interface generate --lang c|cpp --out DIR ...`) from \
     the definition roslite uses, and rebuild"
}

/// `computed` is the hash roslite has for `name`, from its definition at `origin`.
fn mismatch(name: &str, hash: &str, computed: &str, origin: &str) -> Failure {
    Failure::new(
        ROSLITE_UNKNOWN_TYPE,
        format!(
            "type {name} has hash {hash} here, but roslite computes {computed} from its \
             definition ({origin}): the code was generated from another definition of {name}; \
             {}",
            regenerate_hint()
        ),
    )
}

/// Checks a built-in type's hash, and gives its key: `None` for a type roslite does not ship.
fn check_builtin(name: &str, hash: &str) -> Option<Result<Key, Failure>> {
    let builtin = builtin_hash(name)?;
    let key = roslite::msgs::TYPE_KEYS
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .ok()
        .map(|i| roslite::msgs::TYPE_KEYS[i].1);
    if builtin == hash {
        return Some(Ok(key));
    }
    Some(Err(mismatch(name, hash, builtin, "built into roslite")))
}

/// Checks a message type, whose name and hash have the right form, against what roslite
/// knows; its key.
#[cfg(feature = "definitions")]
pub(crate) fn check(name: &str, hash: &str) -> Result<Key, Failure> {
    if let Some(outcome) = check_builtin(name, hash) {
        return outcome;
    }
    let mut known = known();
    if !known.computed.contains_key(name) {
        let outcome = known.resolve(name);
        known.computed.insert(name.to_owned(), outcome);
    }
    match &known.computed[name] {
        Ok(computed) if computed.hash == hash => Ok(computed.key),
        Ok(computed) => Err(mismatch(name, hash, &computed.hash, &computed.origin)),
        Err(why) => Err(Failure::new(ROSLITE_UNKNOWN_TYPE, why.clone())),
    }
}

#[cfg(feature = "definitions")]
impl Known {
    /// Every definition roslite knows: built-in ones first (registered or found ones cannot
    /// shadow them), then the registered ones, then those under the `ament` prefixes in order.
    fn interface_set(&self, ament: Option<&str>) -> Result<InterfaceSet, String> {
        let mut set = InterfaceSet::new();
        roslite_msg_gen::build::add_builtin_interfaces(&mut set)
            .map_err(|e| format!("internal error in roslite's built-in definitions: {e}"))?;
        for (interface, (format, text)) in &self.registered {
            let (package, kind, name) = (&interface.package, interface.kind, &interface.name);
            // Parsed when registered, so this cannot fail.
            let _ = match format {
                SourceFormat::Idl => set.add_idl_source(package, kind, name, text, REGISTERED),
                SourceFormat::Msg => set.add_source(package, kind, name, text, REGISTERED),
            };
        }
        if let Some(prefixes) = ament {
            set.add_ament_prefix_path(prefixes);
        }
        set.remove_unusable();
        Ok(set)
    }

    /// The hash of a type roslite does not ship, from a registered definition or one under
    /// `$AMENT_PREFIX_PATH`, or why there is none.
    fn resolve(&self, name: &str) -> Result<Computed, String> {
        let ament = std::env::var("AMENT_PREFIX_PATH").ok();
        let unknown = || unknown_message(name, ament.as_deref());
        let type_name = TypeName::parse(name).ok_or_else(unknown)?;
        if self.registered.is_empty() && ament.as_deref().is_none_or(str::is_empty) {
            return Err(unknown());
        }
        let set = self.interface_set(ament.as_deref())?;
        if set.message(&type_name).is_none() {
            return Err(match set.unusable(&type_name) {
                Some(problem) => format!(
                    "type {name} cannot be used: {problem}; fix its definition and regenerate"
                ),
                None => unknown(),
            });
        }
        let hash = roslite_msg_gen::hash::type_hash(&set, &type_name)
            .map_err(|e| format!("type {name}: {e}"))?;
        let origin = match set.file(&type_name) {
            Some(REGISTERED) | None => "registered by this program".to_owned(),
            Some(file) => format!("from {file}"),
        };
        let key = roslite_msg_gen::key::key_layout(&set, &type_name);
        Ok(Computed { hash, origin, key })
    }
}

/// Every definition roslite knows (see [`Known::interface_set`]), for encoding messages of
/// types the program gave no code for (a service's introspection events) and describing
/// types; made once and kept until a registration adds a definition.
#[cfg(feature = "definitions")]
pub(crate) fn interface_set() -> Result<std::sync::Arc<InterfaceSet>, Failure> {
    let mut known = known();
    if let Some(set) = &known.set {
        return Ok(set.clone());
    }
    let ament = std::env::var("AMENT_PREFIX_PATH").ok();
    let set = std::sync::Arc::new(
        known
            .interface_set(ament.as_deref())
            .map_err(|why| Failure::new(ROSLITE_UNKNOWN_TYPE, why))?,
    );
    known.set = Some(set.clone());
    Ok(set)
}

/// The REP 2011 description of type `name` (a message, service or action), built from its
/// definition once and kept for the process (`roslite_msg_gen::described`): what a node
/// serves on `~/get_type_description` for its endpoints, and what a content filter reads
/// fields by.
#[cfg(feature = "definitions")]
pub(crate) fn description(
    name: &str,
) -> Result<&'static roslite::msgs::description::TypeDescription, Failure> {
    let unknown = |why: String| Failure::new(ROSLITE_UNKNOWN_TYPE, why);
    let type_name =
        TypeName::parse(name).ok_or_else(|| unknown(format!("'{name}' is not a type name")))?;
    let set = interface_set()?;
    roslite_msg_gen::described::leaked(&set, &type_name).map_err(|e| unknown(e.to_string()))
}

/// The hash of service type `name` (`pkg/srv/Name`): built in, or computed from its known
/// definition; None when it has none.
#[cfg(feature = "definitions")]
pub(crate) fn service_hash(name: &str) -> Option<String> {
    if let Some(hash) = builtin_service_hash(name) {
        return Some(hash.to_owned());
    }
    let type_name = TypeName::parse(name)?;
    let set = interface_set().ok()?;
    roslite_msg_gen::hash::type_hash(&set, &type_name).ok()
}

/// The hash roslite knows for message type `name`: built in, or computed from a known
/// definition. For types the program names without a hash (a service's event type).
#[cfg(feature = "definitions")]
pub(crate) fn known_hash(name: &str) -> Result<String, Failure> {
    if let Some(hash) = builtin_hash(name) {
        return Ok(hash.to_owned());
    }
    let mut known = known();
    if !known.computed.contains_key(name) {
        let outcome = known.resolve(name);
        known.computed.insert(name.to_owned(), outcome);
    }
    match &known.computed[name] {
        Ok(computed) => Ok(computed.hash.clone()),
        Err(why) => Err(Failure::new(ROSLITE_UNKNOWN_TYPE, why.clone())),
    }
}

/// What makes the description of type `name` when a node is first asked for it
/// (`roslite::TypeInfo::described_later`): building one parses definitions, which a node
/// should not pay for until then. None without a definition.
pub(crate) fn describe(name: &str) -> Option<&'static roslite::msgs::description::TypeDescription> {
    description(name).ok()
}

/// The hash of a service roslite ships.
fn builtin_service_hash(name: &str) -> Option<&'static str> {
    let i = roslite::msgs::SERVICE_HASHES
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .ok()?;
    Some(roslite::msgs::SERVICE_HASHES[i].1)
}

/// The hash of a type roslite ships.
fn builtin_hash(name: &str) -> Option<&'static str> {
    let i = roslite::msgs::TYPE_HASHES
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .ok()?;
    Some(roslite::msgs::TYPE_HASHES[i].1)
}

#[cfg(feature = "definitions")]
fn unknown_message(name: &str, ament: Option<&str>) -> String {
    let file = TypeName::parse(name).map_or_else(
        || name.to_owned(),
        |t| {
            format!(
                "{}/{}/{}.{}",
                t.package,
                t.kind.as_str(),
                t.name,
                t.kind.extension()
            )
        },
    );
    let file = file
        .rsplit_once("_Request.")
        .or_else(|| file.rsplit_once("_Response."))
        .map_or(file.clone(), |(base, ext)| format!("{base}.{ext}"));
    format!(
        "type {name} is unknown to roslite: roslite knows the packages it ships (`roslite \
         interface packages`), definitions the program registered with roslite_type_register(), \
         and share/{file} (or the .idl beside it) under each prefix of $AMENT_PREFIX_PATH ({}); \
         make it known by registering its definition (the __TYPE_DEFINITION of the C header \
         `roslite interface generate --lang c` writes; the C++ APIs register generated types \
         themselves) or by putting its package's install prefix on AMENT_PREFIX_PATH",
        match ament {
            Some(value) if !value.is_empty() => format!("now '{value}'"),
            _ => "unset".to_owned(),
        }
    )
}

/// # Safety
/// `definition` is a string.
#[cfg(feature = "definitions")]
#[no_mangle]
pub unsafe extern "C" fn roslite_type_register(definition: *const c_char) -> Status {
    guard(|| {
        let definition = text(definition, "definition")?;
        let sections = roslite_msg_gen::bundle::split(definition).map_err(|e| {
            Failure::new(
                ROSLITE_INVALID_ARGUMENT,
                format!("{e} (the layout of a generated __TYPE_DEFINITION)"),
            )
        })?;
        let mut known = known();
        // Everything is checked before anything is added.
        for Section { name, format, text } in &sections {
            let parse = match format {
                SourceFormat::Idl => roslite_msg_gen::parse::parse_idl,
                SourceFormat::Msg => roslite_msg_gen::parse::parse_interface,
            };
            parse(&name.package, name.kind, &name.name, text, REGISTERED).map_err(|e| {
                Failure::new(
                    ROSLITE_INVALID_ARGUMENT,
                    format!("the definition of {name} does not parse: {e}"),
                )
            })?;
            if known
                .registered
                .get(name)
                .is_some_and(|old| *old != (*format, text.clone()))
            {
                return Err(Failure::new(
                    ROSLITE_INVALID_ARGUMENT,
                    format!(
                        "{name} was registered before with another definition: the program's \
                         generated types come from different definitions of {name}; {}",
                        regenerate_hint()
                    ),
                ));
            }
        }
        let mut added = false;
        for Section { name, format, text } in sections {
            if let std::collections::btree_map::Entry::Vacant(entry) = known.registered.entry(name)
            {
                entry.insert((format, text));
                added = true;
            }
        }
        if added {
            known.computed.clear();
            known.set = None;
        }
        Ok(())
    })
}

#[cfg(not(feature = "definitions"))]
pub use lean::roslite_type_register;
#[cfg(not(feature = "definitions"))]
pub(crate) use lean::{check, description, known_hash, service_hash};

/// A keyed type roslite ships comes with its key, the one its generated Rust type has, and
/// a keyless one without.
#[cfg(test)]
fn assert_builtin_keyed_type_has_its_key() {
    use roslite::msgs::test_msgs::msg::{KeyedLong, NonKeyedWithNestedKey};
    use roslite::Message;
    let key = check(KeyedLong::TYPE_NAME, KeyedLong::TYPE_HASH).unwrap();
    assert!(key.is_some());
    assert_eq!(key, KeyedLong::KEY);
    let keyless = check(
        NonKeyedWithNestedKey::TYPE_NAME,
        NonKeyedWithNestedKey::TYPE_HASH,
    );
    assert_eq!(keyless.unwrap(), None);
}

/// The check without definitions (see the module docs).
#[cfg(not(feature = "definitions"))]
mod lean {
    use std::collections::BTreeSet;
    use std::ffi::c_char;
    use std::sync::{Mutex, PoisonError};

    use super::{builtin_hash, check_builtin, Key};
    use crate::status::{guard, Failure, Status, ROSLITE_INVALID_ARGUMENT, ROSLITE_UNKNOWN_TYPE};
    use crate::text::text;

    /// Interface names ("pkg/msg/Name") the program registered.
    static REGISTERED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

    /// The interface a message type belongs to: itself, or the service or action whose part
    /// it is (`pkg/srv/Name_Request` belongs to `pkg/srv/Name`).
    fn interfaces_of(name: &str) -> impl Iterator<Item = &str> {
        const PARTS: [&str; 10] = [
            "_SendGoal_Request",
            "_SendGoal_Response",
            "_GetResult_Request",
            "_GetResult_Response",
            "_FeedbackMessage",
            "_Request",
            "_Response",
            "_Goal",
            "_Result",
            "_Feedback",
        ];
        std::iter::once(name).chain(PARTS.iter().filter_map(move |part| name.strip_suffix(part)))
    }

    /// As the full library's `description`: this build carries no definitions.
    pub(crate) fn description(
        name: &str,
    ) -> Result<&'static roslite::msgs::description::TypeDescription, Failure> {
        Err(Failure::new(
            ROSLITE_UNKNOWN_TYPE,
            format!(
                "this size-optimised roslite carries no type definitions, so it cannot \
                 describe {name}; use the full library"
            ),
        ))
    }

    /// As the full library's `service_hash`, for built-in services only.
    pub(crate) fn service_hash(name: &str) -> Option<String> {
        super::builtin_service_hash(name).map(str::to_owned)
    }

    /// As the full library's `known_hash`, for built-in types only: this build computes no
    /// hash from a definition.
    pub(crate) fn known_hash(name: &str) -> Result<String, Failure> {
        builtin_hash(name).map(str::to_owned).ok_or_else(|| {
            Failure::new(
                ROSLITE_UNKNOWN_TYPE,
                format!(
                    "the hash of {name} is unknown: this size-optimised roslite computes no \
                     hash from a definition, and knows only those of the packages it ships"
                ),
            )
        })
    }

    /// As the full library's `check`, but a registered type, whose definition this build
    /// does not parse, is keyless.
    pub(crate) fn check(name: &str, hash: &str) -> Result<Key, Failure> {
        if let Some(outcome) = check_builtin(name, hash) {
            return outcome;
        }
        let registered = REGISTERED.lock().unwrap_or_else(PoisonError::into_inner);
        if interfaces_of(name).any(|i| registered.contains(i)) {
            return Ok(None);
        }
        Err(Failure::new(
            ROSLITE_UNKNOWN_TYPE,
            format!(
                "type {name} is unknown to roslite: this size-optimised roslite knows the \
                 packages it ships and definitions the program registered with \
                 roslite_type_register() (the C++ APIs register generated types themselves); \
                 it does not read $AMENT_PREFIX_PATH"
            ),
        ))
    }

    /// # Safety
    /// `definition` is a string.
    #[no_mangle]
    pub unsafe extern "C" fn roslite_type_register(definition: *const c_char) -> Status {
        guard(|| {
            let definition = text(definition, "definition")?;
            let names: Vec<&str> = definition
                .lines()
                .filter_map(|line| {
                    ["MSG: ", "SRV: ", "ACTION: ", "IDL: "]
                        .iter()
                        .find_map(|tag| line.strip_prefix(tag))
                })
                .map(str::trim)
                .collect();
            if names.is_empty() {
                return Err(Failure::new(
                    ROSLITE_INVALID_ARGUMENT,
                    "the definition names no interface (no `MSG: pkg/msg/Name` line): pass the \
                     __TYPE_DEFINITION of a generated C header",
                ));
            }
            let mut registered = REGISTERED.lock().unwrap_or_else(PoisonError::into_inner);
            registered.extend(names.into_iter().map(str::to_owned));
            Ok(())
        })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn register(text: &str) -> Status {
            let text = std::ffi::CString::new(text).unwrap();
            // SAFETY: a string.
            unsafe { roslite_type_register(text.as_ptr()) }
        }

        #[test]
        fn builtin_types_by_hash_registered_ones_by_name() {
            let string_hash = roslite::msgs::TYPE_HASHES
                .iter()
                .find(|(n, _)| *n == "std_msgs/msg/String")
                .unwrap()
                .1;
            assert_eq!(check("std_msgs/msg/String", string_hash).unwrap(), None);
            crate::types::assert_builtin_keyed_type_has_its_key();
            let wrong = "RIHS01_".to_owned() + &"0".repeat(64);
            assert!(check("std_msgs/msg/String", &wrong).is_err());
            let unknown = check("lean_msgs/srv/Ask_Request", &wrong).unwrap_err();
            assert_eq!(unknown.status, ROSLITE_UNKNOWN_TYPE);
            assert!(
                unknown.message.contains("AMENT_PREFIX_PATH"),
                "{}",
                unknown.message
            );
            assert_eq!(register("no header here"), ROSLITE_INVALID_ARGUMENT);
            assert_eq!(
                register("SRV: lean_msgs/srv/Ask\nint32 a\n---\nint32 b\n"),
                0
            );
            assert_eq!(
                check("lean_msgs/srv/Ask_Request", &wrong).unwrap(),
                None,
                "a registered type cannot be keyed without its definition parsed"
            );
            assert!(check("lean_msgs/srv/Ask_Response", &wrong).is_ok());
            assert!(check("lean_msgs/srv/Other_Request", &wrong).is_err());
        }
    }
}

#[cfg(all(test, feature = "definitions"))]
mod tests {
    use super::*;

    #[test]
    fn builtin_keyed_types_have_their_keys() {
        assert_builtin_keyed_type_has_its_key();
    }

    /// A definition bundle with an `IDL:` section registers, and the type's hash is computed
    /// from the IDL, its key from its `@key` member.
    #[test]
    fn idl_sections_register() {
        let idl =
            "module idl_reg_msgs { module msg {\n  struct Tagged {\n    @key uint16 id;\n    \
                   std_msgs::msg::Header header;\n  };\n}; };\n";
        let bundle = format!("IDL: idl_reg_msgs/msg/Tagged\n{idl}");
        let text = std::ffi::CString::new(bundle).unwrap();
        // SAFETY: a string.
        assert_eq!(unsafe { roslite_type_register(text.as_ptr()) }, 0);
        let mut set = InterfaceSet::new();
        roslite_msg_gen::build::add_builtin_interfaces(&mut set).unwrap();
        set.add_idl_source(
            "idl_reg_msgs",
            roslite_msg_gen::ast::InterfaceKind::Msg,
            "Tagged",
            idl,
            "x",
        )
        .unwrap();
        let name = TypeName::parse("idl_reg_msgs/msg/Tagged").unwrap();
        let hash = roslite_msg_gen::hash::type_hash(&set, &name).unwrap();
        let key = check("idl_reg_msgs/msg/Tagged", &hash).unwrap();
        assert_eq!(
            key,
            roslite_msg_gen::key::key_layout(&set, &name),
            "the registered type is keyed by its @key member"
        );
        assert!(key.is_some());
        let wrong = format!("RIHS01_{}", "0".repeat(64));
        assert!(check("idl_reg_msgs/msg/Tagged", &wrong).is_err());

        // An IDL section that does not parse is refused with where and why.
        let broken = std::ffi::CString::new("IDL: idl_reg_msgs/msg/Broken\nmodule x {\n").unwrap();
        // SAFETY: a string.
        let status = unsafe { roslite_type_register(broken.as_ptr()) };
        assert_eq!(status, ROSLITE_INVALID_ARGUMENT);
    }
}
