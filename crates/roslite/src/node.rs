//! Nodes: named groups of publishers, subscriptions and timers.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use roslite_executor::{
    CallbackGroup, CallbackGroupKind, Clock, Instant, Notify, Rate, SimClock, SteadyClock,
    Timer as TimerEntity, TimerCall, Waitable,
};
use roslite_msgs::Message;

use roslite_cdr::SharedBuf;

use crate::context::Context;
use crate::endpoints::filtering::FilterState;
use crate::endpoints::host::EndpointHost;
use crate::endpoints::pubsub::{
    Publisher, Subscription, SubscriptionCallback, SubscriptionOptions,
};
use crate::endpoints::serialized::{SerializedPublisher, SerializedSubscription, TypeInfo};
use crate::seam::{EndpointRecord, LocalPublisher, LocalSubscription, MessageInfo, SerializedSink};
use crate::vocabulary::graph::{GraphEndpoint, GraphEndpointKind, RosTopicKind};
use crate::vocabulary::log::Logger;
use crate::vocabulary::names::{self, NameError};
use crate::vocabulary::qos::{QosError, QosProfile};
use crate::vocabulary::time::{sim_instant, RosClockSource, Time};
use roslite_msgs::rcl_interfaces::msg::Log as LogMsg;
use roslite_msgs::rosgraph_msgs::msg::Clock as ClockMsg;

mod actions;
mod parameters;
mod services;
mod type_descriptions;

pub use crate::endpoints::type_cache::START_TYPE_DESCRIPTION_SERVICE;

/// Why a node or one of its entities could not be created.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NodeError {
    /// A node, namespace or topic name breaks a ROS 2 naming rule.
    Name(NameError),
    /// The QoS profile is invalid.
    Qos(QosError),
    /// A timer or rate period of zero.
    ZeroPeriod,
    /// A parameter override (`-p name:=value`) with a value of the wrong type.
    Parameter {
        name: String,
        value: String,
        expected: &'static str,
    },
    /// A `--params-file` or `-p` override that cannot be used.
    Parameters(crate::params::OverrideError),
    /// A content filter that does not compile for the subscription's type.
    ContentFilter(crate::vocabulary::content_filter::ContentFilterError),
}

impl fmt::Display for NodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Name(e) => e.fmt(f),
            Self::Qos(e) => e.fmt(f),
            Self::ZeroPeriod => f.write_str("timer period must be greater than zero"),
            Self::Parameter {
                name,
                value,
                expected,
            } => {
                write!(
                    f,
                    "parameter '{name}' has value '{value}', expected {expected}"
                )
            }
            Self::Parameters(e) => e.fmt(f),
            Self::ContentFilter(e) => e.fmt(f),
        }
    }
}

impl From<NameError> for NodeError {
    fn from(e: NameError) -> Self {
        NodeError::Name(e)
    }
}

impl std::error::Error for NodeError {}

impl From<crate::vocabulary::content_filter::ContentFilterError> for NodeError {
    fn from(e: crate::vocabulary::content_filter::ContentFilterError) -> Self {
        Self::ContentFilter(e)
    }
}

impl From<QosError> for NodeError {
    fn from(e: QosError) -> Self {
        Self::Qos(e)
    }
}

pub(crate) struct NodeShared {
    /// What the node's endpoints hold of it; registers the node with the backends while it
    /// lives.
    pub(crate) host: Arc<EndpointHost>,
    pub(crate) name: String,
    pub(crate) namespace: String,
    /// Every group of this node, the default one first.
    groups: Mutex<Vec<Arc<CallbackGroup>>>,
    /// Executors this node was added to, so groups created later join them too.
    executors: Mutex<Vec<Weak<roslite_executor::Executor>>>,
    /// Steady time, or simulated time under `use_sim_time`: what timers and rates run on.
    timer_clock: Arc<dyn Clock>,
    ros_clock: RosClockSource,
    pub(crate) logger: Logger,
}

impl NodeShared {
    /// A publisher of this node on `topic` (a fully qualified name) with a valid `qos`: what
    /// [`Node::create_publisher`] makes.
    pub(crate) fn publisher<T: Message>(&self, topic: String, qos: QosProfile) -> Publisher<T> {
        let publisher = Publisher::<T>::new(self.host.clone(), topic.clone(), qos);
        let (link_any, link) = publisher.link();
        let record = self.record(
            TypeInfo::of::<T>(),
            publisher.id(),
            qos,
            publisher.events(),
            link_any,
            None,
        );
        self.host
            .backends
            .publisher_added(LocalPublisher::new(&topic, record, link));
        publisher
    }

    /// As [`Self::publisher`], of serialized messages of type `ty`: also what endpoints of the
    /// node make for themselves (a service's introspection events).
    pub(crate) fn serialized_publisher(
        &self,
        topic: String,
        qos: QosProfile,
        ty: TypeInfo,
    ) -> SerializedPublisher {
        let publisher = SerializedPublisher::new(self.host.clone(), topic.clone(), qos, ty);
        let shared = publisher.shared.clone();
        let record = self.record(
            ty,
            shared.id,
            qos,
            shared.events.clone(),
            shared.clone(),
            None,
        );
        self.host
            .backends
            .publisher_added(LocalPublisher::new(&topic, record, shared));
        publisher
    }

    fn record(
        &self,
        ty: TypeInfo,
        id: u64,
        qos: QosProfile,
        events: Arc<crate::vocabulary::events::IncompatibleQos>,
        link: Arc<dyn std::any::Any + Send + Sync>,
        sink: Option<Arc<dyn SerializedSink>>,
    ) -> EndpointRecord {
        EndpointRecord {
            id,
            type_name: ty.type_name,
            dds_type_name: ty.dds_type_name,
            type_hash: ty.type_hash,
            key: ty.key,
            qos,
            node: names::join(&self.namespace, &self.name),
            node_id: self.host.node_id,
            events,
            logger: self.logger.clone(),
            link,
            sink,
        }
    }
}

impl Context {
    /// A node named `name` in the root namespace (both subject to `__node`/`__ns` remapping).
    ///
    /// # Errors
    /// [`NodeError::Name`] naming the rule a name breaks.
    pub fn create_node(&self, name: &str) -> Result<Node, NodeError> {
        self.create_node_with_namespace(name, "/")
    }

    /// A node in `namespace`; a relative namespace is taken from the root.
    ///
    /// # Errors
    /// [`NodeError::Name`] naming the rule a name breaks.
    pub fn create_node_with_namespace(
        &self,
        name: &str,
        namespace: &str,
    ) -> Result<Node, NodeError> {
        let mut name = name.to_owned();
        let mut namespace = if namespace.is_empty() || namespace.starts_with('/') {
            namespace.to_owned()
        } else {
            format!("/{namespace}")
        };
        if namespace.is_empty() {
            namespace.push('/');
        }
        let original_name = name.clone();
        for rule in &self.inner.args.remaps {
            if rule.node.as_deref().is_some_and(|n| n != original_name) {
                continue;
            }
            match rule.from.as_str() {
                "__node" | "__name" => name = rule.to.clone(),
                "__ns" => namespace = rule.to.clone(),
                _ => {}
            }
        }
        names::validate_node_name(&name)?;
        names::validate_namespace(&namespace)?;
        Node::new(self.clone(), name, namespace)
    }
}

/// A ROS 2 node. Cheap to clone; entities created from it keep it alive.
#[derive(Clone)]
pub struct Node {
    pub(crate) shared: Arc<NodeShared>,
    context: Context,
    /// The `/clock` subscription under `use_sim_time`.
    _clock_subscription: Option<Arc<Subscription<ClockMsg>>>,
    /// The `/rosout` publisher its logger publishes through (which holds it weakly).
    _rosout: Option<Arc<dyn crate::vocabulary::log::LogSink>>,
    pub(crate) parameters: Arc<crate::params::NodeParameters>,
    /// `~/get_type_description`, unless `start_type_description_service` is false.
    _type_description_service: Option<
        Arc<
            crate::endpoints::service::Service<
                roslite_msgs::type_description_interfaces::srv::GetTypeDescription,
            >,
        >,
    >,
}

impl Node {
    pub(crate) fn new(
        context: Context,
        name: String,
        namespace: String,
    ) -> Result<Self, NodeError> {
        let logger = Logger::new(if namespace == "/" {
            name.clone()
        } else {
            format!(
                "{}.{name}",
                namespace.trim_start_matches('/').replace('/', ".")
            )
        });
        let fqn = names::join(&namespace, &name);
        let overrides = crate::params::Overrides::for_node(context.args(), &fqn)
            .map_err(NodeError::Parameters)?;
        let use_sim_time = overrides
            .use_sim_time()
            .map_err(|value| NodeError::Parameter {
                name: "use_sim_time".into(),
                value,
                expected: "true or false",
            })?;
        // Declared after the node is made; a value of the wrong type is refused now, as
        // `use_sim_time`'s, rather than when the node is half made.
        overrides
            .bool_value(START_TYPE_DESCRIPTION_SERVICE)
            .map_err(|value| NodeError::Parameter {
                name: START_TYPE_DESCRIPTION_SERVICE.into(),
                value,
                expected: "true or false",
            })?;
        let sim_clock = use_sim_time.then(SimClock::new);
        let (timer_clock, ros_clock): (Arc<dyn Clock>, _) = match &sim_clock {
            Some(sim) => (sim.clone(), RosClockSource::Simulated(sim.clone())),
            None => (Arc::new(SteadyClock), RosClockSource::System),
        };
        let parameters = crate::params::NodeParameters::new(
            overrides,
            fqn,
            ros_clock.clone(),
            context.inner.parameter_services,
        );
        let default_group = CallbackGroup::new();
        let backends = &context.inner.backends;
        let host = Arc::new(EndpointHost::new(
            backends.clone(),
            backends.next_entity_id(),
            &namespace,
            &name,
            default_group.clone(),
        ));
        let shared = Arc::new(NodeShared {
            host,
            name,
            namespace,
            groups: Mutex::new(vec![default_group.clone()]),
            executors: Mutex::default(),
            timer_clock,
            ros_clock,
            logger,
        });
        let mut node = Self {
            shared,
            context,
            _clock_subscription: None,
            _rosout: None,
            parameters,
            _type_description_service: None,
        };
        if !node.context.args().disable_rosout_logs {
            // rcl's rosout publisher: every node's log lines, for `ros2 topic echo /rosout`
            // and rqt_console.
            let publisher = node.create_publisher::<LogMsg>("/rosout", QosProfile::ROSOUT)?;
            let sink: Arc<dyn crate::vocabulary::log::LogSink> = Arc::new(Rosout(publisher));
            node.shared.logger.attach_sink(Arc::downgrade(&sink));
            node._rosout = Some(sink);
        }
        if let Some(sim) = sim_clock {
            node.listen_to_sim_clock(&default_group);
            // rclcpp's ClockQoS: keep last 1, best effort, so any /clock publisher matches.
            let subscription = node.create_subscription(
                "/clock",
                QosProfile::keep_last(1).best_effort(),
                move |msg: &ClockMsg| sim.set(sim_instant(&msg.clock)),
            )?;
            node._clock_subscription = Some(Arc::new(subscription));
        }
        crate::params::NodeParameters::start(&node, use_sim_time)?;
        node._type_description_service = node.start_type_description_service()?;
        Ok(node)
    }

    fn listen_to_sim_clock(&self, group: &Arc<CallbackGroup>) {
        if let RosClockSource::Simulated(sim) = &self.shared.ros_clock {
            let listener: Arc<dyn Notify> = group.clone();
            sim.add_listener(Arc::downgrade(&listener));
        }
    }

    /// Joins `executor`, now and for callback groups created later.
    pub(crate) fn attach_executor(&self, executor: &Arc<roslite_executor::Executor>) {
        for group in self
            .shared
            .groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            executor.add_callback_group(group.clone());
        }
        let mut executors = self
            .shared
            .executors
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Executors made for one spin (rclcpp's `spin_some(node)`) come and go: a dead one's
        // entry would keep its allocation for the node's life.
        executors.retain(|e| e.strong_count() > 0);
        executors.push(Arc::downgrade(executor));
    }

    /// A new callback group; a multi-threaded executor runs its entities' callbacks one at a
    /// time (mutually exclusive) or in parallel (reentrant).
    pub fn create_callback_group(&self, kind: CallbackGroupKind) -> Arc<CallbackGroup> {
        let group = CallbackGroup::with_kind(kind);
        self.listen_to_sim_clock(&group);
        self.shared
            .groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(group.clone());
        let executors = self
            .shared
            .executors
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for executor in executors.iter().filter_map(Weak::upgrade) {
            executor.add_callback_group(group.clone());
        }
        group
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

    /// The clock timers and rates of this node run on: steady time, or simulated time under
    /// `use_sim_time`.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.shared.timer_clock
    }

    /// ROS time: the system clock, or the last `/clock` under `use_sim_time`.
    pub fn now(&self) -> Time {
        self.shared.ros_clock.now()
    }

    /// `CLOCK_MONOTONIC`, for measuring intervals.
    pub fn steady_now(&self) -> Instant {
        Instant::monotonic_now()
    }

    pub fn uses_sim_time(&self) -> bool {
        self.shared.ros_clock.is_simulated()
    }

    /// A loop rate on the node's timer clock (simulated under `use_sim_time`).
    ///
    /// # Errors
    /// [`NodeError::ZeroPeriod`].
    pub fn create_rate(&self, period: Duration) -> Result<Rate, NodeError> {
        if period.is_zero() {
            return Err(NodeError::ZeroPeriod);
        }
        Ok(match &self.shared.ros_clock {
            RosClockSource::Simulated(sim) => Rate::on_sim_clock(sim.clone(), period),
            RosClockSource::System => Rate::new(self.shared.timer_clock.clone(), period),
        })
    }

    /// The callback group that holds this node's entities unless another is given.
    pub fn default_callback_group(&self) -> &Arc<CallbackGroup> {
        &self.shared.host.default_group
    }

    /// Expands and remaps a topic name as this node sees it.
    ///
    /// # Errors
    /// [`NodeError::Name`] naming the rule broken.
    pub fn resolve_topic_name(&self, topic: &str) -> Result<String, NodeError> {
        let NodeShared {
            name, namespace, ..
        } = &*self.shared;
        let expanded = names::expand_topic_name(topic, name, namespace)?;
        Ok(names::remap_topic(
            &self.context.args().remaps,
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
        Ok(self.shared.publisher(topic, qos))
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
        let group = self.shared.host.default_group.clone();
        self.create_subscription_in(&group, topic, qos, callback)
    }

    /// As [`Self::create_subscription`], in a group from [`Self::create_callback_group`].
    ///
    /// # Errors
    /// [`NodeError`] for an invalid topic name or QoS profile.
    pub fn create_subscription_in<T: Message, Shape>(
        &self,
        group: &Arc<CallbackGroup>,
        topic: &str,
        qos: impl Into<QosProfile>,
        callback: impl SubscriptionCallback<T, Shape>,
    ) -> Result<Subscription<T>, NodeError> {
        // Without a filter, and without reaching the filter compiler: a program that never
        // filters does not carry it.
        let filter = FilterState::unfiltered(T::TYPE_NAME, T::TYPE_DESCRIPTION);
        self.subscription_with(topic, qos.into(), callback, group.clone(), filter)
    }

    /// As [`Self::create_subscription`], with rclcpp's `SubscriptionOptions`: a callback group
    /// and a content filter (`options.content_filter_options`), so that only messages for
    /// which the filter's expression holds reach the callback, whichever way they come
    /// ([`crate::content_filter`]):
    ///
    /// ```no_run
    /// # use roslite::{ContentFilterOptions, SubscriptionOptions};
    /// # use roslite::msgs::std_msgs::msg::Int32;
    /// # let ctx = roslite::Context::from_env()?;
    /// # let node = ctx.create_node("listener")?;
    /// let options = SubscriptionOptions {
    ///     content_filter_options: ContentFilterOptions::new("data > %0", ["10"]),
    ///     ..SubscriptionOptions::default()
    /// };
    /// let print = |m: Int32| println!("{}", m.data);
    /// let sub = node.create_subscription_with_options("numbers", 10, print, options)?;
    /// assert!(sub.is_cft_enabled());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`NodeError`] for an invalid topic name or QoS profile, and
    /// [`NodeError::ContentFilter`] for a filter that does not compile for `T`.
    pub fn create_subscription_with_options<T: Message, Shape>(
        &self,
        topic: &str,
        qos: impl Into<QosProfile>,
        callback: impl SubscriptionCallback<T, Shape>,
        options: SubscriptionOptions,
    ) -> Result<Subscription<T>, NodeError> {
        let filter = FilterState::new(
            T::TYPE_NAME,
            T::TYPE_DESCRIPTION,
            options.content_filter_options,
        )?;
        let group = options
            .callback_group
            .unwrap_or_else(|| self.shared.host.default_group.clone());
        self.subscription_with(topic, qos.into(), callback, group, filter)
    }

    /// A subscription in `group` whose messages meet `filter` first.
    fn subscription_with<T: Message, Shape>(
        &self,
        topic: &str,
        qos: QosProfile,
        callback: impl SubscriptionCallback<T, Shape>,
        group: Arc<CallbackGroup>,
        filter: FilterState,
    ) -> Result<Subscription<T>, NodeError> {
        qos.validate()?;
        let topic = self.resolve_topic_name(topic)?;
        let subscription = Subscription::new(
            self.shared.host.clone(),
            group,
            topic.clone(),
            qos,
            filter,
            callback,
        );
        let record = self.record(
            TypeInfo::of::<T>(),
            subscription.shared.id,
            qos,
            subscription.shared.events.clone(),
            subscription.shared.clone(),
            Some(subscription.shared.clone()),
        );
        self.add_subscription(&topic, record);
        Ok(subscription)
    }

    /// A timer calling `callback` every `period` on the node's clock (steady time, or simulated
    /// time under `use_sim_time`), on absolute deadlines. The callback takes no argument or a
    /// `&TimerCall` (expected and actual call time).
    ///
    /// # Errors
    /// [`NodeError::ZeroPeriod`].
    pub fn create_timer<Shape>(
        &self,
        period: Duration,
        callback: impl TimerCallback<Shape>,
    ) -> Result<Timer, NodeError> {
        let group = self.shared.host.default_group.clone();
        self.create_timer_in(&group, period, callback)
    }

    /// As [`Self::create_timer`], in a group from [`Self::create_callback_group`].
    ///
    /// # Errors
    /// [`NodeError::ZeroPeriod`].
    pub fn create_timer_in<Shape>(
        &self,
        group: &Arc<CallbackGroup>,
        period: Duration,
        callback: impl TimerCallback<Shape>,
    ) -> Result<Timer, NodeError> {
        self.make_timer(group, self.shared.timer_clock.clone(), period, callback)
    }

    /// A timer on steady time even under `use_sim_time` (rclcpp's wall timer).
    ///
    /// # Errors
    /// [`NodeError::ZeroPeriod`].
    pub fn create_wall_timer<Shape>(
        &self,
        period: Duration,
        callback: impl TimerCallback<Shape>,
    ) -> Result<Timer, NodeError> {
        let group = self.shared.host.default_group.clone();
        self.make_timer(&group, Arc::new(SteadyClock), period, callback)
    }

    /// As [`Self::create_wall_timer`], in a group from [`Self::create_callback_group`].
    ///
    /// # Errors
    /// [`NodeError::ZeroPeriod`].
    pub fn create_wall_timer_in<Shape>(
        &self,
        group: &Arc<CallbackGroup>,
        period: Duration,
        callback: impl TimerCallback<Shape>,
    ) -> Result<Timer, NodeError> {
        self.make_timer(group, Arc::new(SteadyClock), period, callback)
    }

    fn make_timer<Shape>(
        &self,
        group: &Arc<CallbackGroup>,
        clock: Arc<dyn Clock>,
        period: Duration,
        callback: impl TimerCallback<Shape>,
    ) -> Result<Timer, NodeError> {
        if period.is_zero() {
            return Err(NodeError::ZeroPeriod);
        }
        let entity = Arc::new(TimerEntity::new(clock, period, callback.into_fn()));
        let waitable: Arc<dyn Waitable> = entity.clone();
        group.add(Arc::downgrade(&waitable));
        Ok(Timer {
            entity,
            _node: self.shared.clone(),
        })
    }

    /// The ROS graph's publishers and subscriptions: with a network, every one discovered
    /// and this context's own; without, this context's.
    fn graph_endpoints(&self) -> Vec<GraphEndpoint> {
        self.context.graph().endpoints()
    }

    /// The ROS graph's topics with their types, sorted (rclcpp's `get_topic_names_and_types`):
    /// this context's and every one discovered in other processes. Services' request and
    /// reply topics are not listed.
    pub fn topic_names_and_types(&self) -> Vec<(String, Vec<String>)> {
        names_and_types(
            self.graph_endpoints()
                .into_iter()
                .filter(|e| e.topic_kind == RosTopicKind::Topic)
                .map(|e| (e.topic, e.type_name)),
        )
    }

    /// The ROS graph's services with their types, sorted (rclcpp's
    /// `get_service_names_and_types`): from every server's and client's request and reply
    /// endpoints, this context's and other processes'; without a network, this context's
    /// servers.
    pub fn service_names_and_types(&self) -> Vec<(String, Vec<String>)> {
        names_and_types(self.context.graph().service_names_and_types().into_iter())
    }

    /// The publishers on `topic` (resolved as this node resolves names, so `chatter` and
    /// `~/status` work), in this context and in other processes, with their node, type, QoS
    /// and the path this context uses with each (rclcpp's `get_publishers_info_by_topic`).
    /// Empty for a name that does not resolve.
    pub fn publishers_info_by_topic(&self, topic: &str) -> Vec<GraphEndpoint> {
        self.endpoints_on(topic, GraphEndpointKind::Publisher)
    }

    /// As [`Self::publishers_info_by_topic`], for subscriptions.
    pub fn subscriptions_info_by_topic(&self, topic: &str) -> Vec<GraphEndpoint> {
        self.endpoints_on(topic, GraphEndpointKind::Subscription)
    }

    /// How many publishers the graph has on `topic` (rclcpp's `count_publishers`).
    pub fn count_publishers(&self, topic: &str) -> usize {
        self.publishers_info_by_topic(topic).len()
    }

    /// How many subscriptions the graph has on `topic` (rclcpp's `count_subscribers`).
    pub fn count_subscribers(&self, topic: &str) -> usize {
        self.subscriptions_info_by_topic(topic).len()
    }

    /// Fully qualified names of the nodes in the graph, sorted (rclcpp's `get_node_names`):
    /// this context's and, with a network, those other ROS processes announce.
    pub fn node_names(&self) -> Vec<String> {
        let nodes = self.context.graph().node_names();
        let mut names: Vec<String> = nodes
            .into_iter()
            .map(|(namespace, name)| names::join(&namespace, &name))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    fn endpoints_on(&self, topic: &str, kind: GraphEndpointKind) -> Vec<GraphEndpoint> {
        let Ok(topic) = self.resolve_topic_name(topic) else {
            return Vec::new();
        };
        self.graph_endpoints()
            .into_iter()
            .filter(|e| e.kind == kind && e.topic_kind == RosTopicKind::Topic && e.topic == topic)
            .collect()
    }

    /// Tells the backends of a subscription (a record with a sink).
    fn add_subscription(&self, topic: &str, record: EndpointRecord) {
        if let Some(subscription) = LocalSubscription::new(topic, record) {
            self.shared.host.backends.subscription_added(subscription);
        }
    }

    fn record(
        &self,
        ty: TypeInfo,
        id: u64,
        qos: QosProfile,
        events: Arc<crate::vocabulary::events::IncompatibleQos>,
        link: Arc<dyn std::any::Any + Send + Sync>,
        sink: Option<Arc<dyn SerializedSink>>,
    ) -> EndpointRecord {
        self.shared.record(ty, id, qos, events, link, sink)
    }

    /// A publisher of serialized messages whose type is known only at run time (tools).
    ///
    /// # Errors
    /// [`NodeError`] for an invalid topic name or QoS profile.
    pub fn create_serialized_publisher(
        &self,
        topic: &str,
        ty: TypeInfo,
        qos: impl Into<QosProfile>,
    ) -> Result<SerializedPublisher, NodeError> {
        let qos = qos.into();
        qos.validate()?;
        let topic = self.resolve_topic_name(topic)?;
        Ok(self.shared.serialized_publisher(topic, qos, ty))
    }

    /// A subscription to serialized messages whose type is known only at run time (tools);
    /// `callback` gets each message's bytes (CDR with the encapsulation header).
    ///
    /// # Errors
    /// [`NodeError`] for an invalid topic name or QoS profile.
    pub fn create_serialized_subscription(
        &self,
        topic: &str,
        ty: TypeInfo,
        qos: impl Into<QosProfile>,
        callback: impl FnMut(&SharedBuf, &MessageInfo) + Send + 'static,
    ) -> Result<SerializedSubscription, NodeError> {
        let group = self.shared.host.default_group.clone();
        self.create_serialized_subscription_in(&group, topic, ty, qos, callback)
    }

    /// As [`Self::create_serialized_subscription`], in a group from
    /// [`Self::create_callback_group`].
    ///
    /// # Errors
    /// [`NodeError`] for an invalid topic name or QoS profile.
    pub fn create_serialized_subscription_in(
        &self,
        group: &Arc<CallbackGroup>,
        topic: &str,
        ty: TypeInfo,
        qos: impl Into<QosProfile>,
        callback: impl FnMut(&SharedBuf, &MessageInfo) + Send + 'static,
    ) -> Result<SerializedSubscription, NodeError> {
        let filter = FilterState::unfiltered(ty.type_name, ty.description);
        let callback = Box::new(callback);
        self.serialized_subscription_with(topic, ty, qos.into(), callback, group.clone(), filter)
    }

    /// As [`Self::create_serialized_subscription`], with a callback group and a content filter
    /// as [`Self::create_subscription_with_options`] takes them; a filter reads fields by
    /// `ty`'s description ([`TypeInfo::with_description`]).
    ///
    /// # Errors
    /// [`NodeError`] for an invalid topic name or QoS profile, and
    /// [`NodeError::ContentFilter`] for a filter that does not compile for the type (or a
    /// type without a description).
    pub fn create_serialized_subscription_with_options(
        &self,
        topic: &str,
        ty: TypeInfo,
        qos: impl Into<QosProfile>,
        callback: impl FnMut(&SharedBuf, &MessageInfo) + Send + 'static,
        options: SubscriptionOptions,
    ) -> Result<SerializedSubscription, NodeError> {
        let filter =
            FilterState::new(ty.type_name, ty.description, options.content_filter_options)?;
        let group = options
            .callback_group
            .unwrap_or_else(|| self.shared.host.default_group.clone());
        let callback = Box::new(callback);
        self.serialized_subscription_with(topic, ty, qos.into(), callback, group, filter)
    }

    /// A serialized subscription in `group` whose messages meet `filter` first.
    fn serialized_subscription_with(
        &self,
        topic: &str,
        ty: TypeInfo,
        qos: QosProfile,
        callback: crate::endpoints::serialized::SerializedCallback,
        group: Arc<CallbackGroup>,
        filter: FilterState,
    ) -> Result<SerializedSubscription, NodeError> {
        qos.validate()?;
        let topic = self.resolve_topic_name(topic)?;
        let subscription = SerializedSubscription::new(
            self.shared.host.clone(),
            group,
            topic.clone(),
            qos,
            ty,
            filter,
            callback,
        );
        let shared = subscription.shared.clone();
        let record = self.record(
            ty,
            shared.id,
            qos,
            shared.events.clone(),
            shared.clone(),
            Some(shared),
        );
        self.add_subscription(&topic, record);
        Ok(subscription)
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

    /// Moves the next call to `left` from now; the period stays (see
    /// [`roslite_executor::Timer::set_time_until_trigger`]).
    pub fn set_time_until_trigger(&self, left: Duration) {
        self.entity.set_time_until_trigger(left);
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

/// A node's `/rosout` publisher as its logger's sink.
struct Rosout(Publisher<LogMsg>);

impl crate::vocabulary::log::LogSink for Rosout {
    fn publish(
        &self,
        severity: crate::vocabulary::log::Severity,
        logger: &str,
        text: &str,
        stamp: Duration,
        at: &crate::vocabulary::log::Caller,
    ) {
        let message = LogMsg {
            stamp: roslite_msgs::builtin_interfaces::msg::Time {
                sec: i32::try_from(stamp.as_secs()).unwrap_or(i32::MAX),
                nanosec: stamp.subsec_nanos(),
            },
            level: severity as u8,
            name: logger.to_owned(),
            msg: text.to_owned(),
            file: at.location.file().to_owned(),
            function: at.function.to_owned(),
            line: at.location.line(),
        };
        // A log line that cannot be published is still on the console.
        let _ = self.0.publish(message);
    }
}

/// `(name, type)` pairs grouped by name, both sorted, each type once.
fn names_and_types(pairs: impl Iterator<Item = (String, String)>) -> Vec<(String, Vec<String>)> {
    let mut grouped: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, ty) in pairs {
        grouped.entry(name).or_default().insert(ty);
    }
    grouped
        .into_iter()
        .map(|(name, types)| (name, types.into_iter().collect()))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::{Context, ContextOptions, Executor};

    /// rclcpp's `spin_some(node)` makes an executor per call: the node's list of executors
    /// keeps those alive, not one entry per call for the node's life.
    #[test]
    fn executors_made_for_one_spin_leave_no_entry_behind() {
        let ctx = Context::new(ContextOptions::default()).unwrap();
        let node = ctx.create_node("spun").unwrap();
        let kept = Executor::new(&ctx);
        kept.add_node(&node);
        for _ in 0..1000 {
            let executor = Executor::new(&ctx);
            executor.add_node(&node);
            executor.spin_some();
        }
        let known = node.shared.executors.lock().unwrap().len();
        assert!(known <= 2, "{known} executors known");
    }
}
