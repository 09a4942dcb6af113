//! The C ABI of roslite (`include/roslite/roslite.h`): ROS 2 nodes written in C, and the base
//! that the C++ API and WebAssembly nodes build on.
//!
//! The ABI is shaped so that a WebAssembly guest can import it unchanged: objects are integer
//! handles, never pointers ([`handles`]); messages cross as CDR bytes tagged with a ROS type
//! name and RIHS01 hash; callbacks are (function, user data) pairs. Every function returns a
//! status, sets the thread's last error on failure ([`status`]) and catches any panic inside
//! roslite, so none crosses the boundary.
//!
//! The files: `status` (codes, last error, the guard around every call), `text` and
//! `convert` (what crosses the boundary, read and written), `types` (the message types the
//! runtime knows, `roslite_type_register`), `handles` (the handle table),
//! then one file per family: `context`, `node`, `pubsub`, `timer`, `client`, `events`,
//! `params`, `log`, `executor`, and `signals` (SIGINT/SIGTERM as a shutdown).

#![allow(clippy::missing_safety_doc)] // the header documents each function's contract

pub mod handles;
pub mod status;

mod client;
mod context;
mod convert;
mod events;
mod executor;
mod log;
mod node;
mod params;
mod pubsub;
mod signals;
mod text;
mod timer;
mod types;

pub use status::*;
