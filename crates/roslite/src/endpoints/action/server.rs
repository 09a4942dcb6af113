//! The action server: three services (`send_goal`, `cancel_goal`, `get_result`) and two
//! publishers (`feedback`, `status`) under `<action>/_action/`, and the goals they share.
//!
//! Ownership: [`ActionServer`] owns the services and the [`ServerCore`]; the services'
//! callbacks and every [`ServerGoalHandle`] hold the core weakly, so dropping the server
//! takes the action off the graph even while a user thread still holds a handle (whose calls
//! then report [`GoalHandleError::ServerGone`]). The goals lock is never held while a user
//! callback runs, a reply is sent, or status is published.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use roslite_executor::{CallbackGroup, Clock, Timer as TimerEntity, Waitable};
use roslite_msgs::action_msgs::msg::{GoalInfo, GoalStatus, GoalStatusArray};
use roslite_msgs::action_msgs::srv::{CancelGoal, CancelGoal_Request, CancelGoal_Response};
use roslite_msgs::builtin_interfaces::msg::Time as TimeMsg;
use roslite_msgs::{Action, Service as ServiceType};

use super::goal_state::{
    select_for_cancel, stamp_nanos, transition, CancelSelection, GoalEvent, GoalId, GoalStatusCode,
};
use crate::endpoints::pubsub::{PublishError, Publisher};
use crate::endpoints::service::{Service, ServiceReply};
use crate::vocabulary::log::Logger;
use crate::vocabulary::time::{RosClockSource, Time};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How long a goal's result stays available after it ended: rclpy's `result_timeout=10` and
/// rcl_action's default in the ROS 2 release this repository tests against (Foxy's kept
/// results 15 minutes).
pub const DEFAULT_RESULT_TIMEOUT: Duration = Duration::from_secs(10);

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
}

/// What the server's services and goal handles share.
pub(crate) struct ServerCore<A: Action> {
    name: String,
    weak_self: Weak<ServerCore<A>>,
    goals: Mutex<Vec<ServerGoal<A>>>,
    status_publisher: Publisher<GoalStatusArray>,
    feedback_publisher: Publisher<A::FeedbackMessage>,
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
    ) -> Arc<Self> {
        let (status_publisher, feedback_publisher) = publishers;
        Arc::new_cyclic(|weak_self| Self {
            logger: Logger::new(format!("roslite.action{}", name.replace('/', "."))),
            name,
            weak_self: weak_self.clone(),
            goals: Mutex::new(Vec::new()),
            status_publisher,
            feedback_publisher,
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
        });
        // The client learns of the acceptance before any feedback or status of the goal.
        reply.send(A::send_goal_response(true, stamp));
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
        let answer = {
            let mut goals = lock(&self.goals);
            match goals.iter_mut().find(|g| g.id == id) {
                Some(goal) => match &goal.result {
                    Some(result) => (goal.status, result.clone()),
                    None => {
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
                for reply in std::mem::take(&mut goal.waiting) {
                    waiting.push((reply, result.clone()));
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
        let status = self.status_of(id);
        if !status.is_active() {
            return Err(GoalHandleError::NotActive {
                goal: id,
                state: status,
            });
        }
        self.feedback_publisher
            .publish(A::feedback_message(id.to_msg(), feedback))
            .map_err(GoalHandleError::Publish)
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
            goals.retain(|g| {
                g.ended_at
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
}

impl<A: Action> ActionServer<A> {
    /// `timer_clock`: the node's timers' (simulated time under `use_sim_time`).
    pub(crate) fn new(
        core: Arc<ServerCore<A>>,
        services: ServerServices<A>,
        group: &Arc<CallbackGroup>,
        timer_clock: Arc<dyn Clock>,
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
        }
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
