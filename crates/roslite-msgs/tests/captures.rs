//! Generated types against real ROS 2 Kilted traffic: the loopback captures checked in at
//! `crates/roslite-rtps/tests/data/` (see its README), read with a minimal pcap/IPv4/UDP/RTPS
//! reader written for this test.
//!
//! Which writer publishes which topic and type is taken from the captured SEDP publications,
//! so each user sample is decoded as the type its writer announced.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::PathBuf;

use roslite_msgs::cdr::{from_bytes, from_shared, to_vec, Endianness, SharedBuf};
use roslite_msgs::rmw_dds_common::msg::ParticipantEntitiesInfo;
use roslite_msgs::sensor_msgs::msg::Image;
use roslite_msgs::std_msgs::msg::String as StringMsg;
use roslite_msgs::std_srvs::srv::{SetBool_Request, SetBool_Response};
use roslite_msgs::Message;

/// The captures live in one place, beside the `roslite-rtps` golden tests that read them too.
fn captures_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../roslite-rtps/tests/data");
    assert!(
        dir.is_dir(),
        "packet captures not found at {}: these golden tests read the pcap files checked in there",
        dir.display()
    );
    dir
}

fn read_capture(name: &str) -> Vec<u8> {
    let path = captures_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// pcap (https://www.tcpdump.org/manpages/pcap-savefile.5.txt), pcapng, and link layers

/// Link-layer types this reader understands (https://www.tcpdump.org/linktypes.html).
const LINKTYPE_NULL: u32 = 0;
const LINKTYPE_ETHERNET: u32 = 1;
const LINKTYPE_RAW: u32 = 101;
const LINKTYPE_LINUX_SLL: u32 = 113;
const LINKTYPE_IPV4: u32 = 228;
const LINKTYPE_LINUX_SLL2: u32 = 276;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_VLAN: u16 = 0x8100;

/// The frames of a capture file and their link type; classic pcap or pcapng.
fn capture_frames(file: &[u8]) -> (u32, Vec<&[u8]>) {
    match file.get(..4) {
        Some([0x0a, 0x0d, 0x0d, 0x0a]) => pcapng_frames(file),
        _ => pcap_frames(file),
    }
}

/// Classic pcap: a 24-byte global header, then records with a 16-byte header each.
fn pcap_frames(file: &[u8]) -> (u32, Vec<&[u8]>) {
    assert!(file.len() >= 24, "pcap global header truncated");
    // Microsecond or nanosecond timestamps, either byte order.
    let little = match file[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        _ => panic!("not a pcap file: magic {:02x?}", &file[..4]),
    };
    let u32_at = |at: usize| read_u32(file, at, little);
    let link_type = u32_at(20) & 0x0fff_ffff;
    let mut frames = Vec::new();
    let mut at = 24;
    while at < file.len() {
        assert!(
            at + 16 <= file.len(),
            "pcap record header truncated at {at}"
        );
        let captured = u32_at(at + 8) as usize;
        let start = at + 16;
        assert!(
            start + captured <= file.len(),
            "pcap record truncated at {at}"
        );
        frames.push(&file[start..start + captured]);
        at = start + captured;
    }
    (link_type, frames)
}

/// pcapng (draft-ietf-opsawg-pcapng): blocks of `type, total length, body, total length`. Only
/// the section header, interface descriptions and enhanced/simple packet blocks matter here,
/// and all interfaces must share one link type.
fn pcapng_frames(file: &[u8]) -> (u32, Vec<&[u8]>) {
    const SECTION_HEADER: u32 = 0x0a0d_0d0a;
    const INTERFACE_DESCRIPTION: u32 = 1;
    const SIMPLE_PACKET: u32 = 3;
    const ENHANCED_PACKET: u32 = 6;
    let mut little = true;
    let mut link_type = None;
    let mut frames = Vec::new();
    let mut at = 0;
    while at + 12 <= file.len() {
        if read_u32(file, at, true) == SECTION_HEADER {
            // The byte-order magic 0x1A2B3C4D follows the block length.
            little = file[at + 8..at + 12] == [0x4d, 0x3c, 0x2b, 0x1a];
        }
        let block_type = read_u32(file, at, little);
        let total = read_u32(file, at + 4, little) as usize;
        assert!(
            total >= 12 && at + total <= file.len(),
            "pcapng block truncated at {at}"
        );
        let body = &file[at + 8..at + total - 4];
        match block_type {
            INTERFACE_DESCRIPTION => {
                let lt = u32::from(if little {
                    u16::from_le_bytes([body[0], body[1]])
                } else {
                    u16::from_be_bytes([body[0], body[1]])
                });
                if let Some(known) = link_type {
                    assert_eq!(known, lt, "mixed link types");
                }
                link_type = Some(lt);
            }
            ENHANCED_PACKET => {
                let captured = read_u32(body, 12, little) as usize;
                frames.push(&body[20..20 + captured]);
            }
            SIMPLE_PACKET => {
                let original = read_u32(body, 0, little) as usize;
                frames.push(&body[4..4 + original.min(body.len() - 4)]);
            }
            _ => {}
        }
        at += total;
    }
    (
        link_type.expect("pcapng without an interface description"),
        frames,
    )
}

fn read_u32(bytes: &[u8], at: usize, little: bool) -> u32 {
    let raw: [u8; 4] = bytes[at..at + 4].try_into().unwrap();
    if little {
        u32::from_le_bytes(raw)
    } else {
        u32::from_be_bytes(raw)
    }
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

/// The UDP payload of one frame, if it is an unfragmented IPv4/UDP datagram.
fn udp_payload(link_type: u32, frame: &[u8]) -> Option<&[u8]> {
    let ip = match link_type {
        LINKTYPE_ETHERNET => {
            let mut at = 12;
            let mut ethertype = be16(frame, at)?;
            while ethertype == ETHERTYPE_VLAN {
                at += 4;
                ethertype = be16(frame, at)?;
            }
            (ethertype == ETHERTYPE_IPV4).then(|| frame.get(at + 2..))??
        }
        LINKTYPE_LINUX_SLL => (be16(frame, 14)? == ETHERTYPE_IPV4).then(|| frame.get(16..))??,
        LINKTYPE_LINUX_SLL2 => (be16(frame, 0)? == ETHERTYPE_IPV4).then(|| frame.get(20..))??,
        // BSD loopback: the address family in the capturing host's byte order; AF_INET is 2.
        LINKTYPE_NULL => {
            let family = frame.get(..4)?;
            (family == [2, 0, 0, 0] || family == [0, 0, 0, 2]).then(|| frame.get(4..))??
        }
        LINKTYPE_RAW | LINKTYPE_IPV4 => frame,
        other => panic!("unsupported pcap link type {other}"),
    };
    // IPv4 (RFC 791): version/IHL, total length, flags/fragment offset, protocol 17 = UDP.
    let (version, header_len) = (ip.first()? >> 4, usize::from(ip[0] & 0x0f) * 4);
    let total_len = usize::from(be16(ip, 2)?);
    let fragmented = be16(ip, 6)? & 0x3fff != 0;
    if version != 4 || ip.get(9)? != &17 || fragmented || total_len > ip.len() {
        return None;
    }
    // UDP (RFC 768): 8-byte header whose length field covers header and payload.
    let udp = ip.get(header_len..total_len)?;
    let udp_len = usize::from(be16(udp, 4)?);
    udp.get(8..udp_len)
}

// ---------------------------------------------------------------------------------------------
// RTPS (DDSI-RTPS 2.5 §9.4)

type Guid = [u8; 16];

const SUBMSG_DATA: u8 = 0x15;
const SUBMSG_DATA_FRAG: u8 = 0x16;
const SUBMSG_INFO_SRC: u8 = 0x0c;
const PID_SENTINEL: u16 = 0x0001;
const PID_TOPIC_NAME: u16 = 0x0005;
const PID_TYPE_NAME: u16 = 0x0007;
const PID_ENDPOINT_GUID: u16 = 0x005a;
/// ENTITYID_SEDP_BUILTIN_PUBLICATIONS_WRITER (RTPS 2.5 Table 9.1).
const SEDP_PUBLICATIONS_WRITER: [u8; 4] = [0, 0, 3, 0xc2];

/// One DATA or DATA_FRAG submessage as far as this test needs it.
struct DataSubmessage<'a> {
    writer: Guid,
    sn: i64,
    /// `None` for DATA; `(fragment_starting_num, fragment_size, sample_size)` for DATA_FRAG.
    frag: Option<(u32, u16, u32)>,
    payload: &'a [u8],
}

/// The DATA and DATA_FRAG submessages of one RTPS message (§9.4.5.3, §9.4.5.4).
fn data_submessages(message: &[u8]) -> Vec<DataSubmessage<'_>> {
    let mut out = Vec::new();
    if message.len() < 20 || &message[..4] != b"RTPS" {
        return out;
    }
    let mut prefix: [u8; 12] = message[8..20].try_into().unwrap();
    let mut at = 20;
    while at + 4 <= message.len() {
        let (id, flags) = (message[at], message[at + 1]);
        let little = flags & 0x01 != 0;
        let u16_at = |b: &[u8], i: usize| -> u16 {
            let bytes = [b[i], b[i + 1]];
            if little {
                u16::from_le_bytes(bytes)
            } else {
                u16::from_be_bytes(bytes)
            }
        };
        let u32_at = |b: &[u8], i: usize| -> u32 {
            let bytes: [u8; 4] = b[i..i + 4].try_into().unwrap();
            if little {
                u32::from_le_bytes(bytes)
            } else {
                u32::from_be_bytes(bytes)
            }
        };
        let declared = usize::from(u16_at(message, at + 2));
        let body_start = at + 4;
        // §9.4.5.1.3: a length of zero means the submessage extends to the end of the message.
        let body_end = if declared == 0 {
            message.len()
        } else {
            body_start + declared
        };
        assert!(
            body_end <= message.len(),
            "submessage 0x{id:02x} overruns its message"
        );
        let body = &message[body_start..body_end];
        match id {
            SUBMSG_INFO_SRC => prefix = body[8..20].try_into().unwrap(),
            SUBMSG_DATA | SUBMSG_DATA_FRAG => {
                // extraFlags, octetsToInlineQos, readerId, writerId, writerSN (high, low).
                let octets_to_qos = usize::from(u16_at(body, 2));
                let mut writer = [0; 16];
                writer[..12].copy_from_slice(&prefix);
                writer[12..].copy_from_slice(&body[8..12]);
                let sn = (i64::from(u32_at(body, 12) as i32) << 32) | i64::from(u32_at(body, 16));
                let frag = (id == SUBMSG_DATA_FRAG)
                    .then(|| (u32_at(body, 20), u16_at(body, 26), u32_at(body, 28)));
                let mut payload_at = 4 + octets_to_qos;
                if flags & 0x02 != 0 {
                    // Inline QoS: a parameter list ended by PID_SENTINEL (§9.4.2.11).
                    loop {
                        let pid = u16_at(body, payload_at);
                        let len = usize::from(u16_at(body, payload_at + 2));
                        payload_at += 4 + len;
                        if pid == PID_SENTINEL {
                            break;
                        }
                    }
                }
                // DATA carries a payload only with the Data or Key flag; DATA_FRAG always.
                let has_payload = id == SUBMSG_DATA_FRAG || flags & 0x0c != 0;
                if has_payload {
                    out.push(DataSubmessage {
                        writer,
                        sn,
                        frag,
                        payload: &body[payload_at..],
                    });
                }
            }
            _ => {}
        }
        if declared == 0 {
            break;
        }
        at = body_end;
    }
    out
}

/// A complete sample: the serialized payload (encapsulation header first) of one writer SN.
struct Sample {
    writer: Guid,
    payload: Vec<u8>,
}

/// Every distinct sample in a capture, DATA_FRAG reassembled (§8.4.14.1), and the SEDP
/// publications, keyed by writer GUID: `(topic, DDS type name)`.
fn samples(capture: &str) -> (Vec<Sample>, BTreeMap<Guid, (String, String)>) {
    let file = read_capture(capture);
    let (link_type, frames) = capture_frames(&file);
    let mut complete: BTreeMap<(Guid, i64), Vec<u8>> = BTreeMap::new();
    // Partial samples: buffer and which fragments have arrived.
    let mut partial: BTreeMap<(Guid, i64), (Vec<u8>, Vec<bool>)> = BTreeMap::new();
    for frame in frames {
        let Some(udp) = udp_payload(link_type, frame) else {
            continue;
        };
        for data in data_submessages(udp) {
            let key = (data.writer, data.sn);
            if complete.contains_key(&key) {
                continue;
            }
            let Some((first, fragment_size, sample_size)) = data.frag else {
                complete.insert(key, data.payload.to_vec());
                continue;
            };
            let (fragment_size, sample_size) = (usize::from(fragment_size), sample_size as usize);
            let count = sample_size.div_ceil(fragment_size);
            let (buffer, have) = partial
                .entry(key)
                .or_insert_with(|| (vec![0; sample_size], vec![false; count]));
            // One or more fragments; the last one of the sample may be short, and the
            // submessage may carry padding after it.
            for (i, chunk) in data.payload.chunks(fragment_size).enumerate() {
                let number = first as usize - 1 + i;
                let offset = number * fragment_size;
                if number >= count {
                    break;
                }
                let len = chunk.len().min(sample_size - offset);
                buffer[offset..offset + len].copy_from_slice(&chunk[..len]);
                have[number] = true;
            }
            if have.iter().all(|&h| h) {
                let (buffer, _) = partial.remove(&key).unwrap();
                complete.insert(key, buffer);
            }
        }
    }
    let mut publications = BTreeMap::new();
    let mut user_samples = Vec::new();
    for ((writer, _), payload) in complete {
        if writer[12..] == SEDP_PUBLICATIONS_WRITER {
            if let Some((guid, topic, type_name)) = parse_publication(&payload) {
                publications.insert(guid, (topic, type_name));
            }
        } else if writer[15] & 0xc0 == 0 {
            // User-defined entity kinds only (§9.3.1.2); builtin ones are discovery.
            user_samples.push(Sample { writer, payload });
        }
    }
    (user_samples, publications)
}

/// The endpoint GUID, topic and type of a SEDP DiscoveredWriterData in PL_CDR (§9.6.2.2).
fn parse_publication(payload: &[u8]) -> Option<(Guid, String, String)> {
    let little = match payload.get(..2)? {
        [0, 3] => true,
        [0, 2] => false,
        _ => return None,
    };
    let u16_at = |i: usize| -> Option<u16> {
        let bytes: [u8; 2] = payload.get(i..i + 2)?.try_into().ok()?;
        Some(if little {
            u16::from_le_bytes(bytes)
        } else {
            u16::from_be_bytes(bytes)
        })
    };
    let string = |value: &[u8]| -> Option<String> {
        // A CDR string: u32 length including the NUL, then the bytes.
        let text = value.get(4..)?;
        let end = text.iter().position(|&b| b == 0)?;
        String::from_utf8(text[..end].to_vec()).ok()
    };
    let (mut guid, mut topic, mut type_name) = (None, None, None);
    let mut at = 4;
    loop {
        let (pid, len) = (u16_at(at)?, usize::from(u16_at(at + 2)?));
        let value = payload.get(at + 4..at + 4 + len)?;
        match pid & 0x3fff {
            PID_SENTINEL => break,
            PID_TOPIC_NAME => topic = string(value),
            PID_TYPE_NAME => type_name = string(value),
            PID_ENDPOINT_GUID => guid = value.try_into().ok(),
            _ => {}
        }
        at += 4 + len;
    }
    Some((guid?, topic?, type_name?))
}

/// Decodes every sample the named DDS topic carried as `T`, checks `T` against the announced
/// type, and checks that re-encoding gives the same value back.
fn decode_topic<T: Message>(capture: &str, topic: &str) -> Vec<(T, Vec<u8>)> {
    let (samples, publications) = samples(capture);
    let writers: Vec<&Guid> = publications
        .iter()
        .filter(|(_, (t, _))| t == topic)
        .map(|(guid, _)| guid)
        .collect();
    assert!(
        !writers.is_empty(),
        "{capture}: no publication of {topic}; found {publications:?}"
    );
    for guid in &writers {
        assert_eq!(
            publications[*guid].1,
            T::DDS_TYPE_NAME,
            "{capture}: type of {topic}"
        );
    }
    let decoded: Vec<(T, Vec<u8>)> = samples
        .into_iter()
        .filter(|s| writers.contains(&&s.writer))
        .map(|s| {
            let value = from_bytes::<T>(&s.payload)
                .unwrap_or_else(|e| panic!("{capture}: {topic} sample: {e}"));
            check_round_trip(&value, &s.payload);
            (value, s.payload)
        })
        .collect();
    assert!(!decoded.is_empty(), "{capture}: no samples on {topic}");
    decoded
}

/// Re-encoding gives the same value, and the same bytes as the capture up to padding contents
/// and trailing padding (Fast CDR neither zeroes padding nor omits it at the end).
fn check_round_trip<T: Message>(value: &T, captured: &[u8]) {
    let ours = to_vec(value, Endianness::Little).unwrap();
    assert_eq!(&from_bytes::<T>(&ours).unwrap(), value);
    assert!(
        ours.len() <= captured.len() && captured.len() - ours.len() < 8,
        "{}: re-encoded {} bytes, captured {}",
        T::TYPE_NAME,
        ours.len(),
        captured.len()
    );
    let big = to_vec(value, Endianness::Big).unwrap();
    assert_eq!(&from_bytes::<T>(&big).unwrap(), value);
}

fn assert_all<T: Debug>(values: &[T], what: &str, ok: impl Fn(&T) -> bool) {
    for v in values {
        assert!(ok(v), "{what}: {v:?}");
    }
}

#[test]
fn fast_dds_chatter_strings() {
    let samples =
        decode_topic::<StringMsg>("kilted-fastdds-talker-listener-setbool.pcap", "rt/chatter");
    let texts: Vec<&str> = samples.iter().map(|(s, _)| s.data.as_str()).collect();
    assert_all(&texts, "chatter", |t| t.starts_with("hello "));
    assert!(texts.contains(&"hello 15"), "{texts:?}");
}

#[test]
fn cyclone_chatter_strings() {
    let samples = decode_topic::<StringMsg>("cyclone11-python-to-kilted-rclpy.pcap", "rt/chatter");
    assert!(samples.len() > 10);
    assert_all(&samples, "chatter", |(s, _)| !s.data.is_empty());
}

#[test]
fn set_bool_request_and_response() {
    let capture = "kilted-fastdds-talker-listener-setbool.pcap";
    let requests = decode_topic::<SetBool_Request>(capture, "rq/motor_powerRequest");
    assert_eq!(requests.len(), 1);
    assert!(requests[0].0.data);
    let responses = decode_topic::<SetBool_Response>(capture, "rr/motor_powerReply");
    assert_eq!(responses.len(), 1);
    let response = &responses[0].0;
    assert!(response.success);
    assert_eq!(response.message, "got True");
}

#[test]
fn participant_entities_info_from_ros_discovery_info() {
    for capture in [
        "kilted-fastdds-talker-listener-setbool.pcap",
        "kilted-fastdds-image-datafrag.pcap",
    ] {
        let samples = decode_topic::<ParticipantEntitiesInfo>(capture, "ros_discovery_info");
        for (info, _) in &samples {
            // The gid is the participant's GUID: prefix, then ENTITYID_PARTICIPANT 0x000001c1.
            assert_eq!(info.gid.data[12..], [0, 0, 1, 0xc1], "{capture}: {info:?}");
            for node in &info.node_entities_info_seq {
                assert!(node.node_namespace.starts_with('/'), "{capture}: {node:?}");
                assert!(!node.node_name.is_empty());
            }
        }
        let with_nodes = samples
            .iter()
            .filter(|(i, _)| !i.node_entities_info_seq.is_empty());
        assert!(with_nodes.count() > 0, "{capture}: no sample lists a node");
    }
}

#[test]
fn image_reassembled_from_data_frag_is_a_zero_copy_view() {
    let capture = "kilted-fastdds-image-datafrag.pcap";
    let (samples, publications) = samples(capture);
    let writer = publications
        .iter()
        .find(|(_, (topic, _))| topic == "rt/image_raw")
        .map(|(guid, (_, type_name))| {
            assert_eq!(type_name, Image::DDS_TYPE_NAME);
            *guid
        })
        .expect("publication of rt/image_raw");
    let images: Vec<&Sample> = samples.iter().filter(|s| s.writer == writer).collect();
    assert!(!images.is_empty(), "no complete image sample in {capture}");
    for sample in images {
        assert_eq!(sample.payload.len(), 230_448);
        let shared = SharedBuf::from_vec(sample.payload.clone());
        let image: Image = from_shared(&shared).unwrap();
        assert_eq!((image.width, image.height), (320, 240));
        assert_eq!(image.encoding, "rgb8");
        assert_eq!(image.step, 320 * 3);
        assert_eq!(image.data.len(), 230_400);
        assert!(image.data.is_view(), "image data was copied");
        let data_at = shared.bytes().len() - 230_400;
        assert_eq!(image.data.as_ptr(), shared.bytes()[data_at..].as_ptr());
        check_round_trip(&image, &sample.payload);
        let copied: Image = from_bytes(&sample.payload).unwrap();
        assert!(!copied.data.is_view());
        assert_eq!(copied, image);
    }
}
