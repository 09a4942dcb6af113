//! The bodies of the cargo-fuzz targets, as plain functions of the input bytes.
//!
//! `fuzz_targets/<name>.rs` is one line calling the function of the same name, and
//! `xtask/tests/fuzz_corpus.rs` includes this file (`#[path]`) and runs every file of
//! `fuzz/corpus/<name>/` and `fuzz/regressions/<name>/` (each input that once failed) through
//! it on stable Rust, so `cargo xtask test` replays them without nightly.
//!
//! Each function must not panic for any input: a panic, an allocation over the fuzzer's
//! `-rss_limit_mb` or a run over its `-timeout` is a finding. Besides "does not crash", some
//! targets check properties (`assert!`) that must hold for all input: a payload the generated
//! decoder accepts re-encodes to the same bytes, and the dynamic decoder reads it alike.
//!
//! Selector bytes: where one target covers several types or decoders, the first input byte
//! picks which, so the fuzzer can learn each separately.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use roslite_cdr::CdrReader;
use roslite_msg_gen::ast::{InterfaceKind, TypeName};
use roslite_msg_gen::dynamic::{self, YamlOptions};
use roslite_msg_gen::registry::InterfaceSet;
use roslite_msgs::Message;
use roslite_rtps::discovery::{ros, sedp, wlp, History};
use roslite_rtps::{
    parse_message, Datagram, EndpointData, EndpointKind, EndpointOptions, EndpointQos, Event, Guid,
    GuidPrefix, Instant, Locator, ParameterList, Participant, ParticipantConfig, ParticipantData,
    ProtocolVersion, ReaderId, ReceiveStats, SenderInfo, SequenceNumber, Submessage, VendorId,
    WriterId,
};

/// A target's body, or one type's check in [`GENERATED`].
pub type Body = fn(&[u8]);

/// Every target: its name (the directory under `fuzz/corpus/`, the binary in
/// `fuzz_targets/`) and its body.
pub const TARGETS: &[(&str, Body)] = &[
    ("cdr", cdr),
    ("msg_parser", msg_parser),
    ("parameter_list", parameter_list),
    ("participant", participant),
    ("rtps_message", rtps_message),
    ("yaml_message", yaml_message),
    ("yaml_params", yaml_params),
    ("snapshot", snapshot),
    ("guest_imports", guest_imports),
    ("shm_channel", shm_channel),
];

/// The built-in interface definitions (`roslite-msgs`' vendored files), parsed once.
pub fn builtins() -> &'static InterfaceSet {
    static SET: OnceLock<InterfaceSet> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set = InterfaceSet::new();
        roslite_msg_gen::build::add_builtin_interfaces(&mut set)
            .expect("the vendored definitions parse (roslite-msgs' tests)");
        set
    })
}

// ---------------------------------------------------------------------------------------------
// cdr: every generated type, and the dynamic decoder on the same bytes

macro_rules! generated_types {
    ($($package:ident :: $kind:ident :: $name:ident,)*) => {
        /// The type name and the check of every generated message type.
        pub const GENERATED: &[(&str, Body)] = &[
            $((
                <roslite_msgs::$package::$kind::$name as Message>::TYPE_NAME,
                check_generated::<roslite_msgs::$package::$kind::$name>,
            ),)*
        ];
    };
}

include!("generated_types.rs");

/// CDR decoding of every built-in type: the input starts with the type's index in
/// [`GENERATED`] ([`split_type_index`]), the rest is the serialized payload with its
/// encapsulation header.
pub fn cdr(data: &[u8]) {
    let Some((index, payload)) = split_type_index(data) else {
        return;
    };
    let (_, check) = GENERATED[index];
    check(payload);
}

/// The index into [`GENERATED`] an input starts with, and the rest: byte 0 below 255 is the
/// index; 255 is followed by a second byte adding to it, for the types past the first 255.
pub fn split_type_index(data: &[u8]) -> Option<(usize, &[u8])> {
    let (&first, rest) = data.split_first()?;
    let (index, rest) = match first {
        255 => {
            let (&second, rest) = rest.split_first()?;
            (255 + usize::from(second), rest)
        }
        _ => (usize::from(first), rest),
    };
    Some((index % GENERATED.len(), rest))
}

/// What [`split_type_index`] reads as `index`.
pub fn type_index_prefix(index: usize) -> Vec<u8> {
    match u8::try_from(index) {
        Ok(byte) if byte < 255 => vec![byte],
        _ => vec![255, u8::try_from(index - 255).unwrap_or(u8::MAX)],
    }
}

/// Decodes `payload` as `T` with the generated code and with the dynamic decoder (what
/// `topic echo` uses). What the generated decoder accepts must re-encode to bytes that decode
/// to the same bytes again, and the dynamic decoder must accept it and encode it identically.
fn check_generated<T: Message>(payload: &[u8]) {
    let set = builtins();
    let ty = TypeName::parse(T::TYPE_NAME).expect("generated type names parse");
    let dynamic = dynamic::decode(set, &ty, payload);
    if let Ok(value) = &dynamic {
        let _ = dynamic::to_yaml(set, &ty, value, &YamlOptions::default());
        let flow = YamlOptions {
            flow_style: true,
            truncate_length: Some(3),
            ..YamlOptions::default()
        };
        let _ = dynamic::to_yaml(set, &ty, value, &flow);
    }
    // A keyed type's key, which a keyed reader reads out of every sample from the network:
    // never a panic, whatever the bytes.
    let key = T::KEY.map(|layout| layout.key_of(payload));
    let Ok(value) = roslite_cdr::from_bytes::<T>(payload) else {
        return;
    };
    let endianness = CdrReader::new(payload)
        .expect("the payload decoded, so its header is valid")
        .endianness();
    let bytes = match roslite_cdr::to_vec(&value, endianness) {
        Ok(bytes) => bytes,
        // The reader takes a string with a NUL inside (a C++ peer can send one), the writer
        // refuses to write one (docs/robustness.md, "Fuzzing"): not a finding.
        Err(roslite_cdr::EncodeError::InteriorNul) => return,
        Err(e) => panic!("{}: a decoded value does not encode: {e}", T::TYPE_NAME),
    };
    // Of a sample the decoder takes, the key is found and is a function of the value.
    if let (Some(layout), Some(key)) = (T::KEY, key) {
        let key = key.unwrap_or_else(|e| {
            panic!(
                "{}: the decoder takes the payload, its key layout does not: {e}",
                T::TYPE_NAME
            )
        });
        assert_eq!(
            layout.key_of(&bytes).ok(),
            Some(key),
            "{}: the key of a re-encoded value differs",
            T::TYPE_NAME
        );
    }
    let again = roslite_cdr::from_bytes::<T>(&bytes).expect("a re-encoded value decodes");
    let bytes_again = roslite_cdr::to_vec(&again, endianness).expect("a decoded value encodes");
    assert_eq!(
        bytes,
        bytes_again,
        "{}: re-encoding is not stable",
        T::TYPE_NAME
    );
    let value = match dynamic {
        Ok(value) => value,
        Err(e) => panic!(
            "{}: the generated decoder accepts the payload, the dynamic one says: {e}",
            T::TYPE_NAME
        ),
    };
    let dynamic_bytes = match dynamic::encode(set, &ty, &value, endianness) {
        Ok(bytes) => bytes,
        Err(e) => panic!(
            "{}: a decoded dynamic value does not encode: {e}",
            T::TYPE_NAME
        ),
    };
    if dynamic_bytes == bytes {
        return;
    }
    // The dynamic decoder holds a float32 as the f64 it widens to, and widening quiets a
    // signalling NaN (x86 and ARM set the quiet bit), so a NaN's bits may change on the way
    // through `topic echo`'s values. Anything else must be the same message: compared as the
    // generated type prints it, where every NaN is `NaN`.
    let from_dynamic = roslite_cdr::from_bytes::<T>(&dynamic_bytes);
    assert_eq!(
        format!("{from_dynamic:?}"),
        format!("{:?}", Ok::<_, roslite_cdr::DecodeError>(again)),
        "{}: dynamic and generated encodings differ beyond NaN bits",
        T::TYPE_NAME
    );
}

// ---------------------------------------------------------------------------------------------
// parameter_list: SPDP, SEDP, WLP, inline QoS and ROS discovery payloads

/// Discovery payload decoding without an RTPS frame around it. Input byte 0 picks the
/// sender's vendor and protocol version (bits 0-2), the SEDP sample's status info (bits 3-4)
/// and whether it carries a key hash (bit 5); the rest is the payload. The payload is also
/// read as an inline QoS list (no encapsulation header) in both byte orders, and as the ROS
/// `ParticipantEntitiesInfo` and USER_DATA strings.
pub fn parameter_list(data: &[u8]) {
    let Some((&selector, payload)) = data.split_first() else {
        return;
    };
    const VENDORS: [VendorId; 8] = [
        VendorId::EPROSIMA,
        VendorId::ECLIPSE_CYCLONE,
        VendorId::RTI_CONNEXT,
        VendorId::OPENDDS,
        VendorId::RUSTDDS,
        VendorId::DUST_DDS,
        VendorId::ROSLITE,
        VendorId::EPROSIMA,
    ];
    let version = if selector & 7 == 7 {
        ProtocolVersion::V2_1
    } else {
        ProtocolVersion::V2_4
    };
    let sender = SenderInfo {
        vendor_id: VENDORS[usize::from(selector & 7)],
        version,
    };
    let _ = ParticipantData::from_payload(payload, sender);
    for kind in [EndpointKind::Writer, EndpointKind::Reader] {
        let _ = EndpointData::from_payload(payload, kind, sender);
        let status_info = match (selector >> 3) & 3 {
            0 => None,
            1 => Some(1),
            2 => Some(2),
            _ => Some(3),
        };
        let key_hash = (selector & 0x20 != 0).then(|| {
            let mut key = [0; 16];
            let n = payload.len().min(16);
            key[..n].copy_from_slice(&payload[..n]);
            key
        });
        let _ = sedp::parse_sample(kind, payload, status_info, key_hash, sender);
    }
    let _ = wlp::ParticipantMessageData::from_payload(payload);
    if let Ok(list) = ParameterList::from_payload(payload) {
        read_parameter_list(&list, sender.vendor_id);
    }
    for endianness in [
        roslite_rtps::Endianness::Little,
        roslite_rtps::Endianness::Big,
    ] {
        if let Ok(list) = ParameterList::parse(payload, endianness) {
            read_parameter_list(&list, sender.vendor_id);
        }
    }
    for distro in [ros::WireDistro::Humble, ros::WireDistro::IronOrLater] {
        let _ = ros::ParticipantEntitiesInfo::from_payload_any(payload, distro);
    }
    let _ = ros::parse_enclave(payload);
    let _ = ros::parse_typehash(payload);
    for role in [
        ros::CycloneServiceRole::Client,
        ros::CycloneServiceRole::Service,
    ] {
        let _ = ros::parse_cyclone_service_id(payload, role);
    }
}

fn read_parameter_list(list: &ParameterList<'_>, vendor: VendorId) {
    let _ = list.iter().count();
    let _ = list.key_hash();
    let _ = list.status_info();
    let _ = list.related_sample_identity(vendor);
    let mut out = Vec::new();
    list.emit(&mut out);
    assert_eq!(out.len(), list.buffer_len(), "emit writes buffer_len bytes");
}

// ---------------------------------------------------------------------------------------------
// rtps_message: the datagram receive path

/// The datagram receive path: the message receiver, then SPDP/SEDP decoding of every DATA
/// payload and the inline-QoS accessors; the raw input is also decoded directly as a
/// discovery payload so the parameter-list decoders are reached without a valid RTPS frame.
pub fn rtps_message(data: &[u8]) {
    fn decode_discovery(payload: &[u8], sender: SenderInfo) {
        let _ = ParticipantData::from_payload(payload, sender);
        let _ = EndpointData::from_payload(payload, EndpointKind::Writer, sender);
        let _ = EndpointData::from_payload(payload, EndpointKind::Reader, sender);
    }
    let mut stats = ReceiveStats::default();
    let _ = parse_message(data, &mut stats, |rx| {
        let sender = SenderInfo::from_receiver(rx.receiver);
        if let Submessage::Data(d) = rx.submessage {
            if let Some(p) = d.payload {
                decode_discovery(p.bytes, sender);
            }
            if let Some(q) = d.inline_qos {
                let _ = q.related_sample_identity(sender.vendor_id);
                let _ = (q.key_hash(), q.status_info());
            }
        }
    });
    let sender = SenderInfo {
        vendor_id: VendorId::EPROSIMA,
        version: ProtocolVersion::V2_2,
    };
    decode_discovery(data, sender);
}

// ---------------------------------------------------------------------------------------------
// participant: a participant's whole receive side, with its state

/// The participant under test: GUID prefix `aa 00 .. 01`, participant id 0, on 127.0.0.1.
const LOCAL_ID: u32 = 0;
/// The peer every datagram of a `participant` input comes from: participant id 1.
const PEER_ID: u32 = 1;
/// The topic both participants write and read, and its type.
const FUZZ_TOPIC: &str = "rt/chatter";
type FuzzMessage = roslite_msgs::std_msgs::msg::String;
/// The keyed topic both participants also write and read: a transient-local KEEP_LAST history
/// per instance, whose overwritten samples leave holes in the writer's numbers.
const FUZZ_KEYED_TOPIC: &str = "rt/keyed";
type FuzzKeyed = roslite_msgs::test_msgs::msg::KeyedLong;
/// The keys the keyed writer cycles through.
const FUZZ_KEYS: i32 = 5;
/// Virtual time per step of a `participant` input's clock.
const STEP: Duration = Duration::from_millis(5);
/// Calls of `handle_timeout` at one instant after which the participant must have no timer
/// due at that instant any more (its driver would otherwise spin).
const MAX_TIMEOUTS_PER_INSTANT: usize = 64;

/// One record of a `participant` input. The input is records `[ctrl][len: u16 LE][len bytes]`,
/// one after another ([`participant_records`]); a last, incomplete record is cut to what is
/// there. `ctrl`'s bits:
/// - 0-3: steps of [`STEP`] to let pass first, running due timers at each step;
/// - 4: the local writers write a small sample first (and the keyed writer one of its next
///   key); 5: a 4 KiB one (the seeds' peer sends its own 4 KiB samples as DATA_FRAGs);
/// - 6: the datagram arrives on the SPDP multicast group rather than by unicast.
///
/// `len` 0 means no datagram: the record only lets time pass and writes.
pub struct ParticipantRecord<'a> {
    pub ctrl: u8,
    pub datagram: &'a [u8],
}

const CTRL_STEPS: u8 = 0x0f;
const CTRL_WRITE_SMALL: u8 = 0x10;
const CTRL_WRITE_LARGE: u8 = 0x20;
const CTRL_MULTICAST: u8 = 0x40;

pub fn participant_records(mut data: &[u8]) -> impl Iterator<Item = ParticipantRecord<'_>> {
    std::iter::from_fn(move || {
        let (&ctrl, rest) = data.split_first()?;
        let (len, rest) = match rest {
            [a, b, rest @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), rest),
            _ => (0, &[][..]),
        };
        let (datagram, rest) = rest.split_at(len.min(rest.len()));
        data = rest;
        Some(ParticipantRecord { ctrl, datagram })
    })
}

/// Appends one record to a `participant` input.
pub fn push_participant_record(out: &mut Vec<u8>, ctrl: u8, datagram: &[u8]) {
    let len = u16::try_from(datagram.len()).expect("a record's datagram fits in 64 KiB");
    out.push(ctrl);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(datagram);
}

fn fuzz_participant_config(id: u32) -> ParticipantConfig {
    let mut prefix = [0u8; 12];
    prefix[0] = 0xaa;
    prefix[11] = u8::try_from(id).expect("a small id") + 1;
    let mut c = ParticipantConfig::localhost(GuidPrefix(prefix), 0, id, 2);
    c.entity_name = Some(format!("fuzz{id}"));
    // Small reassembly budgets: the same code as the defaults, reached with small inputs.
    c.reader_defaults.max_sample_size = 1 << 20;
    c.reader_defaults.reassembly_bytes_per_participant = 4 << 20;
    c.reader_defaults.reassembly_bytes_total = 8 << 20;
    c
}

/// Where a participant of [`fuzz_participant_config`] sends user traffic from.
fn unicast_locator(config: &ParticipantConfig) -> Locator {
    *config
        .default_unicast
        .first()
        .expect("localhost configurations have a unicast locator")
}

fn fuzz_options(qos: EndpointQos) -> EndpointOptions {
    EndpointOptions::new(FUZZ_TOPIC, FuzzMessage::DDS_TYPE_NAME).with_qos(qos)
}

/// A `std_msgs/String` sample of `len` characters, serialized.
fn fuzz_string_payload(len: usize) -> Arc<[u8]> {
    let message = FuzzMessage {
        data: "x".repeat(len),
    };
    roslite_cdr::to_vec(&message, roslite_cdr::Endianness::Little)
        .expect("a string encodes")
        .into()
}

/// One side of a `participant` session: a participant with a reliable writer, a reliable
/// reader and a best-effort reader on [`FUZZ_TOPIC`], and a transient-local writer and reader
/// on [`FUZZ_KEYED_TOPIC`] (KEEP_LAST 2 and 1 per instance).
pub struct FuzzNode {
    pub participant: Participant,
    writer: WriterId,
    readers: [ReaderId; 2],
    keyed_writer: WriterId,
    keyed_reader: ReaderId,
    keyed_written: i32,
    pub keyed_samples_delivered: u64,
    /// The last sequence number each (reader, remote writer) delivered.
    delivered: BTreeMap<(ReaderId, Guid), SequenceNumber>,
    pub samples_delivered: u64,
    pub writers_matched: u64,
}

impl FuzzNode {
    pub fn new(id: u32, now: Instant) -> Self {
        Self::with_config(fuzz_participant_config(id), now)
    }

    pub fn with_config(config: ParticipantConfig, now: Instant) -> Self {
        let mut participant = Participant::new(config, now).expect("a valid configuration");
        let writer = participant
            .create_writer(now, fuzz_options(EndpointQos::ros_default()))
            .expect("one writer fits");
        let readers = [EndpointQos::ros_default(), EndpointQos::sensor_data()].map(|qos| {
            participant
                .create_reader(now, fuzz_options(qos))
                .expect("two readers fit")
        });
        let keyed = |depth| {
            EndpointOptions::new(FUZZ_KEYED_TOPIC, FuzzKeyed::DDS_TYPE_NAME)
                .with_qos(EndpointQos {
                    transient_local: true,
                    history: History::KeepLast { depth },
                    ..EndpointQos::ros_default()
                })
                .with_key(FuzzKeyed::KEY)
        };
        let keyed_writer = participant
            .create_writer(now, keyed(2))
            .expect("a keyed writer fits");
        let keyed_reader = participant
            .create_reader(now, keyed(1))
            .expect("a keyed reader fits");
        FuzzNode {
            participant,
            writer,
            readers,
            keyed_writer,
            keyed_reader,
            keyed_written: 0,
            keyed_samples_delivered: 0,
            delivered: BTreeMap::new(),
            samples_delivered: 0,
            writers_matched: 0,
        }
    }

    pub fn locator(&self) -> Locator {
        unicast_locator(self.participant.config())
    }

    pub fn write(&mut self, now: Instant, ctrl: u8) {
        for (bit, len) in [(CTRL_WRITE_SMALL, 12), (CTRL_WRITE_LARGE, 4096)] {
            if ctrl & bit != 0 {
                // A full keep-last history refuses nothing; any refusal is a finding.
                self.participant
                    .write(now, self.writer, fuzz_string_payload(len), None)
                    .expect("a local write succeeds");
            }
        }
        if ctrl & CTRL_WRITE_SMALL != 0 {
            let message = FuzzKeyed {
                key: self.keyed_written % FUZZ_KEYS,
                value: self.keyed_written,
            };
            self.keyed_written += 1;
            let payload = roslite_cdr::to_vec(&message, roslite_cdr::Endianness::Little)
                .expect("a KeyedLong encodes");
            self.participant
                .write(now, self.keyed_writer, payload.into(), None)
                .expect("a keyed keep-last write succeeds");
        }
    }

    /// Runs the timers due at `now`, taking what each run sends (the participant's contract:
    /// drain `poll_transmit` after every input), until none is due at `now`; that must
    /// happen within [`MAX_TIMEOUTS_PER_INSTANT`] runs. Returns what was sent.
    pub fn run_timers(&mut self, now: Instant) -> Vec<Datagram> {
        let mut sent = self.drain(now);
        for _ in 0..MAX_TIMEOUTS_PER_INSTANT {
            if self.participant.poll_timeout().is_none_or(|t| t > now) {
                return sent;
            }
            self.participant.handle_timeout(now);
            sent.extend(self.drain(now));
        }
        panic!("timers still due after {MAX_TIMEOUTS_PER_INSTANT} handle_timeout calls at {now}");
    }

    /// Everything the participant wants sent now.
    pub fn drain(&mut self, now: Instant) -> Vec<Datagram> {
        std::iter::from_fn(|| self.participant.poll_transmit(now)).collect()
    }

    /// Takes the participant's events and checks what its readers deliver: from each remote
    /// writer, in order and never twice, while matched.
    pub fn take_events(&mut self) {
        while let Some(event) = self.participant.poll_event() {
            match event {
                Event::Sample { reader, sample } => {
                    let keyed = reader == self.keyed_reader;
                    assert!(
                        keyed || self.readers.contains(&reader),
                        "a sample for no reader"
                    );
                    self.keyed_samples_delivered += u64::from(keyed);
                    let key = (reader, sample.writer);
                    if let Some(last) = self.delivered.get(&key) {
                        assert!(
                            sample.sequence_number > *last,
                            "{:?} delivered {:?} after {last:?} from {:?}",
                            reader,
                            sample.sequence_number,
                            sample.writer
                        );
                    }
                    self.delivered.insert(key, sample.sequence_number);
                    self.samples_delivered += 1;
                }
                Event::WriterMatched { .. } => self.writers_matched += 1,
                // A writer matched again is a new stream: its numbers may start over.
                Event::WriterUnmatched { reader, remote } => {
                    self.delivered.remove(&(reader, remote));
                }
                _ => {}
            }
        }
    }

    /// Checks the bounds the configuration sets on what peers make us hold.
    pub fn check_bounds(&self, peer: GuidPrefix) {
        let c = self.participant.config();
        let (own, total) = self.participant.reassembly_bytes(peer);
        assert!(
            own <= c.reader_defaults.reassembly_bytes_per_participant,
            "{own} bytes held for one peer"
        );
        assert!(
            total <= c.reader_defaults.reassembly_bytes_total,
            "{total} bytes held in reassembly"
        );
    }
}

/// What a `participant` session did, for tests that check a seed reaches the data path.
pub struct ParticipantSummary {
    pub samples_delivered: u64,
    /// Of those, by the keyed reader.
    pub keyed_samples_delivered: u64,
    pub writers_matched: u64,
    pub malformed: u64,
}

/// A participant with a writer and two readers receives the input's datagrams from one peer
/// (participant id 1 on 127.0.0.1), between which time passes and its writer writes, and at
/// the end 30 s pass. Each datagram is followed by what the runtime's driver does: due timers,
/// every transmit, every event. Properties: no panic; at one instant the timers settle; a
/// reader delivers each remote writer's samples in order and never twice; reassembly stays in
/// its budgets.
pub fn participant(data: &[u8]) {
    participant_session(data);
}

/// [`participant`], returning what the session did.
pub fn participant_session(data: &[u8]) -> ParticipantSummary {
    let mut now = Instant::ZERO;
    let mut node = FuzzNode::new(LOCAL_ID, now);
    let peer = fuzz_participant_config(PEER_ID);
    let source = unicast_locator(&peer);
    let settle = |node: &mut FuzzNode, now: Instant| {
        node.run_timers(now);
        node.take_events();
        node.check_bounds(peer.guid_prefix);
    };
    for record in participant_records(data) {
        for _ in 0..record.ctrl & CTRL_STEPS {
            now += STEP;
            settle(&mut node, now);
        }
        node.write(now, record.ctrl);
        if !record.datagram.is_empty() {
            if record.ctrl & CTRL_MULTICAST != 0 {
                node.participant
                    .handle_multicast_datagram(now, Some(source), record.datagram);
            } else {
                node.participant
                    .handle_datagram(now, Some(source), record.datagram);
            }
        }
        settle(&mut node, now);
    }
    // Long enough for heartbeats, repairs, reassembly timeouts and the peer's lease.
    let end = now + Duration::from_secs(30);
    while let Some(next) = node.participant.poll_timeout().filter(|t| *t <= end) {
        now = now.max(next);
        settle(&mut node, now);
    }
    ParticipantSummary {
        samples_delivered: node.samples_delivered,
        keyed_samples_delivered: node.keyed_samples_delivered,
        writers_matched: node.writers_matched,
        malformed: node.participant.stats().receive.malformed(),
    }
}

/// Seeds for the `participant` target: the datagrams a peer sent to the participant under
/// test in real sessions between two participants, recorded with when the local writer
/// wrote. `loss_every` drops every n-th datagram in each direction (0: none), so repairs,
/// GAPs and NACK_FRAGs are in the record.
pub fn participant_seed(steps: usize, large_every: usize, loss_every: usize) -> Vec<u8> {
    let mut now = Instant::ZERO;
    let mut local = FuzzNode::new(LOCAL_ID, now);
    let mut config = fuzz_participant_config(PEER_ID);
    // Small datagrams, so that 4 KiB samples go as DATA_FRAGs.
    config.max_datagram_size = 2400;
    let mut peer = FuzzNode::with_config(config, now);
    let local_locators: Vec<Locator> = {
        let c = local.participant.config();
        c.metatraffic_unicast
            .iter()
            .chain(&c.default_unicast)
            .copied()
            .collect()
    };
    let mut out = Vec::new();
    let mut pending_ctrl = 0u8;
    let mut sent = 0usize;
    let lost = |sent: &mut usize| {
        *sent += 1;
        loss_every != 0 && (*sent).is_multiple_of(loss_every)
    };
    for step in 0..steps {
        if step > 0 {
            now += STEP;
            pending_ctrl += 1;
        }
        let mut ctrl = 0;
        if step % 3 == 0 {
            ctrl |= CTRL_WRITE_SMALL;
        }
        if large_every != 0 && step % large_every == large_every / 2 {
            ctrl |= CTRL_WRITE_LARGE;
        }
        local.write(now, ctrl);
        pending_ctrl |= ctrl;
        peer.write(now, CTRL_WRITE_SMALL);
        if large_every != 0 && step % large_every == 0 {
            peer.write(now, CTRL_WRITE_LARGE);
        }
        // Exchange until both are quiet at this instant.
        let mut from_local = local.run_timers(now);
        let mut from_peer = peer.run_timers(now);
        while !(from_local.is_empty() && from_peer.is_empty()) {
            for d in std::mem::take(&mut from_local) {
                if !lost(&mut sent) {
                    let bytes = d.bytes.to_vec();
                    peer.participant
                        .handle_datagram(now, Some(local.locator()), &bytes);
                }
            }
            for d in std::mem::take(&mut from_peer) {
                if d.destinations.iter().any(|l| local_locators.contains(l)) && !lost(&mut sent) {
                    let bytes = d.bytes.to_vec();
                    push_participant_record(&mut out, pending_ctrl, &bytes);
                    pending_ctrl = 0;
                    local
                        .participant
                        .handle_datagram(now, Some(peer.locator()), &bytes);
                }
            }
            from_local = local.run_timers(now);
            from_peer = peer.run_timers(now);
        }
        local.take_events();
        peer.take_events();
        if pending_ctrl & CTRL_STEPS == CTRL_STEPS {
            push_participant_record(&mut out, pending_ctrl, &[]);
            pending_ctrl = 0;
        }
    }
    assert!(
        local.samples_delivered > 0 && peer.samples_delivered > 0,
        "the recorded session carried samples both ways"
    );
    out
}

// ---------------------------------------------------------------------------------------------
// msg_parser: .msg/.srv/.action files, then everything tools do with a parsed type

/// The packages the `msg_parser` target's files may refer to: a few, since the set is cloned
/// for every input.
fn msg_parser_base() -> &'static InterfaceSet {
    static SET: OnceLock<InterfaceSet> = OnceLock::new();
    SET.get_or_init(|| {
        let mut set = InterfaceSet::new();
        for file in roslite_msgs::INTERFACE_FILES {
            if !["builtin_interfaces", "std_msgs", "geometry_msgs"].contains(&file.package) {
                continue;
            }
            let kind = InterfaceKind::from_extension(file.kind).expect("vendored kinds are known");
            let added = if file.idl {
                set.add_idl_source(file.package, kind, file.name, file.text, file.name)
            } else {
                set.add_source(file.package, kind, file.name, file.text, file.name)
            };
            added.expect("the vendored definitions parse (roslite-msgs' tests)");
        }
        set
    })
}

/// The interface parsers and what follows them. The input is up to three files of package
/// `fuzz_pkg`, separated by NUL bytes, named `A`, `B` and `C`; the first byte picks each
/// file's kind (two bits per file: msg, srv, action, or a message written in IDL). Files may refer to each other
/// (`fuzz_pkg/B b`) and to `builtin_interfaces`, `std_msgs` and `geometry_msgs`. Each file that parses is added to a copy of
/// the built-in set; if the set resolves (`InterfaceSet::check`), every new message type is
/// hashed, given its default value, encoded, decoded and printed, and Rust code is generated
/// for the package.
pub fn msg_parser(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    const NAMES: [&str; 3] = ["A", "B", "C"];
    const PACKAGE: &str = "fuzz_pkg";
    let mut set = msg_parser_base().clone();
    let mut added = Vec::new();
    for (i, file_text) in text.split('\0').take(3).enumerate() {
        let bits = (selector >> (2 * i)) & 3;
        let kind = match bits {
            0 | 3 => InterfaceKind::Msg,
            1 => InterfaceKind::Srv,
            _ => InterfaceKind::Action,
        };
        let extension = if bits == 3 { "idl" } else { kind.extension() };
        let file = format!("{PACKAGE}/{}/{}.{extension}", kind.as_str(), NAMES[i]);
        let parsed = if bits == 3 {
            set.add_idl_source(PACKAGE, kind, NAMES[i], file_text, &file)
        } else {
            set.add_source(PACKAGE, kind, NAMES[i], file_text, &file)
        };
        if parsed.is_ok() {
            added.push(TypeName::new(PACKAGE, kind, NAMES[i]));
        }
    }
    if added.is_empty() || set.check().is_err() {
        return;
    }
    let messages: Vec<TypeName> = set
        .messages()
        .filter(|m| m.name.package == PACKAGE)
        .map(|m| m.name.clone())
        .collect();
    for ty in &messages {
        let _ = roslite_msg_gen::hash::type_hash(&set, ty);
        // A fixed array of a billion elements is a valid type whose value is gigabytes: only
        // build values of types that fit the fuzzer's memory limit.
        if value_elements(&set, ty, 0) > MAX_VALUE_ELEMENTS {
            continue;
        }
        let Ok(value) = dynamic::default_value(&set, ty) else {
            continue;
        };
        let _ = dynamic::to_yaml(&set, ty, &value, &YamlOptions::default());
        if let Ok(bytes) = dynamic::encode(&set, ty, &value, roslite_cdr::Endianness::Little) {
            let decoded = dynamic::decode(&set, ty, &bytes);
            assert!(
                decoded.is_ok(),
                "{ty}: the encoded default value does not decode: {decoded:?}"
            );
        }
    }
    let options = roslite_msg_gen::rust::RustOptions::for_user_crate();
    let _ = roslite_msg_gen::rust::generate_package(&set, PACKAGE, &options);
}

/// The most elements of fixed arrays a type's value may hold for `msg_parser` to build it.
const MAX_VALUE_ELEMENTS: u64 = 1 << 20;

/// How many values a default value of `ty` holds, counting each fixed array's elements
/// (saturating; types nested deeper than 64 levels count as too many).
fn value_elements(set: &InterfaceSet, ty: &TypeName, depth: usize) -> u64 {
    use roslite_msg_gen::ast::{BaseType, Collection};
    let Some(spec) = set.message(ty) else {
        return 1;
    };
    if depth > 64 {
        return u64::MAX;
    }
    spec.fields.iter().fold(1u64, |total, field| {
        let count = match field.ty.collection {
            Collection::Array(n) => u64::try_from(n).unwrap_or(u64::MAX),
            _ => 1,
        };
        let each = match &field.ty.base {
            BaseType::Named(inner) => value_elements(set, inner, depth + 1),
            _ => 1,
        };
        total.saturating_add(count.saturating_mul(each))
    })
}

// ---------------------------------------------------------------------------------------------
// yaml_message: message text, as `topic pub` reads it

/// Message text: the input starts with the type's index in [`GENERATED`]
/// ([`split_type_index`]), the rest is the YAML text `roslite topic pub` would read for it.
/// What reads is encoded, decoded and printed again.
pub fn yaml_message(data: &[u8]) {
    let Some((index, rest)) = split_type_index(data) else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let set = builtins();
    let (name, _) = GENERATED[index];
    let ty = TypeName::parse(name).expect("generated type names parse");
    let Ok(value) = dynamic::from_yaml(set, &ty, text) else {
        return;
    };
    let Ok(bytes) = dynamic::encode(set, &ty, &value, roslite_cdr::Endianness::Little) else {
        return;
    };
    let decoded = dynamic::decode(set, &ty, &bytes);
    let Ok(decoded) = decoded else {
        panic!("{name}: the encoding of a value read from YAML does not decode: {decoded:?}");
    };
    let _ = dynamic::to_yaml(set, &ty, &decoded, &YamlOptions::default());
}

// ---------------------------------------------------------------------------------------------
// yaml_params: parameter files and `-p name:=value`

/// Parameter files as `--params-file` and `roslite param load` read them, and values as
/// `-p name:=value` reads them. The input is the file's text; it is written to a file of this
/// process (the public entry point reads a path) and read for node `/ns/node` with and without
/// wildcard entries.
pub fn yaml_params(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = roslite::ParameterValue::from_yaml(text);
    let path = params_file_path();
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let name = path.to_str().expect("the temporary path is UTF-8");
    for use_wildcards in [true, false] {
        let _ = roslite::parameters_in_file(name, "/ns/node", use_wildcards);
    }
    // Gone after each input: a run (or a replay of the corpus) leaves nothing behind.
    let _ = std::fs::remove_file(&path);
}

/// One file per process and thread, under the temporary directory.
fn params_file_path() -> std::path::PathBuf {
    thread_local! {
        static PATH: std::path::PathBuf = std::env::temp_dir().join(format!(
            "roslite-fuzz-params-{}-{:?}.yaml",
            std::process::id(),
            std::thread::current().id()
        ));
    }
    PATH.with(Clone::clone)
}

/// What a host gives a node at most, as `roslite host` does by default: the snapshot target
/// reads everything against these caps.
const SNAPSHOT_CAPS: roslite_wasm::snapshot::Caps = roslite_wasm::snapshot::Caps {
    max_memory_bytes: 64 << 20,
    max_host_bytes: 64 << 20,
};

/// A moving WebAssembly node's state as the target host reads it from the network
/// (`roslite_wasm::snapshot` and `roslite_wasm::migrate`). Byte 0 picks what the rest is:
/// 0, a whole snapshot (header, compressed body, checksum); 1, a snapshot body, sealed here
/// under a valid header and checksum, as a sender that forges snapshots could; 2, the host
/// state section alone; 3, a journal, as sent alone to prepare a host. Properties: no panic
/// and no allocation beyond the caps; what is accepted encodes to bytes that read back to the
/// same bytes; every memory read a journal entry keeps lies within the memory cap (a replay
/// lays the reads out at their addresses).
pub fn snapshot(data: &[u8]) {
    use roslite_wasm::migrate::{decode_journal_bytes, encode_journal, HostState, Restoring};
    use roslite_wasm::snapshot::{decode, encode, seal, PAGE_BYTES};
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let max_memory = SNAPSHOT_CAPS.max_memory_bytes;
    let within_memory = |journal: &[roslite_wasm::journal::Entry]| {
        for entry in journal {
            for (at, bytes) in &entry.reads {
                assert!(u64::from(*at) + bytes.len() as u64 <= max_memory);
            }
        }
    };
    let host_state_reads_back = |state: &HostState| {
        within_memory(&state.journal);
        let bytes = state.encode();
        let again = HostState::decode(&bytes, max_memory).expect("an encoded host state reads");
        assert_eq!(again.encode(), bytes);
    };
    let restoring_reads_back = |restoring: &Restoring| {
        let snapshot = &restoring.snapshot;
        assert!(u64::from(snapshot.memory_pages) * u64::from(PAGE_BYTES) <= max_memory);
        let bytes = encode(snapshot);
        let again = decode(&bytes, SNAPSHOT_CAPS).expect("an encoded snapshot reads");
        assert_eq!(encode(&again), bytes);
        host_state_reads_back(&restoring.host);
    };
    match mode % 4 {
        0 => {
            if let Ok(restoring) = Restoring::decode(rest, SNAPSHOT_CAPS) {
                restoring_reads_back(&restoring);
            }
        }
        1 => {
            if let Ok(restoring) = Restoring::decode(&seal(&[0; 32], rest), SNAPSHOT_CAPS) {
                restoring_reads_back(&restoring);
            }
        }
        2 => {
            if let Ok(state) = HostState::decode(rest, max_memory) {
                host_state_reads_back(&state);
            }
        }
        _ => {
            if let Ok(journal) = decode_journal_bytes(rest, max_memory) {
                within_memory(&journal);
                let mut bytes = Vec::new();
                encode_journal(&journal, &mut bytes);
                let again = decode_journal_bytes(&bytes, max_memory).expect("a journal reads");
                let mut again_bytes = Vec::new();
                encode_journal(&again, &mut again_bytes);
                assert_eq!(again_bytes, bytes);
            }
        }
    }
}

/// Guest memory of the `guest_imports` target: pointers the input gives land in it.
const GUEST_MEMORY_BYTES: usize = 8192;

/// The imports `guest_imports` leaves out: those that wait for ever (a spin; signal handlers
/// for the whole process) or end what later inputs need (the shared context).
const IMPORTS_LEFT_OUT: &[&str] = &[
    "executor_spin",
    "executor_spin_threads",
    "install_signal_handlers",
    "context_shutdown",
];

/// The imports whose argument at that index is a time to wait: the target keeps it under a
/// millisecond, so that an input is a run of calls, not a wait.
const IMPORT_WAITS: &[(&str, usize)] = &[
    ("client_wait_for_service", 1),
    ("client_call", 3),
    ("executor_spin_once", 1),
    ("executor_spin_for", 1),
];

/// The context every `guest_imports` input's guest runs in (no network), and its handle in
/// the C ABI's table, made once: a context per input would start its threads per input.
fn detached_context() -> u64 {
    static CONTEXT: OnceLock<u64> = OnceLock::new();
    *CONTEXT.get_or_init(|| {
        let context = roslite::Context::new(roslite::ContextOptions {
            network: roslite::NetworkMode::Off,
            ..Default::default()
        })
        .expect("an offline context");
        roslite_c::handles::insert(roslite_c::handles::Object::Context(context))
    })
}

/// The imports `guest_imports` calls, in the order its selector byte picks them.
fn fuzzed_imports() -> Vec<&'static roslite_wasm::abi::ImportSignature> {
    roslite_wasm::abi::IMPORTS
        .iter()
        .filter(|i| !IMPORTS_LEFT_OUT.contains(&i.name))
        .collect()
}

/// A `guest_imports` input a well-behaved guest could make: a node with a publisher, a
/// subscription, a timer, a service, a client, a parameter and an executor, a message
/// published, a request sent, and everything released (the seed of its corpus).
pub fn guest_imports_seed() -> Vec<u8> {
    use roslite_msgs::{Message, Service};
    type Text = roslite_msgs::std_msgs::msg::String;
    type Trigger = roslite_msgs::std_srvs::srv::Trigger;
    let mut memory = vec![0u8; 2048];
    let mut put = |at: usize, bytes: &[u8]| memory[at..at + bytes.len()].copy_from_slice(bytes);
    let c = |text: &str| [text.as_bytes(), b"\0"].concat();
    put(8, &c("fuzz_node"));
    put(32, &c("chatter"));
    put(48, &c("trigger"));
    put(64, &c("gain"));
    // roslite_type at 96, roslite_service_type at 104.
    put(
        96,
        &[&256u32.to_le_bytes()[..], &320u32.to_le_bytes()].concat(),
    );
    put(
        104,
        &[
            &400u32.to_le_bytes()[..],
            &480u32.to_le_bytes(),
            &560u32.to_le_bytes(),
        ]
        .concat(),
    );
    put(256, &c(Text::TYPE_NAME));
    put(320, &c(Text::TYPE_HASH));
    put(400, &c(Trigger::TYPE_NAME));
    put(480, &c(<Trigger as Service>::Request::TYPE_HASH));
    put(560, &c(<Trigger as Service>::Response::TYPE_HASH));
    // A double parameter value (roslite_parameter_value: type 3, double at 16) at 640.
    put(640, &3u32.to_le_bytes());
    put(656, &0.5f64.to_le_bytes());
    // std_msgs/String "hi" in CDR at 1024.
    put(1024, &[0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0]);
    // std_srvs/Trigger's request (an empty structure: one byte) at 1040.
    put(1040, &[0, 1, 0, 0, 0]);

    let imports = fuzzed_imports();
    let mut out = (memory.len() as u16).to_le_bytes().to_vec();
    out.extend_from_slice(&memory);
    enum Arg {
        Handle(u8),
        At(u16),
        Raw(i64),
        Zero,
    }
    use Arg::*;
    let mut call = |name: &str, args: &[Arg]| {
        let index = imports
            .iter()
            .position(|i| i.name == name)
            .expect("an import");
        out.push(index as u8);
        for arg in args {
            match arg {
                Handle(h) => out.extend([0, *h]),
                At(at) => out.extend([&[1u8][..], &at.to_le_bytes()].concat()),
                Raw(v) => out.extend([&[2u8][..], &v.to_le_bytes()].concat()),
                Zero => out.push(3),
            }
        }
    };
    const OUT: u16 = 1536;
    call("context_init", &[Zero, Zero, At(OUT)]); // 1
    call("node_create", &[Handle(1), At(8), Zero, At(OUT)]); // 2
    call("qos_profile", &[Zero, At(128)]);
    call(
        "publisher_create",
        &[Handle(2), At(32), At(96), At(128), At(OUT)],
    ); // 3
    call(
        "subscription_create",
        &[Handle(2), Zero, At(32), At(96), At(128), Raw(1), At(OUT)],
    ); // 4
    call(
        "timer_create",
        &[Handle(2), Zero, Raw(1_000), Zero, Raw(2), At(OUT)],
    ); // 5
    call(
        "service_create",
        &[Handle(2), Zero, At(48), At(104), Zero, Raw(3), At(OUT)],
    ); // 6
    call("client_create", &[Handle(2), At(48), At(104), At(OUT)]); // 7
    call("parameter_declare", &[Handle(2), At(64), At(640), At(700)]);
    call("parameter_set", &[Handle(2), At(64), At(640)]);
    call("parameter_get", &[Handle(2), At(64), At(700)]);
    call("publish", &[Handle(3), At(1024), Raw(11)]);
    call(
        "client_send_request",
        &[Handle(7), At(1040), Raw(5), Raw(4), At(OUT)],
    );
    call("executor_create", &[Handle(1), At(OUT)]); // 8
    call("executor_add_node", &[Handle(8), Handle(2)]);
    // No spin: it would run the timer's callback, which cannot enter a guest here (a fault).
    call("node_count_publishers", &[Handle(2), At(32), At(OUT)]);
    for handle in (1..=8).rev() {
        call("release", &[Handle(handle)]);
    }
    out
}

/// A hostile WebAssembly guest's calls of the host's imports (`roslite_wasm::abi`), each run
/// as the host runs it (`roslite_wasm::journal::call_outside_engine`) for a guest of its own:
/// arguments and guest memory are the input's. The first two bytes give the length of the
/// memory image that follows (at address 0 of an 8 KiB memory); then each call is a byte
/// picking the import and, per argument, a byte picking a handle number under 16, an address in
/// the memory, eight raw bytes or zero. Properties: no panic, no wait beyond the fuzzer's
/// timeout, no allocation beyond its memory limit; the guest's objects go with it.
pub fn guest_imports(data: &[u8]) {
    guest_imports_session(data);
}

/// What [`guest_imports`] does, with each call's import and outcome (its status, or the fault
/// that would stop the guest).
pub fn guest_imports_session(data: &[u8]) -> Vec<(&'static str, Result<i32, String>)> {
    use roslite_wasm::abi::ValueType;
    use roslite_wasm::guest::{GuestShared, GuestState};
    use roslite_wasm::wasi::{WasiConfig, WasiState};
    let imports = fuzzed_imports();
    let mut outcomes = Vec::new();
    let Some((length, mut rest)) = data.split_first_chunk::<2>() else {
        return outcomes;
    };
    let length = (u16::from_le_bytes(*length) as usize)
        .min(rest.len())
        .min(GUEST_MEMORY_BYTES);
    let mut memory = vec![0u8; GUEST_MEMORY_BYTES];
    memory[..length].copy_from_slice(&rest[..length]);
    rest = &rest[length..];

    let context = detached_context();
    let running = roslite_c::handles::context(context).expect("the context stays");
    let shared = GuestShared::new("fuzz_guest".into(), running);
    let wasi = WasiState::new(WasiConfig::default()).expect("a guest with no grants");
    let mut state = GuestState::new(shared, context, wasi);
    let mut byte = || -> Option<u8> {
        let (&b, tail) = rest.split_first()?;
        rest = tail;
        Some(b)
    };
    for _ in 0..64 {
        let Some(pick) = byte() else { break };
        let import = imports[pick as usize % imports.len()];
        let mut args = Vec::with_capacity(import.params.len());
        for param in import.params {
            let kind = byte().unwrap_or(3);
            let value = match kind % 4 {
                0 => i64::from(byte().unwrap_or(0) % 16),
                1 => {
                    let at = u16::from_le_bytes([byte().unwrap_or(0), byte().unwrap_or(0)]);
                    i64::from(at) % GUEST_MEMORY_BYTES as i64
                }
                2 => {
                    let mut raw = [0u8; 8];
                    for b in &mut raw {
                        *b = byte().unwrap_or(0);
                    }
                    i64::from_le_bytes(raw)
                }
                _ => 0,
            };
            args.push(match param {
                ValueType::I32 => i64::from(value as i32),
                ValueType::I64 => value,
            });
        }
        if let Some(&(_, at)) = IMPORT_WAITS.iter().find(|(name, _)| *name == import.name) {
            args[at] = args[at].rem_euclid(1_000_000);
        }
        let outcome =
            roslite_wasm::journal::call_outside_engine(&mut state, import.name, &args, &mut memory)
                .unwrap_or_else(|| panic!("{} is listed but not callable", import.name));
        outcomes.push((import.name, outcome.map_err(|fault| fault.to_string())));
    }
    outcomes
}

// ---------------------------------------------------------------------------------------------
// shm_channel: a hostile reader against a shared-memory writer

/// A writer, an honest reader and a reader that writes anything into the channel it shares
/// with the writer (`roslite_shm::fuzzing::hostile_reader`, which checks the properties).
pub fn shm_channel(data: &[u8]) {
    roslite_shm::fuzzing::hostile_reader(data);
}

/// Seeds of `shm_channel`, by name: a keep-last and a keep-all hostile reader that follow the
/// protocol (the second falls behind), one that moves its ring's head out of range, and one
/// that gives back chunks it never got.
pub fn shm_channel_seeds() -> Vec<(&'static str, Vec<u8>)> {
    // Operation bytes of `roslite_shm::fuzzing::hostile_reader`.
    const SEND: u8 = 0;
    const TAKE: u8 = 1;
    const RELEASE: u8 = 2;
    const SCRIBBLE: u8 = 3;
    const GIVE_BACK: u8 = 4;
    const DRAIN: u8 = 5;
    let send = |len_64: u8| [SEND, len_64, 5];
    // `sends` sends of `len_64` x 64 bytes; after the i-th (from 1), a take when `take` divides
    // i, a release when `release` does, and the honest reader drains when `drain` does.
    let steady = |setup: u8, sends: usize, len_64: u8, [take, release, drain]: [usize; 3]| {
        let mut seed = vec![setup];
        for i in 1..=sends {
            seed.extend(send(len_64));
            for (every, op) in [(take, TAKE), (release, RELEASE), (drain, DRAIN)] {
                if i % every == 0 {
                    seed.push(op);
                }
            }
        }
        seed
    };
    // Setup 0x13: keep-last 4, quota 2; 0x1b: keep-all 4, quota 2.
    let keep_last = steady(0x13, 20, 2, [1, 2, 5]);
    let keep_all = steady(0x1b, 30, 64, [3, 6, 4]);

    // The ring's head (offset 64) set to 1 << 1: behind its tail once two were taken.
    let mut scribbled = vec![0x23]; // keep-last 4, quota 3
    for _ in 0..3 {
        scribbled.extend(send(1));
        scribbled.push(TAKE);
    }
    scribbled.extend([SCRIBBLE, 64, 0, 4, 1]);
    scribbled.extend(send(1));
    scribbled.extend(send(1));
    scribbled.push(DRAIN);
    let mut bogus = vec![0x43]; // and one sample kept for late joiners
    bogus.extend(send(1));
    bogus.extend([GIVE_BACK, 0, 0, GIVE_BACK, 1, 3, TAKE, GIVE_BACK, 0, 0]);
    bogus.extend(send(1));
    bogus.push(DRAIN);
    vec![
        ("keep_last_reader", keep_last),
        ("keep_all_reader_falls_behind", keep_all),
        ("head_moved_behind_tail", scribbled),
        ("releases_of_chunks_never_received", bogus),
    ]
}
