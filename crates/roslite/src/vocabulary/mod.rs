//! The words every layer above speaks: names, QoS, time, logging, status events, queues,
//! the ROS graph's entries, content filters and the configuration of a context. Nothing here
//! knows about endpoints or backends.

pub mod config;
pub mod content_filter;
pub mod events;
pub mod graph;
pub mod limits;
pub mod log;
pub mod names;
pub mod qos;
pub(crate) mod queue;
pub(crate) mod snapshot;
pub mod time;
