//! The endpoints a node creates: publishers and subscriptions (typed and serialized),
//! services and clients. They reach the rest of the process through their node's
//! `EndpointHost` (`host.rs`), never through the context or a backend.

pub mod action;
pub(crate) mod filtering;
pub(crate) mod host;
pub mod introspection;
pub mod pubsub;
pub mod serialized;
pub mod serialized_service;
pub mod service;
pub(crate) mod type_cache;
