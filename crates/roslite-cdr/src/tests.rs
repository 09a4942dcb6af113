use super::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

// docs/ros2-interop.md §7: vectors produced by rclpy `serialize_message` (Kilted, Fast CDR).
#[test]
fn golden_int16() {
    let mut w = CdrWriter::new(Endianness::Little);
    w.write_i16(1000);
    assert_eq!(w.finish(), hex("00010000 e803"));
    // Fast DDS pads the stream to 4 bytes; the reader ignores trailing padding.
    let padded = hex("00010000 e8030000");
    let mut r = CdrReader::new(&padded).unwrap();
    assert_eq!(r.read_i16().unwrap(), 1000);
}

#[test]
fn golden_empty_struct_ignores_garbage_padding() {
    let bytes = hex("00010000 00 550000");
    let mut r = CdrReader::new(&bytes).unwrap();
    r.read_empty_struct().unwrap();
    let mut w = CdrWriter::new(Endianness::Little);
    w.write_empty_struct();
    assert_eq!(w.finish(), hex("00010000 00"));
}

#[test]
fn golden_setbool_response_with_garbage_padding() {
    let bytes = hex("00010000 01 550000 0e000000 4d6f746f727320617265206f6e00");
    let mut r = CdrReader::new(&bytes).unwrap();
    assert!(r.read_bool().unwrap());
    assert_eq!(r.read_string().unwrap(), "Motors are on");
    assert_eq!(r.remaining(), 0);
    let mut w = CdrWriter::new(Endianness::Little);
    w.write_bool(true);
    w.write_string("Motors are on").unwrap();
    assert_eq!(
        w.finish(),
        hex("00010000 01 000000 0e000000 4d6f746f727320617265206f6e00")
    );
}

#[test]
fn golden_twist() {
    let expected = hex(&format!(
        "00010000 7b14ae47e17ab43f {} 333333333333d3bf",
        "00".repeat(32)
    ));
    let mut w = CdrWriter::new(Endianness::Little);
    for v in [0.08, 0.0, 0.0, 0.0, 0.0, -0.3] {
        w.write_f64(v);
    }
    assert_eq!(w.finish(), expected);
}

#[test]
fn golden_twist_stamped_alignment_from_after_header() {
    let bytes = hex(&format!(
        "00010000 01000000 02000000 05000000 6261736500 04f0140b0b02f0 7b14ae47e17ab43f {} \
         9a9999999999e93f",
        "00".repeat(32)
    ));
    let mut r = CdrReader::new(&bytes).unwrap();
    assert_eq!(r.read_i32().unwrap(), 1);
    assert_eq!(r.read_u32().unwrap(), 2);
    assert_eq!(r.read_string().unwrap(), "base");
    // Seven garbage padding bytes precede the first float64 at offset 24 from the origin.
    assert_eq!(r.read_f64().unwrap(), 0.08);
    for _ in 0..4 {
        assert_eq!(r.read_f64().unwrap(), 0.0);
    }
    assert_eq!(r.read_f64().unwrap(), 0.8);
    assert_eq!(r.remaining(), 0);
}

#[test]
fn golden_string_with_and_without_trailing_padding() {
    for bytes in [
        hex("00010000 09000000 68656c6c6f20313500 000000"),
        hex("00010000 09000000 68656c6c6f20313500"),
    ] {
        let mut r = CdrReader::new(&bytes).unwrap();
        assert_eq!(r.read_string().unwrap(), "hello 15");
    }
}

#[test]
fn big_endian_round_trip() {
    let mut w = CdrWriter::new(Endianness::Big);
    w.write_u8(7);
    w.write_u32(0x0102_0304);
    w.write_f64(1.5);
    let bytes = w.finish();
    assert_eq!(&bytes[..8], &hex("00000000 07 000000")[..]);
    let mut r = CdrReader::new(&bytes).unwrap();
    assert_eq!(r.read_u8().unwrap(), 7);
    assert_eq!(r.read_u32().unwrap(), 0x0102_0304);
    assert_eq!(r.read_f64().unwrap(), 1.5);
}

#[test]
fn huge_sequence_length_is_rejected_before_allocation() {
    let bytes = hex("00010000 ffffffff 01020304");
    let mut r = CdrReader::new(&bytes).unwrap();
    assert!(matches!(r.read_len(1), Err(DecodeError::Truncated { .. })));
    assert!(matches!(
        from_bytes::<Vec<String>>(&bytes),
        Err(DecodeError::Truncated { .. })
    ));
    assert!(matches!(
        from_bytes::<Seq<u64>>(&bytes),
        Err(DecodeError::Truncated { .. })
    ));
}

#[test]
fn malformed_strings() {
    for bytes in [
        hex("00010000 00000000"),
        hex("00010000 02000000 4142"),
        hex("00010000 03000000 ff fe 00"),
    ] {
        assert!(from_bytes::<String>(&bytes).is_err(), "{bytes:02x?}");
    }
}

/// Held in a vector of its own or as shared bytes taken as they are, alike.
fn both_stores(bytes: Vec<u8>) -> [SharedBuf; 2] {
    [
        SharedBuf::from_vec(bytes.clone()),
        SharedBuf::from_arc(std::sync::Arc::from(bytes)),
    ]
}

#[test]
fn shared_decode_is_a_view_into_the_buffer() {
    let data: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let payload = to_vec(&Seq::from(data.clone()), Endianness::NATIVE).unwrap();
    for shared in both_stores(payload) {
        let seq: Seq<u8> = from_shared(&shared).unwrap();
        assert!(seq.is_view());
        assert_eq!(seq.as_ptr(), shared.bytes()[8..].as_ptr());
        assert_eq!(seq, data);
        let copied: Seq<u8> = from_bytes(shared.bytes()).unwrap();
        assert!(!copied.is_view());
    }
}

#[test]
fn shared_bytes_taken_as_they_are_are_not_copied() {
    let bytes: std::sync::Arc<[u8]> = std::sync::Arc::from(&b"\x00\x01\x00\x00abc"[..]);
    let shared = SharedBuf::from_arc(bytes.clone());
    assert_eq!(shared.bytes().as_ptr(), bytes.as_ptr());
    assert_eq!(std::sync::Arc::strong_count(&bytes), 2, "held, not copied");
    drop(shared);
    assert_eq!(std::sync::Arc::strong_count(&bytes), 1);
}

#[test]
fn a_buffer_sliced_whole_or_by_value_shows_the_same_window() {
    for shared in both_stores((0..20u8).collect()) {
        a_window_of(shared);
    }
}

fn a_window_of(shared: SharedBuf) {
    let inner = shared.slice(4..12).unwrap();
    assert_eq!(inner.bytes(), &(4..12u8).collect::<Vec<_>>()[..]);
    let by_value = shared.clone().into_slice(4..12).unwrap();
    assert_eq!(by_value.bytes(), inner.bytes());
    assert_eq!(
        by_value.bytes().as_ptr(),
        inner.bytes().as_ptr(),
        "same backing, no copy"
    );
    // Windows of windows count from their own start.
    assert_eq!(inner.into_slice(2..3).unwrap().bytes(), &[6]);
    assert!(shared.clone().into_slice(15..21).is_none());
    assert!(shared.slice(15..21).is_none());
}

#[test]
fn random_round_trips() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x5eed);
    for _ in 0..500 {
        let endianness = if rng.gen() {
            Endianness::Big
        } else {
            Endianness::Little
        };
        let a: u8 = rng.gen();
        let b: i64 = rng.gen();
        let s: String = (0..rng.gen_range(0..40))
            .map(|_| rng.gen_range('a'..='z'))
            .collect();
        let f: Vec<f32> = (0..rng.gen_range(0..50)).map(|_| rng.gen()).collect();
        let u: Vec<u16> = (0..rng.gen_range(0..50)).map(|_| rng.gen()).collect();
        let mut w = CdrWriter::new(endianness);
        w.write_u8(a);
        w.write_i64(b);
        w.write_string(&s).unwrap();
        Seq::from(f.clone()).encode(&mut w).unwrap();
        w.write_u8(a);
        Seq::from(u.clone()).encode(&mut w).unwrap();
        let bytes = w.finish();
        let mut r = CdrReader::new(&bytes).unwrap();
        assert_eq!(r.read_u8().unwrap(), a);
        assert_eq!(r.read_i64().unwrap(), b);
        assert_eq!(r.read_string().unwrap(), s);
        assert_eq!(Seq::<f32>::decode(&mut r).unwrap(), f);
        assert_eq!(r.read_u8().unwrap(), a);
        assert_eq!(Seq::<u16>::decode(&mut r).unwrap(), u);
        assert_eq!(r.remaining(), 0);
        // Every truncation of a valid stream fails cleanly.
        for cut in 0..bytes.len() {
            let mut r = match CdrReader::new(&bytes[..cut]) {
                Ok(r) => r,
                Err(_) => continue,
            };
            let _ = (|| -> Result<(), DecodeError> {
                r.read_u8()?;
                r.read_i64()?;
                r.read_string()?;
                Seq::<f32>::decode(&mut r)?;
                r.read_u8()?;
                Seq::<u16>::decode(&mut r)?;
                Ok(())
            })();
        }
    }
}

#[test]
fn empty_eight_byte_sequence_has_no_alignment_padding() {
    // uint8 flag, float64[] empty, uint8 flag: Fast CDR writes 01 | 00000000 len (aligned to 4) |
    // nothing for the body | 02, i.e. no padding to 8 for the empty body.
    let mut w = CdrWriter::new(Endianness::Little);
    w.write_u8(1);
    Seq::<f64>::new().encode(&mut w).unwrap();
    w.write_u8(2);
    let bytes = w.finish();
    assert_eq!(bytes, hex("00010000 01000000 00000000 02"));
    let mut r = CdrReader::new(&bytes).unwrap();
    assert_eq!(r.read_u8().unwrap(), 1);
    assert!(Seq::<f64>::decode(&mut r).unwrap().is_empty());
    assert_eq!(r.read_u8().unwrap(), 2);
}

/// A mixed value: strings, nested sequences, 1-, 2-, 4- and 8-byte primitives in both orders.
struct Mixed {
    tag: u8,
    name: String,
    names: Vec<String>,
    floats: Seq<f32>,
    shorts: Seq<u16>,
    wide: Seq<f64>,
    bytes: Seq<u8>,
    last: i64,
}

impl CdrEncode for Mixed {
    fn encode(&self, w: &mut CdrWriter<'_>) -> Result<(), EncodeError> {
        w.write_u8(self.tag);
        w.write_string(&self.name)?;
        self.names.encode(w)?;
        self.floats.encode(w)?;
        w.write_bool(true);
        self.shorts.encode(w)?;
        self.wide.encode(w)?;
        self.bytes.encode(w)?;
        w.write_empty_struct();
        w.write_i64(self.last);
        Ok(())
    }
}

#[test]
fn counting_and_slice_writers_agree_with_the_vec_writer() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0xc0de);
    for _ in 0..300 {
        let endianness = if rng.gen() {
            Endianness::Big
        } else {
            Endianness::Little
        };
        let word = |rng: &mut rand::rngs::SmallRng| -> String {
            (0..rng.gen_range(0..20))
                .map(|_| rng.gen_range('a'..='z'))
                .collect()
        };
        let value = Mixed {
            tag: rng.gen(),
            name: word(&mut rng),
            names: (0..rng.gen_range(0..4)).map(|_| word(&mut rng)).collect(),
            floats: (0..rng.gen_range(0..30)).map(|_| rng.gen()).collect(),
            shorts: (0..rng.gen_range(0..30)).map(|_| rng.gen()).collect(),
            wide: (0..rng.gen_range(0..30)).map(|_| rng.gen()).collect(),
            bytes: (0..rng.gen_range(0..30)).map(|_| rng.gen()).collect(),
            last: rng.gen(),
        };
        let expected = to_vec(&value, endianness).unwrap();
        assert_eq!(encoded_len(&value, endianness).unwrap(), expected.len());
        // A reused buffer full of garbage: padding must still come out as zeros.
        let mut buf = vec![0xa5; expected.len() + rng.gen_range(0..16)];
        let used = to_slice(&value, endianness, &mut buf).unwrap();
        assert_eq!(&buf[..used], &expected[..]);
        // Into uninitialized memory: the same length (the bytes are compared where they are
        // read, in roslite's publisher, since reading them takes `unsafe`).
        let mut uninit = vec![std::mem::MaybeUninit::new(0x5au8); buf.len()];
        assert_eq!(
            to_uninit_slice(&value, endianness, &mut uninit),
            Ok(expected.len())
        );
        if !expected.is_empty() {
            let short = rng.gen_range(0..expected.len());
            let mut buf = vec![0; short];
            assert_eq!(
                to_slice(&value, endianness, &mut buf),
                Err(EncodeError::BufferTooSmall {
                    needed: expected.len(),
                    capacity: short
                })
            );
        }
    }
}

#[test]
fn counting_a_large_swapped_sequence() {
    // Opposite byte order: counted from the length alone, not element by element.
    let big: Seq<u64> = vec![7u64; 1 << 20].into();
    let len = encoded_len(&big, Endianness::Big).unwrap();
    // Header, length, 4 bytes of padding to align the u64s to 8, the elements.
    assert_eq!(len, 4 + 4 + 4 + (8 << 20));
}

/// A message shaped like the ones reserved sequences are for: small fields around bulk arrays
/// of different element sizes, so alignment before each hole is exercised.
#[derive(Clone)]
struct Bulk {
    tag: u8,
    wide: Seq<u64>,
    name: String,
    bytes: Seq<u8>,
    none: Seq<f32>,
    floats: Seq<f32>,
    tail: u32,
}

impl CdrEncode for Bulk {
    fn encode(&self, w: &mut CdrWriter) -> Result<(), EncodeError> {
        w.write_u8(self.tag);
        w.write_prim_seq(&self.wide)?;
        w.write_string(&self.name)?;
        w.write_prim_seq(&self.bytes)?;
        w.write_prim_seq(&self.none)?;
        w.write_bounded_prim_seq(&self.floats, 8)?;
        w.write_u32(self.tail);
        Ok(())
    }
}

fn reserved_bulk() -> Bulk {
    Bulk {
        tag: 7,
        wide: Seq::reserved(3),
        name: "cloud".into(),
        bytes: Seq::reserved(5),
        none: Seq::reserved(0),
        floats: Seq::reserved(2),
        tail: 0xdead_beef,
    }
}

#[test]
fn reserved_sequences_count_as_their_elements_and_leave_holes_where_recorded() {
    let message = reserved_bulk();
    let len = encoded_len(&message, Endianness::NATIVE).unwrap();
    let mut buf = vec![0xaa; len + 16];
    let (used, holes) = to_slice_leaving_holes(&message, Endianness::NATIVE, &mut buf).unwrap();
    assert_eq!(used, len, "counting and writing into a slice agree");
    let kinds: Vec<_> = holes.iter().map(|h| (h.element_name, h.elements)).collect();
    assert_eq!(
        kinds,
        [("u64", 3), ("u8", 5), ("f32", 0), ("f32", 2)],
        "one range per reserved sequence, in encode order"
    );
    for hole in &holes {
        let size = hole.bytes.len() / hole.elements.max(1);
        assert_eq!(
            (hole.bytes.start - Encapsulation::HEADER_LEN) % size.max(1),
            0,
            "{hole:?} aligned from the CDR origin"
        );
        assert!(
            buf[hole.bytes.clone()].iter().all(|&b| b == 0xaa),
            "{hole:?} left untouched"
        );
    }
    assert_eq!(
        holes[2].bytes.len(),
        0,
        "an empty reservation takes no bytes"
    );
    assert!(
        buf[used..].iter().all(|&b| b == 0xaa),
        "nothing written past the value"
    );

    // Filled in place, the buffer is exactly the encoding of the same values owned.
    let wide = [1u64, u64::MAX, 3];
    let bytes = [9u8, 8, 7, 6, 5];
    let floats = [0.5f32, -2.0];
    buf[holes[0].bytes.clone()].copy_from_slice(bytemuck::cast_slice(&wide));
    buf[holes[1].bytes.clone()].copy_from_slice(&bytes);
    buf[holes[3].bytes.clone()].copy_from_slice(bytemuck::cast_slice(&floats));
    let owned = Bulk {
        wide: Seq::from(wide.to_vec()),
        bytes: Seq::from(bytes.to_vec()),
        none: Seq::new(),
        floats: Seq::from(floats.to_vec()),
        ..message
    };
    assert_eq!(
        &buf[..used],
        to_vec(&owned, Endianness::NATIVE).unwrap(),
        "holes at the recorded ranges"
    );
}

#[test]
fn reserved_sequences_are_refused_where_contents_are_needed() {
    let message = reserved_bulk();
    assert_eq!(
        to_vec(&message, Endianness::Little).map(drop),
        Err(EncodeError::ReservedSequence { len: 3 })
    );
    let mut buf = vec![0; 256];
    assert_eq!(
        to_slice(&message, Endianness::Little, &mut buf),
        Err(EncodeError::ReservedSequence { len: 3 })
    );
    let mut uninit = vec![std::mem::MaybeUninit::new(0u8); 256];
    assert_eq!(
        to_uninit_slice(&message, Endianness::Little, &mut uninit),
        Err(EncodeError::ReservedSequence { len: 3 })
    );
    let over_bound = Bulk {
        floats: Seq::reserved(9),
        ..message.clone()
    };
    assert_eq!(
        to_slice_leaving_holes(&over_bound, Endianness::Little, &mut buf).map(drop),
        Err(EncodeError::BoundExceeded { len: 9, bound: 8 })
    );
    let len = encoded_len(&message, Endianness::Little).unwrap();
    let mut short = vec![0; len - 1];
    assert_eq!(
        to_slice_leaving_holes(&message, Endianness::Little, &mut short).map(drop),
        Err(EncodeError::BufferTooSmall {
            needed: len,
            capacity: len - 1
        })
    );
    let huge = Bulk {
        wide: Seq::reserved(usize::MAX),
        ..message
    };
    assert!(matches!(
        encoded_len(&huge, Endianness::Little),
        Err(EncodeError::TooLong(_))
    ));
}

#[test]
fn a_reserved_sequence_reads_as_empty_and_keeps_its_length() {
    let mut seq = Seq::<u32>::reserved(4);
    assert!(seq.is_reserved() && !seq.is_view());
    assert_eq!(seq.reserved_len(), Some(4));
    assert_eq!((seq.len(), seq.as_slice()), (0, &[][..]));
    assert_eq!(seq.iter().count(), 0);
    assert_eq!(format!("{seq:?}"), "Seq::reserved(4)");
    assert_eq!(seq.clone(), Seq::reserved(4));
    assert_ne!(seq, Seq::reserved(5));
    assert_ne!(seq, Seq::new(), "a reservation is not an empty sequence");
    assert_ne!(seq, Vec::<u32>::new());
    assert_eq!(seq.clone().into_vec(), Vec::<u32>::new());
    seq.to_mut().push(1);
    assert_eq!((seq.reserved_len(), seq.as_slice()), (None, &[1][..]));
    assert_eq!(Seq::<u8>::from(vec![1]).reserved_len(), None);
}

/// A `string<=N` is sent counted in bytes (rclcpp's reading) and received counted in
/// characters (rclpy's), so that what any ROS 2 client library sends is read and what roslite
/// sends is read by all.
#[test]
fn string_bounds_are_strict_on_sending_and_lenient_on_receipt() {
    let umlauts = "ö".repeat(22); // what rclpy sends in a string<=22: 44 bytes
    let mut w = CdrWriter::new(Endianness::Little);
    assert_eq!(
        w.write_bounded_string(&umlauts, 22),
        Err(EncodeError::StringBoundExceeded {
            bytes: 44,
            chars: 22,
            bound: 22
        })
    );
    w.write_string(&umlauts).unwrap();
    w.write_string(&"ö".repeat(23)).unwrap();
    w.write_string("😀😀").unwrap(); // 8 bytes, 2 characters
    let bytes = w.finish();
    let mut r = CdrReader::new(&bytes).unwrap();
    assert_eq!(r.read_bounded_string(22), Ok(umlauts.as_str()));
    assert_eq!(
        r.read_bounded_string(22),
        Err(DecodeError::StringBoundExceeded {
            chars: 23,
            bound: 22
        })
    );
    assert_eq!(r.read_bounded_string(2), Ok("😀😀"));
    let error = DecodeError::StringBoundExceeded {
        chars: 23,
        bound: 22,
    }
    .to_string();
    assert!(
        error.contains("23 characters") && error.contains("rclpy"),
        "{error}"
    );
}

/// A `wstring<=N` is sent counted in UTF-16 units (rclcpp) and received counted in characters
/// (rclpy), with at most 2N units read: N characters outside the Basic Multilingual Plane.
#[test]
fn wstring_bounds_are_strict_on_sending_and_lenient_on_receipt() {
    let faces = "😀".repeat(3); // 6 UTF-16 units
    let mut w = CdrWriter::new(Endianness::Big);
    assert_eq!(
        w.write_bounded_wstring(&faces, 3),
        Err(EncodeError::WStringBoundExceeded {
            units: 6,
            chars: 3,
            bound: 3
        })
    );
    w.write_bounded_wstring("ハロー", 3).unwrap();
    w.write_wstring(&faces).unwrap();
    w.write_wstring("😀😀a").unwrap(); // 5 units, 3 characters
    w.write_wstring("abcdefg").unwrap(); // 7 units: over 2 * 3, refused unread
    let bytes = w.finish();
    let mut r = CdrReader::new(&bytes).unwrap();
    assert_eq!(r.read_bounded_wstring(3).as_deref(), Ok("ハロー"));
    assert_eq!(r.read_bounded_wstring(3), Ok(faces));
    assert_eq!(
        r.read_bounded_wstring(2),
        Err(DecodeError::StringBoundExceeded { chars: 3, bound: 2 })
    );
    assert_eq!(
        r.read_bounded_wstring(3),
        Err(DecodeError::StringBoundExceeded { chars: 7, bound: 3 })
    );
    assert_eq!(r.remaining(), 0);
}
