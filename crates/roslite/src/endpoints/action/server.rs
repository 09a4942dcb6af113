//! The action server: three services (`send_goal`, `cancel_goal`, `get_result`) and two
//! publishers (`feedback`, `status`) under `<action>/_action/`, and the goals they share.
//!
//! Ownership: [`ActionServer`] owns the services and the [`ServerCore`]; the services'
//! callbacks and every [`ServerGoalHandle`] hold the core weakly, so dropping the server
//! takes the action off the graph even while a user thread still holds a handle (whose calls
//! then report [`GoalHandleError::ServerGone`]). The goals lock is never held while a user
//! callback runs, a reply is sent, or status is published.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use roslite_executor::{CallbackGroup, Clock, Timer as TimerEntity, Waitable};
use roslite_msgs::action_msgs::msg::{GoalInfo, GoalStatus, GoalStatusArray};
use roslite_msgs::action_msgs::srv::{CancelGoal, CancelGoal_Request, CancelGoal_Response};
use roslite_msgs::builtin_interfaces::msg::Time as TimeMsg;
use roslite_msgs::{Action, Service as ServiceType};

use super::goal_state::{
    select_for_cancel, stamp_nanos, transition, CancelSelection, GoalEvent, GoalId, GoalStatusCode,
};
use crate::endpoints::introspection::{IntrospectionError, IntrospectionState};
use crate::endpoints::pubsub::{PublishError, Publisher};
use crate::endpoints::service::{Service, ServiceReply};
use crate::endpoints::type_cache::TypeRegistration;
use crate::vocabulary::log::Logger;
use crate::vocabulary::qos::QosProfile;
use crate::vocabulary::time::{RosClockSource, Time};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How long a goal's result stays available after it ended: rclpy's `result_timeout=10` and
/// rcl_action's default in the ROS 2 release this repository tests against (Foxy's kept
/// results 15 minutes).
pub const DEFAULT_RESULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a goal's feedback waits for its client's feedback subscription to be discovered
/// before it is dropped (a client that never subscribes, say a plain DDS program).
const FEEDBACK_PARKING_LIMIT: Duration = Duration::from_secs(30);
/// How often parked feedback looks whether its client's subscription is known now.
const FEEDBACK_PARKING_POLL: Duration = Duration::from_millis(5);
/// How long parked feedback waits, once the client's subscription is discovered, for every
/// subscription of the feedback topic to take the publisher's messages (a same-host link to
/// attach, an RTPS peer to acknowledge the publisher's announcement), before it goes anyway:
/// a peer that never acknowledges must not hold it.
const FEEDBACK_REACH_GRACE: Duration = Duration::from_secs(1);

/// How far a goal's client in another process is from receiving the goal's feedback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClientReach {
    /// Its feedback subscription is not discovered.
    Unknown,
    /// Discovered, but some subscription of the feedback topic does not take this
    /// publisher's messages yet.
    Discovered,
    /// Discovered, and every matched subscription takes the feedback.
    Reached,
}

/// The server's answer to a new goal (rclcpp_action's `GoalResponse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoalResponse {
    /// Accepted, and executing at once: the handle given to `on_accepted` is `EXECUTING`.
    AcceptAndExecute,
    /// Accepted, to be executed later: the handle is `ACCEPTED` until
    /// [`ServerGoalHandle::execute`].
    AcceptAndDefer,
    Reject,
}

/// The server's answer to a request to cancel one goal (rclcpp_action's `CancelResponse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelResponse {
    /// The goal moves to `CANCELING`; its execution sees [`ServerGoalHandle::is_canceling`]
    /// and ends it with [`ServerGoalHandle::canceled`] (or succeeds or aborts).
    Accept,
    Reject,
}

/// Why a goal handle could not do what it was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GoalHandleError {
    /// The goal's state does not allow the step (rcl_action's transition table: a goal is
    /// canceled only once canceling, ends only once, executes only from accepted).
    InvalidTransition {
        goal: GoalId,
        state: GoalStatusCode,
        event: GoalEvent,
    },
    /// Feedback for a goal that already ended.
    NotActive { goal: GoalId, state: GoalStatusCode },
    /// The action server was dropped.
    ServerGone,
    /// The feedback could not be published.
    Publish(PublishError),
}

impl std::fmt::Display for GoalHandleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidTransition { goal, state, event } => write!(
                f,
                "goal {goal} is {state}: it cannot {event} from there (a goal ends once; \
                 canceled needs an accepted cancel request first)"
            ),
            Self::NotActive { goal, state } => {
                write!(f, "goal {goal} already ended ({state}): no more feedback")
            }
            Self::ServerGone => f.write_str("the action server was dropped"),
            Self::Publish(e) => write!(f, "cannot publish feedback: {e}"),
        }
    }
}

impl std::error::Error for GoalHandleError {}

type OnGoal<A> = Box<dyn FnMut(GoalId, &<A as Action>::Goal) -> GoalResponse + Send>;
type OnCancel<A> = Box<dyn FnMut(&ServerGoalHandle<A>) -> CancelResponse + Send>;
type OnAccepted<A> = Box<dyn FnMut(ServerGoalHandle<A>) + Send>;
/// See [`ServerCore::client_listens`].
pub(crate) type ClientListens = Box<dyn Fn(&[u8; 12]) -> bool + Send + Sync>;

/// The three callbacks of `Node::create_action_server`.
pub(crate) struct ServerCallbacks<A: Action> {
    pub(crate) on_goal: OnGoal<A>,
    pub(crate) on_cancel: OnCancel<A>,
    pub(crate) on_accepted: OnAccepted<A>,
}

/// One goal as the server keeps it, from acceptance until `result_timeout` after its end.
struct ServerGoal<A: Action> {
    id: GoalId,
    /// When it was accepted (the send_goal response's stamp).
    stamp: TimeMsg,
    status: GoalStatusCode,
    result: Option<A::Result>,
    /// Result requests that came before the end, answered when it comes.
    waiting: Vec<ServiceReply<A::GetResult>>,
    /// When it ended, in the node's ROS time (simulated time under `use_sim_time`, as
    /// rcl_action measures result_timeout on the server's clock).
    ended_at: Option<Time>,
    handle: Weak<HandleInner<A>>,
    /// The participant (GUID prefix) of the client in another process that sent the goal,
    /// while this process has not discovered that client's feedback subscription. The
    /// feedback topic is volatile: what is published before the subscription matched never
    /// reaches it, and an execution that starts at once (as most do) would lose its first
    /// feedback to a client whose subscription announcement came late. It waits in `parked`.
    awaiting_client: Option<[u8; 12]>,
    /// Feedback waiting for the client's subscription: the newest ones, as many as the
    /// feedback topic's history keeps.
    parked: VecDeque<A::FeedbackMessage>,
    /// When the oldest message of `parked` was parked.
    parked_since: Option<Instant>,
    /// When the client's subscription was first seen discovered but not yet reached.
    client_discovered_at: Option<Instant>,
}

/// What the server's services and goal handles share.
pub(crate) struct ServerCore<A: Action> {
    name: String,
    weak_self: Weak<ServerCore<A>>,
    goals: Mutex<Vec<ServerGoal<A>>>,
    status_publisher: Publisher<GoalStatusArray>,
    feedback_publisher: Publisher<A::FeedbackMessage>,
    /// Whether a subscription of the feedback topic in the participant with this GUID prefix
    /// is discovered.
    client_listens: ClientListens,
    /// Held while feedback is published or released from parking, so a goal's feedback goes
    /// out in the order it was given, and before a result that answers a request.
    publishing_feedback: Mutex<()>,
    /// Whether the thread that releases parked feedback is running.
    releasing: Mutex<bool>,
    /// [`FEEDBACK_PARKING_LIMIT`] unless set (shorter in tests).
    feedback_parking_limit: std::sync::OnceLock<Duration>,
    /// Held from taking a status snapshot until it is published, so snapshots go out in
    /// the order they were taken.
    publishing_status: Mutex<()>,
    on_goal: Mutex<OnGoal<A>>,
    on_cancel: Mutex<OnCancel<A>>,
    on_accepted: Mutex<OnAccepted<A>>,
    clock: RosClockSource,
    result_timeout: Duration,
    logger: Logger,
}

impl<A: Action> ServerCore<A> {
    pub(crate) fn new(
        name: String,
        publishers: (Publisher<GoalStatusArray>, Publisher<A::FeedbackMessage>),
        callbacks: ServerCallbacks<A>,
        clock: RosClockSource,
        result_timeout: Duration,
        client_listens: ClientListens,
    ) -> Arc<Self> {
        let (status_publisher, feedback_publisher) = publishers;
        Arc::new_cyclic(|weak_self| Self {
            logger: Logger::new(format!("roslite.action{}", name.replace('/', "."))),
            name,
            weak_self: weak_self.clone(),
            goals: Mutex::new(Vec::new()),
            status_publisher,
            feedback_publisher,
            client_listens,
            publishing_feedback: Mutex::new(()),
            releasing: Mutex::new(false),
            feedback_parking_limit: std::sync::OnceLock::new(),
            publishing_status: Mutex::new(()),
            on_goal: Mutex::new(callbacks.on_goal),
            on_cancel: Mutex::new(callbacks.on_cancel),
            on_accepted: Mutex::new(callbacks.on_accepted),
            clock,
            result_timeout,
        })
    }

    /// The `send_goal` service's callback.
    pub(crate) fn handle_send_goal(
        &self,
        request: <A::SendGoal as ServiceType>::Request,
        reply: ServiceReply<A::SendGoal>,
    ) {
        let (uuid, goal) = A::split_send_goal_request(request);
        let id = GoalId::from_msg(&uuid);
        self.expire();
        let duplicate = lock(&self.goals).iter().any(|g| g.id == id);
        let response = if duplicate {
            self.logger
                .warn(format_args!("goal {id} is already known: rejected"));
            GoalResponse::Reject
        } else {
            (lock(&self.on_goal))(id, &goal)
        };
        let status = match response {
            GoalResponse::Reject => {
                reply.send(A::send_goal_response(false, TimeMsg::default()));
                return;
            }
            GoalResponse::AcceptAndExecute => GoalStatusCode::Executing,
            GoalResponse::AcceptAndDefer => GoalStatusCode::Accepted,
        };
        let client = reply.client_participant();
        let stamp = self.clock.now().to_msg();
        let inner = Arc::new(HandleInner {
            core: self.weak_self.clone(),
            id,
            goal,
        });
        lock(&self.goals).push(ServerGoal {
            id,
            stamp: stamp.clone(),
            status,
            result: None,
            waiting: Vec::new(),
            ended_at: None,
            handle: Arc::downgrade(&inner),
            awaiting_client: None,
            parked: VecDeque::new(),
            parked_since: None,
            client_discovered_at: None,
        });
        // The client learns of the acceptance before any feedback or status of the goal.
        reply.send(A::send_goal_response(true, stamp));
        // Looked up after the reply (it walks the graph); nothing publishes the goal's
        // feedback before `on_accepted` hands its handle out.
        if let Some(client) = client.filter(|c| self.client_reach(c) != ClientReach::Reached) {
            if let Some(goal) = lock(&self.goals).iter_mut().find(|g| g.id == id) {
                goal.awaiting_client = Some(client);
            }
        }
        self.publish_status();
        (lock(&self.on_accepted))(ServerGoalHandle { inner });
    }

    /// The `cancel_goal` service's callback.
    pub(crate) fn handle_cancel(
        &self,
        request: CancelGoal_Request,
        reply: ServiceReply<CancelGoal>,
    ) {
        self.expire();
        let info = request.goal_info;
        let selection = {
            let goals = lock(&self.goals);
            select_for_cancel(
                GoalId::from_msg(&info.goal_id),
                &info.stamp,
                goals
                    .iter()
                    .map(|g| (g.id, stamp_nanos(&g.stamp), g.status)),
            )
        };
        let (return_code, goals_canceling) = match selection {
            CancelSelection::UnknownGoal => (CancelGoal_Response::ERROR_UNKNOWN_GOAL_ID, vec![]),
            CancelSelection::GoalTerminated => (CancelGoal_Response::ERROR_GOAL_TERMINATED, vec![]),
            CancelSelection::Goals(ids) => {
                let mut canceling = Vec::new();
                for id in ids {
                    let Some(handle) = self.handle_of(id) else {
                        continue;
                    };
                    let answer = (lock(&self.on_cancel))(&handle);
                    if answer == CancelResponse::Accept
                        && self.step(id, GoalEvent::CancelGoal, None).is_ok()
                    {
                        canceling.push(self.info_of(id));
                    }
                }
                if canceling.is_empty() {
                    (CancelGoal_Response::ERROR_REJECTED, canceling)
                } else {
                    (CancelGoal_Response::ERROR_NONE, canceling)
                }
            }
        };
        reply.send(CancelGoal_Response {
            return_code,
            goals_canceling,
        });
    }

    /// The `get_result` service's callback: answered now if the goal ended (or is unknown:
    /// status UNKNOWN, as rcl_action answers), else when it ends.
    pub(crate) fn handle_get_result(
        &self,
        request: <A::GetResult as ServiceType>::Request,
        reply: ServiceReply<A::GetResult>,
    ) {
        let id = GoalId::from_msg(&A::get_result_request_goal_id(&request));
        self.expire();
        // As in `step`: feedback being released goes out first.
        let _order = lock(&self.publishing_feedback);
        let answer = {
            let mut goals = lock(&self.goals);
            match goals.iter_mut().find(|g| g.id == id) {
                // The result comes after the goal's feedback: a client may stop listening to
                // a goal's feedback once it has its result (rclpy does).
                Some(goal) => match &goal.result {
                    Some(result) if goal.parked.is_empty() => (goal.status, result.clone()),
                    _ => {
                        goal.waiting.push(reply);
                        return;
                    }
                },
                None => (GoalStatusCode::Unknown, A::Result::default()),
            }
        };
        reply.send(A::get_result_response(answer.0.code(), answer.1));
    }

    fn handle_of(&self, id: GoalId) -> Option<ServerGoalHandle<A>> {
        let weak = lock(&self.goals)
            .iter()
            .find(|g| g.id == id)
            .map(|g| g.handle.clone())?;
        weak.upgrade().map(|inner| ServerGoalHandle { inner })
    }

    fn info_of(&self, id: GoalId) -> GoalInfo {
        let goals = lock(&self.goals);
        let stamp = goals
            .iter()
            .find(|g| g.id == id)
            .map(|g| g.stamp.clone())
            .unwrap_or_default();
        GoalInfo {
            goal_id: id.to_msg(),
            stamp,
        }
    }

    fn status_of(&self, id: GoalId) -> GoalStatusCode {
        lock(&self.goals)
            .iter()
            .find(|g| g.id == id)
            .map_or(GoalStatusCode::Unknown, |g| g.status)
    }

    /// Moves goal `id` by `event`; an ending step stores `result` and answers the result
    /// requests waiting for it. Publishes the new status.
    fn step(
        &self,
        id: GoalId,
        event: GoalEvent,
        result: Option<A::Result>,
    ) -> Result<(), GoalHandleError> {
        // Parked feedback being released goes out before the result this step may answer.
        let _order = lock(&self.publishing_feedback);
        let (next, waiting) = {
            let mut goals = lock(&self.goals);
            let Some(goal) = goals.iter_mut().find(|g| g.id == id) else {
                // Only a goal past its result_timeout is gone, and it had ended.
                return Err(GoalHandleError::InvalidTransition {
                    goal: id,
                    state: GoalStatusCode::Unknown,
                    event,
                });
            };
            let next =
                transition(goal.status, event).ok_or(GoalHandleError::InvalidTransition {
                    goal: id,
                    state: goal.status,
                    event,
                })?;
            goal.status = next;
            let mut waiting = Vec::new();
            if next.is_terminal() {
                let result = result.unwrap_or_default();
                // With feedback parked, the requests wait for it to go out (see
                // `release_parked_feedback`).
                if goal.parked.is_empty() {
                    for reply in std::mem::take(&mut goal.waiting) {
                        waiting.push((reply, result.clone()));
                    }
                }
                goal.result = Some(result);
                goal.ended_at = Some(self.clock.now());
            }
            (next, waiting)
        };
        // Status first: a client that has its result also sees the goal ended.
        self.publish_status();
        for (reply, result) in waiting {
            reply.send(A::get_result_response(next.code(), result));
        }
        Ok(())
    }

    /// A goal whose every handle was dropped while it was active: aborted, as rclcpp does,
    /// so its clients get a result.
    fn abandon(&self, id: GoalId) {
        let status = self.status_of(id);
        if !status.is_active() {
            return;
        }
        self.logger.warn(format_args!(
            "goal {id} was {status} when its last handle was dropped: aborting it"
        ));
        if status == GoalStatusCode::Accepted {
            let _ = self.step(id, GoalEvent::Execute, None);
        }
        let _ = self.step(id, GoalEvent::Abort, None);
    }

    fn publish_feedback(&self, id: GoalId, feedback: A::Feedback) -> Result<(), GoalHandleError> {
        let _order = lock(&self.publishing_feedback);
        let (status, awaiting) = {
            let goals = lock(&self.goals);
            match goals.iter().find(|g| g.id == id) {
                Some(goal) => (
                    goal.status,
                    goal.awaiting_client.filter(|_| goal.parked.is_empty()),
                ),
                None => (GoalStatusCode::Unknown, None),
            }
        };
        if !status.is_active() {
            return Err(GoalHandleError::NotActive {
                goal: id,
                state: status,
            });
        }
        let message = A::feedback_message(id.to_msg(), feedback);
        // Looked up outside the goals lock (the graph has locks of its own); a goal with
        // feedback parked already parks this one behind it without looking.
        let reached =
            awaiting.is_none_or(|client| self.client_reach(&client) == ClientReach::Reached);
        let message = {
            let mut goals = lock(&self.goals);
            match goals.iter_mut().find(|g| g.id == id) {
                Some(goal) if goal.awaiting_client.is_some() => {
                    if reached && goal.parked.is_empty() {
                        goal.awaiting_client = None;
                        Some(message)
                    } else {
                        // Kept as the feedback topic's history would keep it.
                        self.feedback_publisher
                            .qos()
                            .history
                            .push(&mut goal.parked, message);
                        goal.parked_since.get_or_insert_with(Instant::now);
                        None
                    }
                }
                _ => Some(message),
            }
        };
        match message {
            Some(message) => self
                .feedback_publisher
                .publish(message)
                .map_err(GoalHandleError::Publish),
            None => {
                self.start_releasing_parked_feedback();
                Ok(())
            }
        }
    }

    /// How far `client` (a participant's GUID prefix) is from receiving feedback.
    fn client_reach(&self, client: &[u8; 12]) -> ClientReach {
        if !(self.client_listens)(client) {
            ClientReach::Unknown
        } else if self.feedback_publisher.acknowledged_subscription_count()
            < self.feedback_publisher.subscription_count()
        {
            ClientReach::Discovered
        } else {
            ClientReach::Reached
        }
    }

    fn parking_limit(&self) -> Duration {
        *self
            .feedback_parking_limit
            .get()
            .unwrap_or(&FEEDBACK_PARKING_LIMIT)
    }

    /// Starts the thread that releases parked feedback, unless it runs. It looks every
    /// [`FEEDBACK_PARKING_POLL`] and ends once nothing is parked.
    fn start_releasing_parked_feedback(&self) {
        let mut releasing = lock(&self.releasing);
        if *releasing {
            return;
        }
        let weak = self.weak_self.clone();
        let started = std::thread::Builder::new()
            .name("roslite-feedback".into())
            .spawn(move || loop {
                std::thread::sleep(FEEDBACK_PARKING_POLL);
                let Some(core) = weak.upgrade() else {
                    return;
                };
                if !core.release_parked_feedback() {
                    return;
                }
            });
        match started {
            Ok(_) => *releasing = true,
            Err(e) => self
                .logger
                .warn(format_args!("cannot start the feedback thread: {e}")),
        }
    }

    /// Publishes the parked feedback of every goal whose client receives it now (or whose
    /// subscription was discovered [`FEEDBACK_REACH_GRACE`] ago), and drops what waited
    /// [`FEEDBACK_PARKING_LIMIT`] for a subscription never discovered, saying so; then answers
    /// the result requests that waited for it. Whether feedback is still parked (when not,
    /// the releasing thread ends: it is marked stopped under the lock a new parking holds).
    fn release_parked_feedback(&self) -> bool {
        let _order = lock(&self.publishing_feedback);
        let parked: Vec<(GoalId, [u8; 12])> = lock(&self.goals)
            .iter()
            .filter(|g| !g.parked.is_empty())
            .filter_map(|g| Some((g.id, g.awaiting_client?)))
            .collect();
        for (id, client) in parked {
            let reach = self.client_reach(&client);
            let (messages, waiting, send) = {
                let mut goals = lock(&self.goals);
                let Some(goal) = goals.iter_mut().find(|g| g.id == id) else {
                    continue;
                };
                let send = match reach {
                    ClientReach::Reached => true,
                    ClientReach::Discovered => {
                        goal.client_discovered_at
                            .get_or_insert_with(Instant::now)
                            .elapsed()
                            >= FEEDBACK_REACH_GRACE
                    }
                    ClientReach::Unknown => false,
                };
                let expired = goal
                    .parked_since
                    .is_some_and(|since| since.elapsed() >= self.parking_limit());
                if !send && !expired {
                    continue;
                }
                goal.awaiting_client = None;
                goal.parked_since = None;
                let messages = std::mem::take(&mut goal.parked);
                let waiting: Vec<_> = match &goal.result {
                    Some(result) => std::mem::take(&mut goal.waiting)
                        .into_iter()
                        .map(|reply| (reply, goal.status, result.clone()))
                        .collect(),
                    None => Vec::new(),
                };
                (messages, waiting, send)
            };
            if send {
                for message in messages {
                    if let Err(e) = self.feedback_publisher.publish(message) {
                        self.logger.warn(format_args!(
                            "cannot publish the feedback of goal {id}: {e}"
                        ));
                    }
                }
            } else {
                self.logger.warn(format_args!(
                    "goal {id}: its client's feedback subscription was not discovered within \
                     {:?}; {} feedback messages dropped",
                    self.parking_limit(),
                    messages.len()
                ));
            }
            for (reply, status, result) in waiting {
                reply.send(A::get_result_response(status.code(), result));
            }
        }
        let mut releasing = lock(&self.releasing);
        let still_parked = lock(&self.goals).iter().any(|g| !g.parked.is_empty());
        *releasing = still_parked;
        still_parked
    }

    /// Publishes every kept goal's status (the `status` topic, transient local: a late client
    /// gets the latest list).
    fn publish_status(&self) {
        let _order = lock(&self.publishing_status);
        let status_list = lock(&self.goals)
            .iter()
            .map(|g| GoalStatus {
                goal_info: GoalInfo {
                    goal_id: g.id.to_msg(),
                    stamp: g.stamp.clone(),
                },
                status: g.status.code(),
            })
            .collect();
        if let Err(e) = self
            .status_publisher
            .publish(GoalStatusArray { status_list })
        {
            self.logger
                .warn(format_args!("cannot publish the goal status: {e}"));
        }
    }

    /// Forgets goals that ended `result_timeout` ago or more, in the node's ROS time. Run by
    /// the expiry timer, and before each request is handled, so that an answer never depends
    /// on when the timer last ran.
    pub(crate) fn expire(&self) {
        let now = self.clock.now();
        let expired = {
            let mut goals = lock(&self.goals);
            let before = goals.len();
            // A goal whose feedback is parked stays until it went out (or was dropped), and
            // the result requests waiting behind it are answered.
            goals.retain(|g| {
                !g.parked.is_empty()
                    || g.ended_at
                        .is_none_or(|ended| now.saturating_since(ended) < self.result_timeout)
            });
            before != goals.len()
        };
        if expired {
            self.publish_status();
        }
    }

    fn goal_count(&self) -> usize {
        lock(&self.goals).len()
    }
}

/// The services of an action server, created by the node from the core's handlers.
pub(crate) struct ServerServices<A: Action> {
    pub(crate) send_goal: Service<A::SendGoal>,
    pub(crate) cancel_goal: Service<CancelGoal>,
    pub(crate) get_result: Service<A::GetResult>,
}

/// Serves one ROS 2 action; its callbacks run in the executor spinning its node. Dropping it
/// stops serving (goals still executing on user threads then get
/// [`GoalHandleError::ServerGone`]).
pub struct ActionServer<A: Action> {
    core: Arc<ServerCore<A>>,
    services: ServerServices<A>,
    _expiry: Arc<TimerEntity>,
    /// The action type in the node's type cache (rcl_action registers it beside the types of
    /// the action's services and topics).
    _type_registration: Option<TypeRegistration>,
}

impl<A: Action> ActionServer<A> {
    /// `timer_clock`: the node's timers' (simulated time under `use_sim_time`).
    pub(crate) fn new(
        core: Arc<ServerCore<A>>,
        services: ServerServices<A>,
        group: &Arc<CallbackGroup>,
        timer_clock: Arc<dyn Clock>,
        action_type: Option<TypeRegistration>,
    ) -> Self {
        // Ended goals are checked twice per result_timeout, so one is forgotten between one
        // and one and a half timeouts after its end (and requests check first themselves).
        let period = (core.result_timeout / 2).max(Duration::from_millis(1));
        let weak = Arc::downgrade(&core);
        let expiry = Arc::new(TimerEntity::new(timer_clock, period, move |_| {
            if let Some(core) = weak.upgrade() {
                core.expire();
            }
        }));
        let waitable: Arc<dyn Waitable> = expiry.clone();
        group.add(Arc::downgrade(&waitable));
        Self {
            core,
            services,
            _expiry: expiry,
            _type_registration: action_type,
        }
    }

    /// Publishes the calls of the action's three services (`send_goal`, `cancel_goal`,
    /// `get_result`) each on its `_service_event` topic, or stops: rclpy's and rclcpp's
    /// `configure_introspection` of an action server, as rcl_action configures them.
    ///
    /// # Errors
    /// [`IntrospectionError::Qos`] for an invalid `qos`.
    pub fn configure_introspection(
        &self,
        qos: QosProfile,
        state: IntrospectionState,
    ) -> Result<(), IntrospectionError> {
        self.services
            .send_goal
            .configure_introspection(qos, state)?;
        self.services
            .cancel_goal
            .configure_introspection(qos, state)?;
        self.services.get_result.configure_introspection(qos, state)
    }

    /// The fully qualified action name.
    pub fn action_name(&self) -> &str {
        &self.core.name
    }

    /// The names of its three services: `send_goal`, `cancel_goal`, `get_result`.
    pub fn service_names(&self) -> [&str; 3] {
        [
            self.services.send_goal.service_name(),
            self.services.cancel_goal.service_name(),
            self.services.get_result.service_name(),
        ]
    }

    /// Goals kept now: active ones and ended ones within their `result_timeout`.
    pub fn goal_count(&self) -> usize {
        self.core.goal_count()
    }
}

struct HandleInner<A: Action> {
    core: Weak<ServerCore<A>>,
    id: GoalId,
    goal: A::Goal,
}

impl<A: Action> Drop for HandleInner<A> {
    fn drop(&mut self) {
        if let Some(core) = self.core.upgrade() {
            core.abandon(self.id);
        }
    }
}

/// One accepted goal on the server side (rclcpp_action's `ServerGoalHandle`). Clones share
/// the goal; it can be sent to a thread of the application to execute the goal there. When
/// the last clone is dropped with the goal still active, the goal is aborted.
pub struct ServerGoalHandle<A: Action> {
    inner: Arc<HandleInner<A>>,
}

impl<A: Action> Clone for ServerGoalHandle<A> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<A: Action> ServerGoalHandle<A> {
    pub fn goal_id(&self) -> GoalId {
        self.inner.id
    }

    pub fn goal(&self) -> &A::Goal {
        &self.inner.goal
    }

    fn core(&self) -> Result<Arc<ServerCore<A>>, GoalHandleError> {
        self.inner.core.upgrade().ok_or(GoalHandleError::ServerGone)
    }

    /// The goal's state now (`Unknown` once the server is gone or the goal expired).
    pub fn status(&self) -> GoalStatusCode {
        self.inner
            .core
            .upgrade()
            .map_or(GoalStatusCode::Unknown, |core| {
                core.status_of(self.inner.id)
            })
    }

    /// Whether a cancel request for the goal was accepted: its execution should stop and
    /// call [`Self::canceled`].
    pub fn is_canceling(&self) -> bool {
        self.status() == GoalStatusCode::Canceling
    }

    /// Accepted, executing or canceling.
    pub fn is_active(&self) -> bool {
        self.status().is_active()
    }

    pub fn is_executing(&self) -> bool {
        self.status() == GoalStatusCode::Executing
    }

    /// Starts a goal accepted with [`GoalResponse::AcceptAndDefer`].
    ///
    /// # Errors
    /// [`GoalHandleError::InvalidTransition`] unless the goal is accepted;
    /// [`GoalHandleError::ServerGone`].
    pub fn execute(&self) -> Result<(), GoalHandleError> {
        self.core()?.step(self.inner.id, GoalEvent::Execute, None)
    }

    /// Publishes feedback for this goal on `<action>/_action/feedback`.
    ///
    /// # Errors
    /// [`GoalHandleError::NotActive`] after the goal ended; [`GoalHandleError::Publish`];
    /// [`GoalHandleError::ServerGone`].
    pub fn publish_feedback(&self, feedback: A::Feedback) -> Result<(), GoalHandleError> {
        self.core()?.publish_feedback(self.inner.id, feedback)
    }

    /// Ends the goal as succeeded with `result`.
    ///
    /// # Errors
    /// [`GoalHandleError::InvalidTransition`] unless executing or canceling;
    /// [`GoalHandleError::ServerGone`].
    pub fn succeed(&self, result: A::Result) -> Result<(), GoalHandleError> {
        self.core()?
            .step(self.inner.id, GoalEvent::Succeed, Some(result))
    }

    /// Ends the goal as aborted with `result`.
    ///
    /// # Errors
    /// As [`Self::succeed`].
    pub fn abort(&self, result: A::Result) -> Result<(), GoalHandleError> {
        self.core()?
            .step(self.inner.id, GoalEvent::Abort, Some(result))
    }

    /// Ends a canceling goal as canceled with `result`.
    ///
    /// # Errors
    /// [`GoalHandleError::InvalidTransition`] unless canceling;
    /// [`GoalHandleError::ServerGone`].
    pub fn canceled(&self, result: A::Result) -> Result<(), GoalHandleError> {
        self.core()?
            .step(self.inner.id, GoalEvent::Canceled, Some(result))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use roslite_msgs::test_msgs::action::{
        Fibonacci, Fibonacci_Feedback, Fibonacci_FeedbackMessage, Fibonacci_GetResult_Request,
        Fibonacci_GetResult_Response, Fibonacci_Goal, Fibonacci_Result, Fibonacci_SendGoal_Request,
        Fibonacci_SendGoal_Response,
    };
    use roslite_msgs::unique_identifier_msgs::msg::UUID;

    use super::*;
    use crate::endpoints::action::action_feedback_qos;
    use crate::seam::service::{ReplyChannel, RequestId};
    use crate::{Context, ContextOptions, Executor, NetworkMode};

    /// The serialized replies one request got.
    type Replies = Arc<Mutex<Vec<Vec<u8>>>>;

    /// A reply channel recording what is sent, for a request of a client in participant
    /// `[7; 12]`.
    struct Recorded(Replies);

    impl ReplyChannel for Recorded {
        fn send(self: Box<Self>, payload: Vec<u8>) {
            lock(&self.0).push(payload);
        }

        fn request_id(&self) -> Option<RequestId> {
            let mut writer_guid = [7; 16];
            writer_guid[12..].copy_from_slice(&[0, 0, 4, 3]);
            Some(RequestId {
                writer_guid,
                sequence_number: 1,
            })
        }
    }

    fn recorded() -> (Replies, Box<dyn ReplyChannel>) {
        let replies = Arc::new(Mutex::new(Vec::new()));
        (replies.clone(), Box::new(Recorded(replies)))
    }

    /// A server whose goals come from a client in another participant, `[7; 12]`, and
    /// whose graph shows that client's feedback subscription once `listens` is set; the
    /// feedback it publishes reaches `feedback` (a subscription in this context), spun by
    /// `executor`.
    struct Rig {
        _ctx: Context,
        _subscription: crate::Subscription<Fibonacci_FeedbackMessage>,
        executor: Executor,
        core: Arc<ServerCore<Fibonacci>>,
        listens: Arc<AtomicBool>,
        feedback: Arc<Mutex<Vec<Vec<i32>>>>,
        handles: Arc<Mutex<Vec<ServerGoalHandle<Fibonacci>>>>,
    }

    fn rig(parking_limit: Duration) -> Rig {
        let ctx = Context::new(ContextOptions {
            network: NetworkMode::Off,
            ..Default::default()
        })
        .unwrap();
        let node = ctx.create_node("parking").unwrap();
        let topic = "/fibonacci/_action/feedback";
        let feedback = Arc::new(Mutex::new(Vec::new()));
        let subscription = {
            let feedback = feedback.clone();
            node.create_subscription(
                topic,
                action_feedback_qos(),
                move |m: Fibonacci_FeedbackMessage| {
                    lock(&feedback).push(m.feedback.sequence.to_vec());
                },
            )
            .unwrap()
        };
        let publishers = (
            node.create_publisher(
                "/fibonacci/_action/status",
                super::super::action_status_qos(),
            )
            .unwrap(),
            node.create_publisher(topic, action_feedback_qos()).unwrap(),
        );
        let handles = Arc::new(Mutex::new(Vec::new()));
        let listens = Arc::new(AtomicBool::new(false));
        let callbacks = ServerCallbacks::<Fibonacci> {
            on_goal: Box::new(|_, _| GoalResponse::AcceptAndExecute),
            on_cancel: Box::new(|_| CancelResponse::Accept),
            on_accepted: {
                let handles = handles.clone();
                Box::new(move |handle| lock(&handles).push(handle))
            },
        };
        let client_listens: ClientListens = {
            let listens = listens.clone();
            Box::new(move |client| *client == [7; 12] && listens.load(Ordering::SeqCst))
        };
        let core = ServerCore::new(
            "/fibonacci".into(),
            publishers,
            callbacks,
            RosClockSource::System,
            DEFAULT_RESULT_TIMEOUT,
            client_listens,
        );
        core.feedback_parking_limit.set(parking_limit).unwrap();
        let executor = Executor::new(&ctx);
        executor.add_node(&node);
        Rig {
            _ctx: ctx,
            _subscription: subscription,
            executor,
            core,
            listens,
            feedback,
            handles,
        }
    }

    impl Rig {
        /// Sends goal `uuid` as the remote client; its accepting reply.
        fn send_goal(&self, uuid: u8) -> Fibonacci_SendGoal_Response {
            let (replies, channel) = recorded();
            self.core.handle_send_goal(
                Fibonacci_SendGoal_Request {
                    goal_id: UUID { uuid: [uuid; 16] },
                    goal: Fibonacci_Goal { order: 3 },
                },
                ServiceReply::into_channel(channel),
            );
            let reply = lock(&replies).pop().expect("a send_goal reply");
            roslite_cdr::from_bytes(&reply).unwrap()
        }

        /// Asks for goal `uuid`'s result as the remote client; where its reply will be.
        fn get_result(&self, uuid: u8) -> Replies {
            let (replies, channel) = recorded();
            self.core.handle_get_result(
                Fibonacci_GetResult_Request {
                    goal_id: UUID { uuid: [uuid; 16] },
                },
                ServiceReply::into_channel(channel),
            );
            replies
        }

        /// Runs the goal that was accepted last: two feedback messages, then success.
        fn execute_last_goal(&self) {
            let handle = lock(&self.handles).pop().expect("an accepted goal");
            for sequence in [vec![0, 1, 1], vec![0, 1, 1, 2]] {
                handle
                    .publish_feedback(Fibonacci_Feedback {
                        sequence: sequence.into(),
                    })
                    .unwrap();
            }
            handle
                .succeed(Fibonacci_Result {
                    sequence: vec![0, 1, 1, 2].into(),
                })
                .unwrap();
        }

        /// Spins until `done` or 5 s; whether it got there.
        fn spin_until(&self, done: impl Fn(&Self) -> bool) -> bool {
            let start = std::time::Instant::now();
            while start.elapsed() < Duration::from_secs(5) {
                self.executor.spin_some();
                if done(self) {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            false
        }
    }

    fn result_of(replies: &Replies) -> Option<Fibonacci_GetResult_Response> {
        lock(replies)
            .first()
            .map(|bytes| roslite_cdr::from_bytes(bytes).unwrap())
    }

    /// A goal executed before this process discovered its client's feedback subscription
    /// keeps its feedback until the subscription is discovered, then publishes it in order;
    /// the result request that came meanwhile is answered after it.
    #[test]
    fn feedback_waits_for_the_clients_subscription_and_the_result_waits_for_the_feedback() {
        let rig = rig(FEEDBACK_PARKING_LIMIT);
        assert!(rig.send_goal(1).accepted);
        rig.execute_last_goal();
        let result = rig.get_result(1);
        std::thread::sleep(Duration::from_millis(50));
        rig.executor.spin_some();
        assert!(
            lock(&rig.feedback).is_empty(),
            "published before the client listened"
        );
        assert!(
            result_of(&result).is_none(),
            "the result overtook the feedback"
        );
        rig.listens.store(true, Ordering::SeqCst);
        assert!(rig.spin_until(|r| lock(&r.feedback).len() == 2));
        assert_eq!(*lock(&rig.feedback), [vec![0, 1, 1], vec![0, 1, 1, 2]]);
        let result = result_of(&result).expect("the result after the feedback");
        assert_eq!(result.status, GoalStatusCode::Succeeded.code());
        assert_eq!(result.result.sequence.to_vec(), [0, 1, 1, 2]);
        // A later goal of a client already discovered publishes at once.
        assert!(rig.send_goal(2).accepted);
        rig.execute_last_goal();
        rig.executor.spin_some();
        assert_eq!(lock(&rig.feedback).len(), 4);
        assert_eq!(
            result_of(&rig.get_result(2)).map(|r| r.status),
            Some(GoalStatusCode::Succeeded.code())
        );
    }

    /// A client whose feedback subscription is never discovered: its feedback is dropped
    /// after the parking limit, and its result request is answered then.
    #[test]
    fn feedback_for_a_client_never_discovered_is_dropped_after_the_limit() {
        let rig = rig(Duration::from_millis(100));
        assert!(rig.send_goal(1).accepted);
        rig.execute_last_goal();
        let result = rig.get_result(1);
        assert!(rig.spin_until(|_| result_of(&result).is_some()));
        assert_eq!(
            result_of(&result).map(|r| r.status),
            Some(GoalStatusCode::Succeeded.code())
        );
        rig.listens.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(50));
        rig.executor.spin_some();
        assert!(lock(&rig.feedback).is_empty(), "dropped feedback went out");
        assert!(lock(&rig.core.goals).iter().all(|g| g.parked.is_empty()));
    }
}
