use super::*;

fn build(e: Endianness, f: impl FnOnce(&mut ParameterListWriter<'_>)) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = ParameterListWriter::new(&mut buf, e);
    f(&mut w);
    w.finish();
    buf
}

#[test]
fn iterates_in_both_byte_orders() {
    for e in [Endianness::Big, Endianness::Little] {
        let bytes = build(e, |w| {
            w.param(pid::TOPIC_NAME, |v| v.string("rt/chatter"))
                .unwrap();
            w.raw(pid::PAD, &[0; 4]).unwrap();
            w.param(pid::DOMAIN_ID, |v| {
                v.u32(7);
                Ok(())
            })
            .unwrap();
        });
        let (pl, used) = ParameterList::parse_prefix(&bytes, e).unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(pl.buffer_len(), bytes.len());
        let ids: Vec<_> = pl.iter().map(|p| p.id).collect();
        assert_eq!(
            ids,
            vec![pid::TOPIC_NAME, pid::DOMAIN_ID],
            "PID_PAD is skipped"
        );
        // "rt/chatter" = 4-byte length + 11 bytes, padded to 16.
        assert_eq!(pl.get(pid::TOPIC_NAME).map(<[u8]>::len), Some(16));
        let mut round = Vec::new();
        pl.emit(&mut round);
        assert_eq!(round, bytes);
    }
}

#[test]
fn rejects_missing_sentinel_bad_alignment_and_overlong_length() {
    let e = Endianness::Little;
    let good = build(e, |w| w.raw(pid::DOMAIN_ID, &[0; 4]).unwrap());
    let no_sentinel = &good[..good.len() - 4];
    assert_eq!(
        ParameterList::parse(no_sentinel, e),
        Err(ParseError::Malformed)
    );
    assert_eq!(ParameterList::parse(&[], e), Err(ParseError::Malformed));

    let mut unaligned = good.clone();
    unaligned[2] = 3; // DOMAIN_ID length 3
    assert_eq!(
        ParameterList::parse(&unaligned, e),
        Err(ParseError::Malformed)
    );

    let mut overlong = good.clone();
    overlong[2] = 0xfc;
    overlong[3] = 0xff;
    assert_eq!(
        ParameterList::parse(&overlong, e),
        Err(ParseError::Malformed)
    );

    // A partial parameter header.
    assert_eq!(
        ParameterList::parse(&[0x0f, 0x00], e),
        Err(ParseError::Truncated)
    );
}

#[test]
fn sentinel_length_is_ignored_and_trailing_bytes_kept_out() {
    let mut bytes = vec![0x01, 0x00, 0x10, 0x00];
    bytes.extend_from_slice(&[0xee; 8]);
    let (pl, used) = ParameterList::parse_prefix(&bytes, Endianness::Little).unwrap();
    assert!(pl.is_empty());
    assert_eq!(used, 4);
}

#[test]
fn payload_encapsulation() {
    let mut payload = vec![0x00, 0x03, 0x00, 0x00];
    payload.extend(build(Endianness::Little, |w| {
        w.raw(pid::DOMAIN_ID, &[1, 0, 0, 0]).unwrap()
    }));
    let pl = ParameterList::from_payload(&payload).unwrap();
    assert_eq!(pl.endianness(), Endianness::Little);
    payload[1] = 0x01; // CDR_LE: not a parameter list
    assert_eq!(
        ParameterList::from_payload(&payload),
        Err(ParseError::Unsupported)
    );
    assert_eq!(
        ParameterList::from_payload(&[0, 3]),
        Err(ParseError::Truncated)
    );
}

#[test]
fn writer_rejects_unrepresentable_values_and_rolls_back() {
    let mut buf = Vec::new();
    let mut w = ParameterListWriter::new(&mut buf, Endianness::Big);
    let big = vec![0u8; ParameterList::MAX_VALUE_LEN + 1];
    assert!(matches!(
        w.raw(pid::USER_DATA, &big),
        Err(EmitError::TooLong { .. })
    ));
    assert_eq!(
        w.param(pid::TOPIC_NAME, |v| v.string("a\0b")),
        Err(EmitError::InteriorNul)
    );
    w.raw(pid::USER_DATA, &big[..ParameterList::MAX_VALUE_LEN])
        .unwrap();
    w.finish();
    let pl = ParameterList::parse(&buf, Endianness::Big).unwrap();
    assert_eq!(pl.iter().count(), 1);
    assert_eq!(
        pl.get(pid::USER_DATA).map(<[u8]>::len),
        Some(ParameterList::MAX_VALUE_LEN)
    );
}

#[test]
fn inline_qos_accessors() {
    let guid = Guid::from_bytes([7; 16]);
    let identity = |w: &mut ParameterListWriter<'_>, id| {
        w.param(id, |v| {
            v.guid(guid);
            v.i32(-1);
            v.u32(0);
            Ok(())
        })
        .unwrap();
    };
    let e = Endianness::Little;
    let legacy_only = build(e, |w| identity(w, pid::FASTDDS_RELATED_SAMPLE_IDENTITY));
    let pl = ParameterList::parse(&legacy_only, e).unwrap();
    let expected = SampleIdentity {
        writer_guid: guid,
        sequence_number: SequenceNumber::UNKNOWN,
    };
    assert_eq!(
        pl.related_sample_identity(VendorId::EPROSIMA),
        Ok(Some(expected))
    );
    // 0x800f from anyone but eProsima means something else (or nothing).
    assert_eq!(
        pl.related_sample_identity(VendorId::ECLIPSE_CYCLONE),
        Ok(None)
    );
    let standard = build(e, |w| identity(w, pid::RELATED_SAMPLE_IDENTITY));
    let pl = ParameterList::parse(&standard, e).unwrap();
    assert_eq!(
        pl.related_sample_identity(VendorId::ECLIPSE_CYCLONE),
        Ok(Some(expected))
    );

    let dispose = build(e, |w| {
        w.raw(pid::KEY_HASH, &[9; 16]).unwrap();
        w.raw(pid::STATUS_INFO, &[0, 0, 0, 3]).unwrap();
    });
    let pl = ParameterList::parse(&dispose, e).unwrap();
    assert_eq!(pl.key_hash(), Ok(Some([9; 16])));
    assert_eq!(pl.status_info(), Ok(Some(3)));
    let short = build(e, |w| w.raw(pid::KEY_HASH, &[9; 8]).unwrap());
    let pl = ParameterList::parse(&short, e).unwrap();
    assert_eq!(pl.key_hash(), Err(ParseError::Malformed));
}

#[test]
fn pid_bits() {
    assert!(pid::DOMAIN_TAG.must_understand() && !pid::DOMAIN_TAG.is_vendor_specific());
    assert!(pid::FASTDDS_RELATED_SAMPLE_IDENTITY.is_vendor_specific());
    assert!(!pid::TOPIC_NAME.must_understand());
}
