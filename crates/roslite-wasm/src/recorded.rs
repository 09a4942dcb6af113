//! A recorded import call: one entry of a guest's journal (crate::journal), which a snapshot
//! carries and another host replays.

/// One journaled call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub import: String,
    /// Its arguments, each widened to `i64`.
    pub args: Vec<i64>,
    /// What it read of guest memory: (address, bytes).
    pub reads: Vec<(u32, Vec<u8>)>,
    /// How many handles the guest had been given before it: handles given meanwhile without
    /// an import (a service request's responder) are skipped on replay, so every object gets
    /// its old number back.
    pub handles_before: u32,
}
