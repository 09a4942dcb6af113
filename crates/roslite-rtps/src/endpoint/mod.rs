//! RTPS writers and readers: the behaviour module of RTPS 2.5 §8.4.
//!
//! - [`Writer`] (`writer.rs`): a best-effort or reliable *stateful* writer (§8.4.7–§8.4.9).
//!   It keeps a history cache of [`HistoryKind`] depth (`history.rs`) and one `ReaderProxy` per
//!   matched reader (`proxies.rs`), pushes new samples, announces them with HEARTBEAT and
//!   answers ACKNACK/NACK_FRAG with repairs (fragmented again when larger than
//!   `max_data_size`) or GAP.
//! - [`Reader`] (`reader.rs`): a best-effort or reliable *stateful* reader (§8.4.10–§8.4.12)
//!   with one `WriterProxy` per matched writer. It delivers samples in order without
//!   duplicates, answers HEARTBEATs with ACKNACK/NACK_FRAG and reassembles DATA_FRAG
//!   (`fragments.rs`, §8.4.14.1).
//!
//! The simulation harness that exercises both over a lossy network is [`crate::sim`].
//!
//! Both are sans-IO, in the style of quinn-proto: inputs are `handle_*` methods and `write`,
//! outputs are [`Transmit`]s from `poll_transmit` and samples from [`Reader::poll_sample`],
//! and `poll_timeout` says when `handle_timeout` must be called next. Time is an argument.
//! After any input (including `add_reader`/`add_writer`, `write` and `handle_timeout`) the
//! caller drains `poll_transmit` until it returns `None`; `poll_timeout` covers only timers.
//!
//! Neither side trusts its peer. Ranges from the wire (HEARTBEAT `firstSN..lastSN`, GAP
//! `gapStart..gapList.base`, ACKNACK bases) stay intervals and are never iterated; sets are
//! bitmaps of at most 256 members; everything a peer can make us store is capped by
//! configuration. A misbehaving peer is counted in [`WriterStats`]/[`ReaderStats`] and its
//! message dropped, never reported as an error (docs/robustness.md §2).

mod drained;
mod fragments;
mod history;
mod key_hash;
mod numbers;
mod proxies;
mod range_set;
mod reader;
mod received;
mod transmit;
mod writer;

#[cfg(test)]
mod tests;

pub use drained::{Drained, Transmitter};
pub use fragments::{ByteBudget, SharedBudgets};
pub use history::{HistoryKind, MAX_KEPT_INSTANCES};
pub use key_hash::KeyHasher;
pub use proxies::{ReaderProxyInfo, WriterProxyInfo};
pub use reader::{Reader, ReaderConfig, ReaderStats};
pub use received::ReceivedSample;
pub use transmit::{Transmit, DATAGRAM_OVERHEAD};
pub use writer::{
    AdoptError, AdoptedSample, WriteError, Writer, WriterConfig, WriterStats,
    ACKNACK_COUNT_RESET_AFTER, BATCH_MAX_BYTES, KEEP_ALL_MAX_BYTES, MAX_INLINE_QOS,
};
