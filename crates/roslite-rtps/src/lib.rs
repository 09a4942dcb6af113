//! Sans-IO RTPS 2.5 (DDSI-RTPS, OMG formal/22-04-01) and the ROS 2 conventions on top of it:
//! the wire layer, the stateful writers and readers, SPDP/SEDP discovery and matching, and a
//! domain participant that ties them together, all driven by the caller's datagrams and clock.
//!
//! Layers, bottom up:
//! - [`types`]: GUIDs, entity ids, sequence numbers and their bitmap sets, locators,
//!   `Time_t`/`Duration_t` (RTPS 2.5 §8.2, §9.3); [`instant`]: the caller's monotonic time.
//! - [`wire`]: the RTPS header, the submessage header and one module per submessage kind,
//!   each a validated `Repr` with `parse`, `emit` and `buffer_len` (RTPS 2.5 §9.4).
//! - [`parameter_list`]: PL_CDR parameter lists and the parameter id table (RTPS 2.5
//!   §9.4.2.11, §9.6.2.2), used for inline QoS and discovery data.
//! - [`receiver`]: the message receiver of RTPS 2.5 §8.3.4, which walks a datagram, keeps the
//!   INFO_* state and counts every malformed input in [`ReceiveStats`].
//! - [`message`]: [`MessageBuilder`], which writes outgoing datagrams.
//! - [`endpoint`]: the behaviour module (RTPS 2.5 §8.4): best-effort and reliable stateful
//!   [`Writer`]s and [`Reader`]s with their history caches, HEARTBEAT/ACKNACK/GAP repair and
//!   DATA_FRAG fragmentation and reassembly.
//! - [`discovery`]: SPDP participant data and SEDP endpoint data (RTPS 2.5 §8.5) decoded from,
//!   and encoded to, parameter lists with the side-specific DDS defaults; endpoint matching
//!   with the DDS 1.4 request-vs-offered QoS rules; the Writer Liveliness Protocol; and the ROS 2
//!   conventions ([`discovery::ros`]: `rt/`/`rq/`/`rr/` topic and DDS type names, USER_DATA
//!   `enclave=`/`typehash=`, `ros_discovery_info`; see docs/ros2-interop.md).
//! - [`participant`]: [`Participant`], the domain participant as a sans-IO state machine.
//!   `handle_datagram`/`handle_timeout` and the API calls go in; `poll_transmit`,
//!   `poll_event` and `poll_timeout` come out. It runs SPDP announcements and leases, SEDP,
//!   matching, liveliness, and the routing of samples to its writers and readers.
//! - [`quirks`]: every vendor-specific deviation, as a named predicate.
//! - [`sim`]: a deterministic lossy network on a virtual clock, for tests of the state machines.
//!
//! Nothing here performs I/O, reads a clock, spawns a thread or draws randomness (enforced by
//! this crate's `clippy.toml`): time and datagrams are arguments, and the GUID prefix comes in
//! through [`ParticipantConfig`]. Parsing never panics and never allocates more than the input
//! can describe: lengths from the wire are checked against the remaining bytes and against the
//! caps in [`discovery::limits`] before anything is reserved, and ranges from the wire
//! (HEARTBEAT, GAP) stay intervals that are never iterated.
//!
//! The runtime (`roslite::backends::rtps`) owns one [`Participant`] and the UDP sockets: it feeds the
//! participant what arrives and sends what it polls.

#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::todo,
        clippy::unimplemented,
        clippy::arithmetic_side_effects
    )
)]

mod bytes;
pub mod discovery;
pub mod endpoint;
mod error;
pub mod instant;
pub mod message;
pub mod parameter_list;
pub mod participant;
pub mod quirks;
pub mod receiver;
pub mod sim;
pub mod types;
pub mod wire;

pub use roslite_cdr::Endianness;

pub use discovery::{
    ContentFilterProperty, EndpointData, EndpointKind, ParticipantData, SenderInfo,
};
pub use endpoint::{
    AdoptError, AdoptedSample, HistoryKind, Reader, ReaderConfig, ReaderProxyInfo, ReaderStats,
    ReceivedSample, Transmit, WriteError, Writer, WriterConfig, WriterProxyInfo, WriterStats,
};
pub use error::{BuildError, EmitError, ParseError};
pub use instant::Instant;
pub use message::{MessageBuilder, PayloadTail, WireBytes};
pub use parameter_list::{
    pid, Parameter, ParameterId, ParameterList, ParameterListWriter, ValueWriter,
};
pub use participant::{
    Datagram, EndpointOptions, EndpointQos, Event, Participant, ParticipantConfig, ReaderId,
    WriterId,
};
pub use receiver::{parse_message, ReceiveStats, ReceivedSubmessage, ReceiverState};
pub use types::{
    BuiltinEndpointSet, Count, Duration, EntityId, FragmentNumber, FragmentNumberSet, Guid,
    GuidPrefix, Locator, LocatorKind, ProtocolVersion, SampleIdentity, SequenceNumber,
    SequenceNumberSet, Time, VendorId,
};
pub use wire::Submessage;
