//! Nodes: named groups of publishers, subscriptions and timers.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use roslite_executor::{
    CallbackGroup, Clock, Instant, SteadyClock, Timer as TimerEntity, TimerCall, Waitable,
};
use roslite_msgs::Message;

use crate::context::{Context, ContextInner};
use crate::intra::{EndpointInfo, EndpointRecord};
use crate::log::Logger;
use crate::names::{self, NameError};
use crate::pubsub::{Publisher, Subscription, SubscriptionCallback};
use crate::qos::{QosError, QosProfile};

/// Why a node or one of its entities could not be created.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeError {
    /// A node, namespace or topic name breaks a ROS 2 naming rule.
    Name(NameError),
    /// The QoS profile is invalid.
    Qos(QosError),
    /// A timer period of zero.
    ZeroPeriod,
}

impl fmt::Display for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Name(e) => e.fmt(f),
            Self::Qos(e) => e.fmt(f),
            Self::ZeroPeriod => f.write_str("timer period must be greater than zero"),
        }
    }
}

impl std::error::Error for NodeError {}

impl From<QosError> for NodeError {
    fn from(e: QosError) -> Self {
        Self::Qos(e)
    }
}

pub(crate) struct NodeShared {
    pub(crate) context: Arc<ContextInner>,
    pub(crate) name: String,
    pub(crate) namespace: String,
    pub(crate) default_group: Arc<CallbackGroup>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) logger: Logger,
}

/// A ROS 2 node. Cheap to clone; entities created from it keep it alive.
#[derive(Clone)]
pub struct Node {
    pub(crate) shared: Arc<NodeShared>,
    context: Context,
}

impl Node {
    pub(crate) fn new(context: Context, name: String, namespace: String) -> Self {
        let logger = Logger::new(if namespace == "/" {
            name.clone()
        } else {
            format!(
                "{}.{name}",
                namespace.trim_start_matches('/').replace('/', ".")
            )
        });
        let shared = Arc::new(NodeShared {
            context: context.inner.clone(),
            name,
            namespace,
            default_group: CallbackGroup::new(),
            clock: Arc::new(SteadyClock),
            logger,
        });
        Self { shared, context }
    }

    pub fn name(&self) -> &str {
        &self.shared.name
    }

    pub fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// `/namespace/name`.
    pub fn fully_qualified_name(&self) -> String {
        names::join(&self.shared.namespace, &self.shared.name)
    }

    pub fn context(&self) -> &Context {
        &self.context
    }

    pub fn logger(&self) -> &Logger {
        &self.shared.logger
    }

    /// The node's clock (steady time).
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.shared.clock
    }

    pub fn now(&self) -> Instant {
        self.shared.clock.now()
    }

    /// The callback group that holds this node's entities.
    pub fn default_callback_group(&self) -> &Arc<CallbackGroup> {
        &self.shared.default_group
    }

    /// Expands and remaps a topic name as this node sees it.
    ///
    /// # Errors
    /// [`NodeError::Name`] naming the rule broken.
    pub fn resolve_topic_name(&self, topic: &str) -> Result<String, NodeError> {
        let NodeShared {
            name,
            namespace,
            context,
            ..
        } = &*self.shared;
        let expanded = names::expand_topic_name(topic, name, namespace)?;
        Ok(names::remap_topic(
            &context.args.remaps,
            &expanded,
            name,
            namespace,
        )?)
    }

    /// A publisher on `topic` (relative names resolve in the node's namespace).
    ///
    /// `qos` is a [`QosProfile`] or, as in rclcpp, just a history depth.
    ///
    /// # Errors
    /// [`NodeError`] for an invalid topic name or QoS profile.
    pub fn create_publisher<T: Message>(
        &self,
        topic: &str,
        qos: impl Into<QosProfile>,
    ) -> Result<Publisher<T>, NodeError> {
        let qos = qos.into();
        qos.validate()?;
        let topic = self.resolve_topic_name(topic)?;
        let publisher = Publisher::<T>::new(self.shared.clone(), topic.clone(), qos);
        let (link_any, link) = publisher.link();
        let record = self.record::<T>(publisher.id(), qos, publisher.events(), link_any);
        self.shared.context.bus.add_publisher(&topic, record, link);
        Ok(publisher)
    }

    /// A subscription on `topic` whose callback runs in the executor spinning this node.
    ///
    /// The callback may take the message by value (`|msg: T|`), by reference (`|msg: &T|`) or
    /// shared (`|msg: Arc<T>|`), each optionally followed by `&MessageInfo`.
    ///
    /// # Errors
    /// [`NodeError`] for an invalid topic name or QoS profile.
    pub fn create_subscription<T: Message, Shape>(
        &self,
        topic: &str,
        qos: impl Into<QosProfile>,
        callback: impl SubscriptionCallback<T, Shape>,
    ) -> Result<Subscription<T>, NodeError> {
        let qos = qos.into();
        qos.validate()?;
        let topic = self.resolve_topic_name(topic)?;
        let subscription = Subscription::new(
            self.shared.clone(),
            topic.clone(),
            qos,
            callback.into_boxed(),
        );
        let record = self.record::<T>(
            subscription.shared.id,
            qos,
            subscription.shared.events.clone(),
            subscription.shared.clone(),
        );
        self.shared.context.bus.add_subscription(&topic, record);
        Ok(subscription)
    }

    /// A timer calling `callback` every `period` on the node's clock, on absolute deadlines.
    /// The callback takes no argument or a `&TimerCall` (expected and actual call time).
    ///
    /// # Errors
    /// [`NodeError::ZeroPeriod`].
    pub fn create_timer<Shape>(
        &self,
        period: Duration,
        callback: impl TimerCallback<Shape>,
    ) -> Result<Timer, NodeError> {
        if period.is_zero() {
            return Err(NodeError::ZeroPeriod);
        }
        let entity = Arc::new(TimerEntity::new(
            self.shared.clock.clone(),
            period,
            callback.into_fn(),
        ));
        let waitable: Arc<dyn Waitable> = entity.clone();
        self.shared.default_group.add(Arc::downgrade(&waitable));
        Ok(Timer {
            entity,
            _node: self.shared.clone(),
        })
    }

    /// Topics known to this context with their types, sorted.
    pub fn topic_names_and_types(&self) -> Vec<(String, Vec<String>)> {
        self.shared.context.bus.topic_names_and_types()
    }

    /// Publishers on a fully qualified topic.
    pub fn publishers_info_by_topic(&self, topic: &str) -> Vec<EndpointInfo> {
        self.shared.context.bus.publishers_info(topic)
    }

    /// Subscriptions on a fully qualified topic.
    pub fn subscriptions_info_by_topic(&self, topic: &str) -> Vec<EndpointInfo> {
        self.shared.context.bus.subscriptions_info(topic)
    }

    fn record<T: Message>(
        &self,
        id: u64,
        qos: QosProfile,
        events: Arc<crate::events::IncompatibleQos>,
        link: Arc<dyn std::any::Any + Send + Sync>,
    ) -> EndpointRecord {
        EndpointRecord {
            id,
            type_name: T::TYPE_NAME,
            qos,
            node: self.fully_qualified_name(),
            events,
            logger: self.shared.logger.clone(),
            link,
        }
    }
}

/// A periodic timer. Dropping it stops it.
pub struct Timer {
    entity: Arc<TimerEntity>,
    _node: Arc<NodeShared>,
}

impl Timer {
    pub fn period(&self) -> Duration {
        self.entity.period()
    }

    pub fn cancel(&self) {
        self.entity.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.entity.is_cancelled()
    }

    /// Restarts the period from now (and un-cancels).
    pub fn reset(&self) {
        self.entity.reset();
    }

    pub fn time_until_trigger(&self) -> Duration {
        self.entity.time_until_trigger()
    }
}

/// Timer callback shapes: `|| ...` or `|call: &TimerCall| ...`.
pub trait TimerCallback<Shape>: Send + 'static {
    #[doc(hidden)]
    fn into_fn(self) -> Box<dyn FnMut(&TimerCall) + Send>;
}

/// Markers for [`TimerCallback`] shapes.
pub mod timer_shape {
    pub struct Plain;
    pub struct WithCall;
}

impl<F: FnMut() + Send + 'static> TimerCallback<timer_shape::Plain> for F {
    fn into_fn(mut self) -> Box<dyn FnMut(&TimerCall) + Send> {
        Box::new(move |_| self())
    }
}

impl<F: FnMut(&TimerCall) + Send + 'static> TimerCallback<timer_shape::WithCall> for F {
    fn into_fn(self) -> Box<dyn FnMut(&TimerCall) + Send> {
        Box::new(self)
    }
}
