//! The key hash a writer of a keyed topic sends with each sample.
//!
//! DDSI-RTPS 2.5 §9.6.3.8: `PID_KEY_HASH` in a DATA's inline QoS carries 16 bytes naming the
//! sample's instance, so a reader need not deserialize the payload to find it. DDS-XTypes 1.3
//! §7.6.8 derives them from the key members serialized on their own
//! ([`roslite_cdr::key`]): the serialization itself, padded with zeros, when the type's
//! largest key serialization fits 16 bytes, else its MD5 digest.
//!
//! What rclpy and rclcpp on Fast DDS send (rmw_fastrtps, Kilted, learnt from captures of
//! `test_msgs/msg/Keyed*` traffic) differs from the text of XTypes in two ways, and readers
//! compare key hashes by value, so this follows Fast DDS:
//!
//! - the key is serialized in the writer's byte order (little-endian on every ROS 2
//!   platform), not big-endian;
//! - "largest key serialization" is the bound of [`KeyStruct::max_serialized_size`], which
//!   for a key that has none (strings, unbounded sequences) starts at a few bytes and grows to
//!   the largest key the writer has serialized so far. So `KeyedString { key: "ab" }` is sent
//!   in plain until a writer has sent a key longer than 16 bytes, hashed after. A writer keeps
//!   its own bound here, grown by the samples it is given; Fast DDS keeps one per type and
//!   participant, grown by every sample written, which differs for a process with several
//!   writers of one keyed type, or whose writer had no remote reader for a while (the runtime
//!   does not serialize samples for an RTPS writer nobody reads).

use md5::{Digest, Md5};
use roslite_cdr::key::KeyStruct;
use roslite_cdr::{DecodeError, Endianness};

use crate::parameter_list::{pid, ParameterList, ParameterListWriter};

/// The largest key serialization sent as it is (DDS-XTypes 1.3 §7.6.8).
const PLAIN_KEY_MAX: usize = 16;

/// Computes the key hashes of one writer's samples.
#[derive(Clone, Debug)]
pub struct KeyHasher {
    layout: &'static KeyStruct,
    /// The bound that decides between a plain and a hashed key; grows for unbounded keys.
    max_size: usize,
    unbounded: bool,
}

impl KeyHasher {
    pub fn new(layout: &'static KeyStruct) -> Self {
        let size = layout.max_serialized_size();
        Self {
            layout,
            max_size: size.bytes,
            unbounded: size.unbounded,
        }
    }

    /// The key hash of `payload`, a serialized sample of the writer's type.
    ///
    /// # Errors
    /// [`DecodeError`] when the payload is not a sample of that type.
    pub fn key_hash(&mut self, payload: &[u8]) -> Result<[u8; 16], DecodeError> {
        let key = self.layout.key_of(payload)?;
        Ok(self.hash_of_key(&key))
    }

    /// The key of `payload` (its key members serialized on their own) and its key hash.
    ///
    /// # Errors
    /// As [`Self::key_hash`].
    pub fn key_and_hash(&mut self, payload: &[u8]) -> Result<(Vec<u8>, [u8; 16]), DecodeError> {
        let key = self.layout.key_of(payload)?;
        let hash = self.hash_of_key(&key);
        Ok((key, hash))
    }

    fn hash_of_key(&mut self, key: &[u8]) -> [u8; 16] {
        if self.unbounded {
            self.max_size = self.max_size.max(key.len());
        }
        let mut hash = [0u8; 16];
        if self.max_size > PLAIN_KEY_MAX {
            hash.copy_from_slice(&Md5::digest(key));
        } else if let Some(start) = hash.get_mut(..key.len()) {
            // Always: `key.len() <= max_size <= 16`.
            start.copy_from_slice(key);
        }
        hash
    }
}

/// `inline_qos` (a little-endian parameter list with sentinel, or none) with `PID_KEY_HASH`
/// first, as Fast DDS orders them.
pub(crate) fn with_key_hash(hash: [u8; 16], inline_qos: Option<&[u8]>) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut writer = ParameterListWriter::new(&mut buf, Endianness::Little);
    // A 16-byte value always fits a parameter.
    let _ = writer.raw(pid::KEY_HASH, &hash);
    if let Some(list) = inline_qos.and_then(|q| ParameterList::parse(q, Endianness::Little).ok()) {
        for parameter in list.iter().filter(|p| p.id != pid::KEY_HASH) {
            let _ = writer.raw(parameter.id, parameter.value);
        }
    }
    writer.finish();
    buf
}

#[cfg(test)]
mod tests {
    use roslite_cdr::key::{KeyCollection, KeyElement, KeyMember};

    use super::*;

    use crate::endpoint::tests::KEYED as KEYED_LONG;
    static KEYED_STRING: KeyStruct = KeyStruct {
        members: &[
            KeyMember {
                in_key: true,
                element: KeyElement::String { bound: None },
                collection: KeyCollection::Single,
            },
            KeyMember {
                in_key: false,
                element: KeyElement::String { bound: None },
                collection: KeyCollection::Single,
            },
        ],
    };

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// The PID_KEY_HASH values rclpy (Fast DDS 3.2, Kilted) sent for these samples.
    #[test]
    fn key_hashes_as_rclpy_sends_them() {
        let mut long = KeyHasher::new(&KEYED_LONG);
        assert_eq!(
            long.key_hash(&hex("000100000403020107000000"))
                .unwrap()
                .to_vec(),
            hex("04030201000000000000000000000000")
        );
        assert_eq!(
            long.key_hash(&hex("00010000ffffffff07000000"))
                .unwrap()
                .to_vec(),
            hex("ffffffff000000000000000000000000")
        );

        // A string key is plain while the longest key so far fits 16 bytes ...
        let mut string = KeyHasher::new(&KEYED_STRING);
        let ab = hex("00010000030000006162000002000000760000");
        assert_eq!(
            string.key_hash(&ab).unwrap().to_vec(),
            hex("03000000616200000000000000000000")
        );
        // ... and hashed with MD5 from the first longer one on: the values rclpy sent after a
        // 20-byte key.
        let long_key =
            hex("00010000140000003031323334353637383961626364656658595a000200000076000000");
        assert_eq!(
            string.key_hash(&long_key).unwrap().to_vec(),
            hex("bd6375765c890a4b0d780abbef67b565")
        );
        assert_eq!(
            string.key_hash(&ab).unwrap().to_vec(),
            hex("c5d2b44c26f145c8c1609ed37e7067ac")
        );
    }

    #[test]
    fn the_key_hash_goes_first_in_the_inline_qos() {
        let mut other = Vec::new();
        let mut w = ParameterListWriter::new(&mut other, Endianness::Little);
        w.raw(pid::STATUS_INFO, &[0, 0, 0, 1]).unwrap();
        w.finish();
        let merged = with_key_hash([7; 16], Some(&other));
        let list = ParameterList::parse(&merged, Endianness::Little).unwrap();
        let ids: Vec<_> = list.iter().map(|p| p.id).collect();
        assert_eq!(ids, [pid::KEY_HASH, pid::STATUS_INFO]);
        assert_eq!(list.key_hash().unwrap(), Some([7; 16]));
        let alone = with_key_hash([1; 16], None);
        assert_eq!(
            ParameterList::parse(&alone, Endianness::Little)
                .unwrap()
                .iter()
                .count(),
            1
        );
    }
}
