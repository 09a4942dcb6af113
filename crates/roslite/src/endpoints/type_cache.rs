//! A node's type cache, as rcl's `node_type_cache.c` keeps one: the REP 2011 type description
//! of every type the node's publishers, subscriptions, services, clients and actions use,
//! by RIHS01 hash, counted per endpoint, for its `~/get_type_description` service to answer
//! from. An endpoint registers its type when it is created and the registration ends when it
//! is dropped; a type stays answerable while some endpoint of the node uses it.

use std::sync::{Arc, Mutex, PoisonError};

use roslite_msgs::description::TypeDescription;

/// The parameter that decides whether a node serves `~/get_type_description` (its answers are
/// built from this cache).
pub const START_TYPE_DESCRIPTION_SERVICE: &str = "start_type_description_service";

/// The 32 bytes of a RIHS01 hash.
pub(crate) type TypeHashValue = [u8; 32];

/// The types in use by one node's endpoints.
#[derive(Default)]
pub(crate) struct TypeCache {
    /// A node uses a handful of types: a list searched in order is all it takes.
    entries: Mutex<Vec<CachedType>>,
}

/// Makes the description of a type, by name, when a node is first asked for it: for a type
/// known only at run time whose description costs memory to build (the C ABI's endpoints'),
/// which most nodes are never asked for. None if it cannot.
pub type Describe = fn(&str) -> Option<&'static TypeDescription>;

/// The stack the thread that makes a description gets: a program's main thread's.
const DESCRIBE_STACK: usize = 8 << 20;

/// A cached type's description: at hand, or made when first asked for.
#[derive(Clone, Copy)]
enum Described {
    Now(&'static TypeDescription),
    Later(&'static str, Describe),
}

struct CachedType {
    hash: TypeHashValue,
    description: Described,
    /// Endpoints of the node using the type now.
    registrations: usize,
}

impl TypeCache {
    /// Registers one more endpoint using the type with hash `type_hash`, when there is a
    /// description of it to serve (generated types have one, hand-written ones and run-time
    /// types without a definition do not) and the hash is a RIHS01 hash; the registration
    /// lasts until the returned value is dropped.
    pub(crate) fn register(
        self: &Arc<Self>,
        type_hash: &str,
        description: Option<&'static TypeDescription>,
    ) -> Option<TypeRegistration> {
        self.register_described(type_hash, Described::Now(description?))
    }

    /// As [`Self::register`], for type `type_name` whose description `describe` makes when a
    /// node is first asked for it.
    pub(crate) fn register_later(
        self: &Arc<Self>,
        type_hash: &str,
        type_name: &'static str,
        describe: Describe,
    ) -> Option<TypeRegistration> {
        self.register_described(type_hash, Described::Later(type_name, describe))
    }

    fn register_described(
        self: &Arc<Self>,
        type_hash: &str,
        description: Described,
    ) -> Option<TypeRegistration> {
        let hash = parse_type_hash(type_hash)?;
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        match entries.iter_mut().find(|e| e.hash == hash) {
            Some(entry) => entry.registrations += 1,
            None => entries.push(CachedType {
                hash,
                description,
                registrations: 1,
            }),
        }
        Some(TypeRegistration {
            _registered: Box::new(Registered {
                cache: self.clone(),
                hash,
            }),
        })
    }

    /// The description of the type with hash `hash`, if an endpoint of the node uses it.
    pub(crate) fn find(&self, hash: &TypeHashValue) -> Option<&'static TypeDescription> {
        let described = {
            let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
            entries.iter().find(|e| e.hash == *hash)?.description
        };
        let (name, describe) = match described {
            Described::Now(description) => return Some(description),
            Described::Later(name, describe) => (name, describe),
        };
        // Made outside the lock, then kept for the next request; on a thread of its own with
        // a full-size stack: it may parse definitions, deeper than the small stack of a
        // same-host link thread that answers a request inline allows.
        let description = std::thread::Builder::new()
            .name("roslite-describe".into())
            .stack_size(DESCRIBE_STACK)
            .spawn(move || describe(name))
            .ok()?
            .join()
            .ok()??;
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = entries.iter_mut().find(|e| e.hash == *hash) {
            entry.description = Described::Now(description);
        }
        Some(description)
    }

    fn unregister(&self, hash: &TypeHashValue) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = entries.iter().position(|e| e.hash == *hash) {
            entries[at].registrations -= 1;
            if entries[at].registrations == 0 {
                entries.swap_remove(at);
            }
        }
    }
}

/// One endpoint's use of a type in its node's [`TypeCache`]; ends when dropped. Boxed: every
/// endpoint holds one, and it is not touched between creation and drop.
pub(crate) struct TypeRegistration {
    /// Ends the registration when dropped.
    _registered: Box<Registered>,
}

struct Registered {
    cache: Arc<TypeCache>,
    hash: TypeHashValue,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.cache.unregister(&self.hash);
    }
}

/// The value of a type hash string, read as rosidl's `rosidl_parse_type_hash_string` reads it
/// for rcl: `RIHS`, a two-digit hex version that must be 01, one more character, then 64 hex
/// digits of either case, nothing after. Text after a NUL is not seen (rcl reads a C string).
pub(crate) fn parse_type_hash(text: &str) -> Option<TypeHashValue> {
    let text = text.split('\0').next().unwrap_or_default().as_bytes();
    const PREFIX: &[u8] = b"RIHS";
    // `RIHS01_`: the version digits, then a separator rosidl skips without checking.
    const VALUE_AT: usize = PREFIX.len() + 3;
    if !text.starts_with(PREFIX) || text.len() < VALUE_AT {
        return None;
    }
    let version = (hex_digit(text[4])? << 4) | hex_digit(text[5])?;
    if version != 1 || text.len() != VALUE_AT + 64 {
        return None;
    }
    let mut value = [0u8; 32];
    for (byte, pair) in value.iter_mut().zip(text[VALUE_AT..].chunks_exact(2)) {
        *byte = (hex_digit(pair[0])? << 4) | hex_digit(pair[1])?;
    }
    Some(value)
}

fn hex_digit(c: u8) -> Option<u8> {
    char::from(c)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HASH: &str = "RIHS01_abe9e4bb6b41b40e6789712c00ec8871923e089af3f667a79992a428cff2da0a";

    /// What rcl (Kilted) answers "Failed to parse type hash" for, checked against an rclpy node.
    #[test]
    fn type_hashes_are_read_as_rcl_reads_them() {
        let value = parse_type_hash(HASH).unwrap();
        assert_eq!(value[0], 0xab);
        assert_eq!(value[31], 0x0a);
        assert_eq!(parse_type_hash(&HASH.to_uppercase()), Some(value));
        assert_eq!(parse_type_hash(&HASH.replacen('_', "x", 1)), Some(value));
        assert_eq!(parse_type_hash(&format!("{HASH}\0junk")), Some(value));
        for malformed in [
            String::new(),
            "RIHS01_abc".to_owned(),
            HASH.replace("RIHS01", "RIHS02"),
            HASH.replace("RIHS01", "RIHS00"),
            HASH.replace("RIHS01", "RIHSff"),
            HASH.replace("RIHS01", "rihs01"),
            format!("x{HASH}"),
            format!("{HASH}00"),
            HASH[..HASH.len() - 1].to_owned(),
            format!("{}g", &HASH[..HASH.len() - 1]),
        ] {
            assert_eq!(parse_type_hash(&malformed), None, "{malformed:?}");
        }
    }

    #[test]
    fn a_type_stays_while_some_endpoint_uses_it() {
        use roslite_msgs::std_msgs::msg::String as StringMsg;
        use roslite_msgs::Message;

        let cache = Arc::new(TypeCache::default());
        let hash = parse_type_hash(StringMsg::TYPE_HASH).unwrap();
        let first = cache.register(StringMsg::TYPE_HASH, StringMsg::TYPE_DESCRIPTION);
        let second = cache.register(StringMsg::TYPE_HASH, StringMsg::TYPE_DESCRIPTION);
        assert!(first.is_some() && second.is_some());
        assert_eq!(cache.find(&hash), StringMsg::TYPE_DESCRIPTION);
        drop(first);
        assert_eq!(cache.find(&hash), StringMsg::TYPE_DESCRIPTION);
        drop(second);
        assert_eq!(cache.find(&hash), None);
        // Nothing to serve, nothing registered.
        assert!(cache.register(StringMsg::TYPE_HASH, None).is_none());
        assert!(cache
            .register("not a hash", StringMsg::TYPE_DESCRIPTION)
            .is_none());
    }
}
