//! The backends that carry messages, requests and graph information between endpoints:
//! intra-process delivery, and the RTPS network with its same-host links to roslite peers
//! (shared memory, Unix sockets). Each implements [`crate::seam::Backend`].

pub(crate) mod intra;
pub mod rtps;
pub mod same_host;
