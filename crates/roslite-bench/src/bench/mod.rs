//! One module per bench. Each imports the toolkit (`crate::toolkit`) and never another bench;
//! a bench's own parts are its submodules (`rtt_sweep::loan`, `service::{model, plot,
//! report}`), which import the toolkit and the bench's shared data, never the bench's entry.

pub mod action;
pub mod footprint;
pub mod intra;
pub mod large;
pub mod linetrace;
pub mod migrate;
pub mod rtt;
pub mod rtt_sweep;
pub mod scale;
pub mod service;
pub mod soak;
pub mod throughput;
pub mod timer;
pub mod wasm;
