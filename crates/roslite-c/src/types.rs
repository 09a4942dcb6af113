//! Which message types the runtime knows, checked once per type name and cached:
//! `roslite_type_register` and the check every endpoint's type goes through.
//!
//! roslite knows a type when it ships it (`roslite_msgs::TYPE_HASHES`, looked up without
//! parsing anything), when the program registered its definition (`roslite_type_register`,
//! which generated code does for types roslite does not ship), or when a prefix on
//! `$AMENT_PREFIX_PATH` holds `share/<package>/<kind>/<Name>.<ext>`; the first of these wins,
//! as for `roslite interface show`. A known type must carry the hash roslite computes from
//! its definition; an unknown type is refused.

use std::collections::BTreeMap;
use std::ffi::c_char;
use std::sync::{Mutex, MutexGuard};

use roslite_msg_gen::ast::TypeName;
use roslite_msg_gen::registry::InterfaceSet;

use crate::status::{guard, Failure, Status, ROSLITE_INVALID_ARGUMENT, ROSLITE_UNKNOWN_TYPE};
use crate::text::text;

/// The file name registered definitions carry inside the interface set.
const REGISTERED: &str = "<registered by roslite_type_register>";

/// A hash roslite computed from a definition, and where the definition came from.
#[derive(Clone)]
struct Computed {
    hash: String,
    origin: String,
}

#[derive(Default)]
struct Known {
    /// Interface definitions the program registered, by interface name.
    registered: BTreeMap<TypeName, String>,
    /// Per message type name not built in: its computed hash, or why it is not known.
    /// Cleared when a registration adds a definition.
    computed: BTreeMap<String, Result<Computed, String>>,
}

static KNOWN: Mutex<Known> = Mutex::new(Known {
    registered: BTreeMap::new(),
    computed: BTreeMap::new(),
});

fn known() -> MutexGuard<'static, Known> {
    // A panic while holding the lock leaves the maps consistent (each insert is one step).
    KNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn regenerate_hint() -> &'static str {
    "regenerate the C/C++ types (`roslite interface generate --lang c|cpp --out DIR ...`) from \
     the definition roslite uses, and rebuild"
}

fn mismatch(name: &str, hash: &str, computed: &Computed) -> Failure {
    Failure::new(
        ROSLITE_UNKNOWN_TYPE,
        format!(
            "type {name} has hash {hash} here, but roslite computes {} from its definition ({}): \
             the code was generated from another definition of {name}; {}",
            computed.hash,
            computed.origin,
            regenerate_hint()
        ),
    )
}

/// Checks a message type, whose name and hash have the right form, against what roslite knows.
pub(crate) fn check(name: &str, hash: &str) -> Result<(), Failure> {
    if let Ok(i) = roslite::msgs::TYPE_HASHES.binary_search_by(|(n, _)| (*n).cmp(name)) {
        let builtin = roslite::msgs::TYPE_HASHES[i].1;
        if builtin == hash {
            return Ok(());
        }
        return Err(mismatch(
            name,
            hash,
            &Computed {
                hash: builtin.to_owned(),
                origin: "built into roslite".to_owned(),
            },
        ));
    }
    let mut known = known();
    if !known.computed.contains_key(name) {
        let outcome = known.resolve(name);
        known.computed.insert(name.to_owned(), outcome);
    }
    match &known.computed[name] {
        Ok(computed) if computed.hash == hash => Ok(()),
        Ok(computed) => Err(mismatch(name, hash, computed)),
        Err(why) => Err(Failure::new(ROSLITE_UNKNOWN_TYPE, why.clone())),
    }
}

impl Known {
    /// The hash of a type roslite does not ship, from a registered definition or one under
    /// `$AMENT_PREFIX_PATH`, or why there is none.
    fn resolve(&self, name: &str) -> Result<Computed, String> {
        let ament = std::env::var("AMENT_PREFIX_PATH").ok();
        let unknown = || unknown_message(name, ament.as_deref());
        let type_name = TypeName::parse(name).ok_or_else(unknown)?;
        if self.registered.is_empty() && ament.as_deref().is_none_or(str::is_empty) {
            return Err(unknown());
        }
        // Built-in definitions first (registered or found ones cannot shadow them), then the
        // registered ones, then the ament prefixes in order.
        let mut set = InterfaceSet::new();
        roslite_msg_gen::build::add_builtin_interfaces(&mut set)
            .map_err(|e| format!("internal error in roslite's built-in definitions: {e}"))?;
        for (interface, text) in &self.registered {
            // Parsed when registered, so this cannot fail.
            let _ = set.add_source(
                &interface.package,
                interface.kind,
                &interface.name,
                text,
                REGISTERED,
            );
        }
        if let Some(prefixes) = &ament {
            set.add_ament_prefix_path(prefixes);
        }
        set.remove_unusable();
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
        Ok(Computed { hash, origin })
    }
}

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
         and share/{file} under each prefix of $AMENT_PREFIX_PATH ({}); make it known by \
         registering its definition (the __TYPE_DEFINITION of the C header `roslite interface \
         generate --lang c` writes; the C++ APIs register generated types themselves) or by \
         putting its package's install prefix on AMENT_PREFIX_PATH",
        match ament {
            Some(value) if !value.is_empty() => format!("now '{value}'"),
            _ => "unset".to_owned(),
        }
    )
}

/// # Safety
/// `definition` is a string.
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
        for (name, body) in &sections {
            roslite_msg_gen::parse::parse_interface(
                &name.package,
                name.kind,
                &name.name,
                body,
                REGISTERED,
            )
            .map_err(|e| {
                Failure::new(
                    ROSLITE_INVALID_ARGUMENT,
                    format!("the definition of {name} does not parse: {e}"),
                )
            })?;
            if known.registered.get(name).is_some_and(|old| old != body) {
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
        for (name, body) in sections {
            if let std::collections::btree_map::Entry::Vacant(entry) = known.registered.entry(name)
            {
                entry.insert(body);
                added = true;
            }
        }
        if added {
            known.computed.clear();
        }
        Ok(())
    })
}
