//! A lifecycle node's publishers: they send only while their node is active.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::endpoints::pubsub::{PublishError, Publisher};
use crate::endpoints::serialized::SerializedPublisher;
use crate::vocabulary::log::Logger;
use roslite_msgs::Message;

/// Whether a managed entity is activated; shared by the entity and its node.
#[derive(Debug, Default)]
pub(crate) struct Activation {
    active: AtomicBool,
    /// A dropped message was reported since the entity was last deactivated.
    reported: AtomicBool,
}

impl Activation {
    pub(crate) fn new(active: bool) -> Arc<Self> {
        Arc::new(Self {
            active: AtomicBool::new(active),
            reported: AtomicBool::new(false),
        })
    }

    pub(crate) fn set(&self, active: bool) {
        if !self.active.swap(active, Ordering::AcqRel) && active {
            self.reported.store(false, Ordering::Release);
        }
    }

    pub(crate) fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Runs `send` while the entity is active. Otherwise the message is dropped and `Ok`
    /// answered, as rclcpp's lifecycle publisher does, and the first drop after each
    /// deactivation is logged, naming `topic`.
    fn send_or_drop(
        &self,
        logger: &Logger,
        topic: &str,
        send: impl FnOnce() -> Result<(), PublishError>,
    ) -> Result<(), PublishError> {
        if self.is_active() {
            return send();
        }
        if !self.reported.swap(true, Ordering::AcqRel) {
            logger.warn(format_args!(
                "a message published on '{topic}' was dropped: a lifecycle node's publishers send \
                 only while the node is active (activate it, e.g. `roslite lifecycle set <node> \
                 activate`)"
            ));
        }
        Ok(())
    }
}

/// A publisher of a [`super::LifecycleNode`] (rclcpp_lifecycle's `LifecyclePublisher`): it
/// sends while its node is `active` and drops what it is given otherwise, saying so once each
/// time the node leaves `active`. It is matched and visible on the graph in every state, as in
/// rclcpp. Cheap to clone: clones share one publisher.
pub struct LifecyclePublisher<T: Message> {
    publisher: Arc<Publisher<T>>,
    activation: Arc<Activation>,
    logger: Logger,
}

impl<T: Message> Clone for LifecyclePublisher<T> {
    fn clone(&self) -> Self {
        Self {
            publisher: self.publisher.clone(),
            activation: self.activation.clone(),
            logger: self.logger.clone(),
        }
    }
}

impl<T: Message> LifecyclePublisher<T> {
    pub(crate) fn new(
        publisher: Publisher<T>,
        activation: Arc<Activation>,
        logger: Logger,
    ) -> Self {
        Self {
            publisher: Arc::new(publisher),
            activation,
            logger,
        }
    }

    /// Sends `message` as [`Publisher::publish`] does while the node is active. Otherwise the
    /// message is dropped and `Ok` returned, as rclcpp does; the first drop after each
    /// deactivation logs a warning naming the topic.
    ///
    /// # Errors
    /// As [`Publisher::publish`].
    pub fn publish(&self, message: T) -> Result<(), PublishError> {
        let publisher = &self.publisher;
        self.activation
            .send_or_drop(&self.logger, publisher.topic_name(), || {
                publisher.publish(message)
            })
    }

    /// Whether messages are sent now: the node is active (or activating).
    pub fn is_activated(&self) -> bool {
        self.activation.is_active()
    }

    /// The publisher underneath, which sends in every state: for its statistics and events.
    pub fn inner(&self) -> &Publisher<T> {
        &self.publisher
    }
}

/// [`LifecyclePublisher`] for serialized messages of a run-time type (the C ABI's): made by
/// [`super::LifecycleNode::create_serialized_publisher`], it sends while its node is `active`
/// and drops what it is given otherwise, as [`LifecyclePublisher`] does.
pub struct SerializedLifecyclePublisher {
    publisher: SerializedPublisher,
    activation: Arc<Activation>,
    logger: Logger,
}

impl SerializedLifecyclePublisher {
    pub(crate) fn new(
        publisher: SerializedPublisher,
        activation: Arc<Activation>,
        logger: Logger,
    ) -> Self {
        Self {
            publisher,
            activation,
            logger,
        }
    }

    /// Sends `payload` as [`SerializedPublisher::publish`] does while the node is active;
    /// otherwise drops it and returns `Ok`, as [`LifecyclePublisher::publish`] does.
    ///
    /// # Errors
    /// As [`SerializedPublisher::publish`].
    pub fn publish(&self, payload: &[u8]) -> Result<(), PublishError> {
        let publisher = &self.publisher;
        self.activation
            .send_or_drop(&self.logger, publisher.topic_name(), || {
                publisher.publish(payload)
            })
    }

    /// Whether messages are sent now: the node is active (or activating).
    pub fn is_activated(&self) -> bool {
        self.activation.is_active()
    }

    /// The publisher underneath, which sends in every state: for its counts and events.
    pub fn inner(&self) -> &SerializedPublisher {
        &self.publisher
    }
}
