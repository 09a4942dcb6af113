//! The action client: clients of the three services and subscriptions to the `feedback` and
//! `status` topics of `<action>/_action/`.
//!
//! A goal's acceptance and result arrive as service replies, on whichever thread receives
//! them, so [`GoalFuture::wait`] and [`ResultFuture::wait`] block without anyone spinning the
//! client's node. Feedback and status arrive on subscriptions: feedback callbacks run in the
//! executor spinning the client's node, as in rclcpp and rclpy.
//!
//! The client learns that the server went away from its status subscription: when the last
//! matched status publisher goes (the server was dropped, its process ended, or discovery
//! lost it), every goal still waiting for acceptance or a result fails with
//! [`ActionError::ServerGone`] (rclcpp's futures would wait forever).

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant as StdInstant};

use roslite_msgs::action_msgs::msg::{GoalInfo, GoalStatusArray};
use roslite_msgs::action_msgs::srv::{CancelGoal, CancelGoal_Request, CancelGoal_Response};
use roslite_msgs::builtin_interfaces::msg::Time as TimeMsg;
use roslite_msgs::Action;

use super::goal_state::{GoalId, GoalStatusCode};
use super::promise::Promise;
use crate::endpoints::host::EndpointHost;
use crate::endpoints::introspection::{IntrospectionError, IntrospectionState};
use crate::endpoints::pubsub::Subscription;
use crate::endpoints::service::{CallError, Client};
use crate::endpoints::type_cache::TypeRegistration;
use crate::seam::service::RequestKey;
use crate::vocabulary::events::MatchedStatus;
use crate::vocabulary::qos::QosProfile;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why an action call produced no goal, result or cancel answer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ActionError {
    /// The server rejected the goal.
    Rejected { action: String, goal: GoalId },
    /// The action server went away (dropped, its process ended, or discovery lost it) before
    /// it answered.
    ServerGone { action: String, goal: GoalId },
    /// Nothing within the time given to a blocking wait.
    Timeout { action: String, waited: Duration },
    /// A service call of the action failed (no server in a process without network, a goal
    /// too large to serialize, a reply that did not decode).
    Call(CallError),
    /// The action client was dropped before the answer came.
    ClientGone,
}

impl std::fmt::Display for ActionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rejected { action, goal } => {
                write!(f, "action server '{action}' rejected goal {goal}")
            }
            Self::ServerGone { action, goal } => write!(
                f,
                "action server '{action}' went away before goal {goal} got its answer"
            ),
            Self::Timeout { action, waited } => write!(
                f,
                "no answer from action server '{action}' within {waited:?} (call \
                 wait_for_action_server() first; is its node spun?)"
            ),
            Self::Call(e) => write!(f, "action service call failed: {e}"),
            Self::ClientGone => f.write_str("the action client was dropped"),
        }
    }
}

impl std::error::Error for ActionError {}

/// A goal's end as the server reported it (rclcpp_action's `WrappedResult`).
pub struct WrappedResult<A: Action> {
    pub goal_id: GoalId,
    /// Succeeded, canceled or aborted (`Unknown` if the server no longer knew the goal).
    pub status: GoalStatusCode,
    pub result: A::Result,
}

impl<A: Action> Clone for WrappedResult<A> {
    fn clone(&self) -> Self {
        Self {
            goal_id: self.goal_id,
            status: self.status,
            result: self.result.clone(),
        }
    }
}

impl<A: Action> std::fmt::Debug for WrappedResult<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WrappedResult")
            .field("goal_id", &self.goal_id)
            .field("status", &self.status)
            .field("result", &self.result)
            .finish()
    }
}

type FeedbackCallback<A> = Box<dyn FnMut(GoalId, <A as Action>::Feedback) + Send>;
type Acceptance = Arc<Promise<Result<TimeMsg, ActionError>>>;
type ResultPromise<A> = Arc<Promise<Result<WrappedResult<A>, ActionError>>>;

/// A goal this client sent, kept while a future or handle of it lives.
struct ClientGoal<A: Action> {
    status: GoalStatusCode,
    feedback: Option<FeedbackCallback<A>>,
    accepted: Acceptance,
    result: ResultPromise<A>,
    /// The pending send_goal or get_result call, forgotten when the server goes away.
    call: Option<RequestKey>,
}

/// What the client's futures, handles and subscription callbacks share.
pub(crate) struct ClientCore<A: Action> {
    name: String,
    weak_self: Weak<ClientCore<A>>,
    goals: Mutex<HashMap<GoalId, ClientGoal<A>>>,
    send_goal: Client<A::SendGoal>,
    cancel_goal: Client<CancelGoal>,
    get_result: Client<A::GetResult>,
}

impl<A: Action> ClientCore<A> {
    pub(crate) fn new(
        name: String,
        send_goal: Client<A::SendGoal>,
        cancel_goal: Client<CancelGoal>,
        get_result: Client<A::GetResult>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|weak_self| Self {
            name,
            weak_self: weak_self.clone(),
            goals: Mutex::new(HashMap::new()),
            send_goal,
            cancel_goal,
            get_result,
        })
    }

    fn send(
        &self,
        goal: A::Goal,
        feedback: Option<FeedbackCallback<A>>,
    ) -> Result<GoalFuture<A>, ActionError> {
        let id = GoalId::random();
        let accepted: Acceptance = Arc::new(Promise::new());
        let result: ResultPromise<A> = Arc::new(Promise::new());
        // Registered before the request leaves: feedback may come before the acceptance.
        lock(&self.goals).insert(
            id,
            ClientGoal {
                status: GoalStatusCode::Unknown,
                feedback,
                accepted: accepted.clone(),
                result: result.clone(),
                call: None,
            },
        );
        let tracker = Arc::new(GoalTracker {
            core: self.weak_self.clone(),
            id,
            result,
        });
        let weak = self.weak_self.clone();
        let sent =
            self.send_goal
                .call_with(A::send_goal_request(id.to_msg(), goal), move |reply| {
                    if let Some(core) = weak.upgrade() {
                        core.handle_goal_response(id, reply);
                    }
                });
        match sent {
            Ok(key) => {
                if let Some(entry) = lock(&self.goals).get_mut(&id) {
                    if entry.accepted.value().is_none() {
                        entry.call = Some(key);
                    }
                }
                Ok(GoalFuture { tracker, accepted })
            }
            Err(e) => {
                lock(&self.goals).remove(&id);
                Err(ActionError::Call(e))
            }
        }
    }

    fn handle_goal_response(
        &self,
        id: GoalId,
        reply: Result<<A::SendGoal as roslite_msgs::Service>::Response, CallError>,
    ) {
        let Some(accepted) = lock(&self.goals).get(&id).map(|g| g.accepted.clone()) else {
            return;
        };
        let outcome = match reply {
            Ok(response) => {
                let (is_accepted, stamp) = A::split_send_goal_response(response);
                if is_accepted {
                    Ok(stamp)
                } else {
                    Err(ActionError::Rejected {
                        action: self.name.clone(),
                        goal: id,
                    })
                }
            }
            Err(e) => Err(ActionError::Call(e)),
        };
        let is_accepted = outcome.is_ok();
        if let Some(entry) = lock(&self.goals).get_mut(&id) {
            entry.call = None;
            if is_accepted && entry.status == GoalStatusCode::Unknown {
                entry.status = GoalStatusCode::Accepted;
            }
        }
        if is_accepted {
            // Asked at once, as rclcpp does with a result callback: the server answers when
            // the goal ends, and keeps the result for result_timeout only.
            self.request_result(id);
        } else if let Err(e) = &outcome {
            self.fail_result(id, e.clone());
        }
        accepted.fulfill(outcome);
    }

    fn request_result(&self, id: GoalId) {
        let weak = self.weak_self.clone();
        let sent = self
            .get_result
            .call_with(A::get_result_request(id.to_msg()), move |reply| {
                if let Some(core) = weak.upgrade() {
                    core.handle_result_response(id, reply);
                }
            });
        match sent {
            Ok(key) => {
                if let Some(entry) = lock(&self.goals).get_mut(&id) {
                    if entry.result.value().is_none() {
                        entry.call = Some(key);
                    }
                }
            }
            Err(e) => self.fail_result(id, ActionError::Call(e)),
        }
    }

    fn handle_result_response(
        &self,
        id: GoalId,
        reply: Result<<A::GetResult as roslite_msgs::Service>::Response, CallError>,
    ) {
        let Some(result) = lock(&self.goals).get_mut(&id).map(|entry| {
            entry.call = None;
            entry.result.clone()
        }) else {
            return;
        };
        let outcome = reply.map_err(ActionError::Call).map(|response| {
            let (status, result) = A::split_get_result_response(response);
            WrappedResult {
                goal_id: id,
                status: GoalStatusCode::from_code(status),
                result,
            }
        });
        if let Ok(wrapped) = &outcome {
            if let Some(entry) = lock(&self.goals).get_mut(&id) {
                entry.status = wrapped.status;
            }
        }
        result.fulfill(outcome);
    }

    fn fail_result(&self, id: GoalId, error: ActionError) {
        if let Some(result) = lock(&self.goals).get(&id).map(|g| g.result.clone()) {
            result.fulfill(Err(error));
        }
    }

    /// The feedback subscription's callback.
    pub(crate) fn handle_feedback(&self, message: A::FeedbackMessage) {
        let (uuid, feedback) = A::split_feedback_message(message);
        let id = GoalId::from_msg(&uuid);
        // Taken out for the call, so the callback may use this client.
        let Some(mut callback) = lock(&self.goals)
            .get_mut(&id)
            .and_then(|g| g.feedback.take())
        else {
            return;
        };
        callback(id, feedback);
        if let Some(entry) = lock(&self.goals).get_mut(&id) {
            entry.feedback = Some(callback);
        }
    }

    /// The status subscription's callback.
    pub(crate) fn handle_status(&self, message: &GoalStatusArray) {
        let mut goals = lock(&self.goals);
        for status in &message.status_list {
            if let Some(goal) = goals.get_mut(&GoalId::from_msg(&status.goal_info.goal_id)) {
                goal.status = GoalStatusCode::from_code(status.status);
            }
        }
    }

    /// The status subscription's matched callback: the last status publisher leaving means
    /// the server is gone.
    pub(crate) fn handle_status_matched(&self, status: MatchedStatus) {
        // Only a publisher leaving calls back with none left (the change since the last
        // read may be zero: a match before the callback was set, then this unmatch).
        if status.current_count > 0 {
            return;
        }
        let waiting: Vec<_> = lock(&self.goals)
            .iter_mut()
            .map(|(id, g)| (*id, g.call.take(), g.accepted.clone(), g.result.clone()))
            .collect();
        for (id, call, accepted, result) in waiting {
            if let Some(key) = call {
                self.send_goal.forget(key);
                self.get_result.forget(key);
            }
            let gone = ActionError::ServerGone {
                action: self.name.clone(),
                goal: id,
            };
            accepted.fulfill(Err(gone.clone()));
            result.fulfill(Err(gone));
        }
    }

    fn cancel(&self, goal_id: GoalId, stamp: TimeMsg) -> Result<CancelFuture, ActionError> {
        let answer = Arc::new(Promise::new());
        let promise = answer.clone();
        self.cancel_goal
            .call_with(
                CancelGoal_Request {
                    goal_info: GoalInfo {
                        goal_id: goal_id.to_msg(),
                        stamp,
                    },
                },
                move |reply| {
                    promise.fulfill(reply.map_err(ActionError::Call));
                },
            )
            .map_err(ActionError::Call)?;
        Ok(CancelFuture {
            answer,
            action: self.name.clone(),
        })
    }

    fn status_of(&self, id: GoalId) -> GoalStatusCode {
        lock(&self.goals)
            .get(&id)
            .map_or(GoalStatusCode::Unknown, |g| g.status)
    }

    fn forget(&self, id: GoalId) {
        let Some(goal) = lock(&self.goals).remove(&id) else {
            return;
        };
        if let Some(key) = goal.call {
            self.send_goal.forget(key);
            self.get_result.forget(key);
        }
    }
}

impl<A: Action> Drop for ClientCore<A> {
    /// Futures and handles outliving their client learn it was dropped rather than wait for
    /// an answer that can no longer reach them.
    fn drop(&mut self) {
        let goals = self.goals.get_mut().unwrap_or_else(PoisonError::into_inner);
        for goal in goals.values() {
            goal.accepted.fulfill(Err(ActionError::ClientGone));
            goal.result.fulfill(Err(ActionError::ClientGone));
        }
    }
}

/// Keeps a goal's entry in its client while a future or handle of it lives.
struct GoalTracker<A: Action> {
    core: Weak<ClientCore<A>>,
    id: GoalId,
    result: ResultPromise<A>,
}

impl<A: Action> Drop for GoalTracker<A> {
    fn drop(&mut self) {
        if let Some(core) = self.core.upgrade() {
            core.forget(self.id);
        }
    }
}

/// Calls one ROS 2 action (rclcpp_action's `Client`). Its goals' feedback arrives while its
/// node is spun; acceptance and results arrive without.
pub struct ActionClient<A: Action> {
    core: Arc<ClientCore<A>>,
    feedback: Subscription<A::FeedbackMessage>,
    status: Subscription<GoalStatusArray>,
    node: Arc<EndpointHost>,
    /// The action type in the node's type cache (rcl_action registers it beside the types of
    /// the action's services and topics).
    _type_registration: Option<TypeRegistration>,
}

impl<A: Action> ActionClient<A> {
    pub(crate) fn new(
        core: Arc<ClientCore<A>>,
        feedback: Subscription<A::FeedbackMessage>,
        status: Subscription<GoalStatusArray>,
        node: Arc<EndpointHost>,
    ) -> Self {
        let weak = Arc::downgrade(&core);
        status.on_matched(move |matched| {
            if let Some(core) = weak.upgrade() {
                core.handle_status_matched(matched);
            }
        });
        let registration = node.types.register(A::TYPE_HASH, A::TYPE_DESCRIPTION);
        Self {
            core,
            feedback,
            status,
            node,
            _type_registration: registration,
        }
    }

    /// Publishes this client's calls of the action's three services (`send_goal`,
    /// `cancel_goal`, `get_result`) each on its `_service_event` topic, or stops: rclpy's and
    /// rclcpp's `configure_introspection` of an action client.
    ///
    /// # Errors
    /// [`IntrospectionError::Qos`] for an invalid `qos`.
    pub fn configure_introspection(
        &self,
        qos: QosProfile,
        state: IntrospectionState,
    ) -> Result<(), IntrospectionError> {
        self.core.send_goal.configure_introspection(qos, state)?;
        self.core.cancel_goal.configure_introspection(qos, state)?;
        self.core.get_result.configure_introspection(qos, state)
    }

    /// The fully qualified action name.
    pub fn action_name(&self) -> &str {
        &self.core.name
    }

    /// Whether a server is there: its three services ready for this client and its feedback
    /// and status publishers matched (rcl_action's `action_server_is_available`).
    pub fn action_server_is_ready(&self) -> bool {
        self.core.send_goal.service_is_ready()
            && self.core.cancel_goal.service_is_ready()
            && self.core.get_result.service_is_ready()
            && self.feedback.publisher_count() > 0
            && self.status.publisher_count() > 0
    }

    /// Waits up to `timeout` for [`Self::action_server_is_ready`]; false if it never was (or
    /// the context shut down).
    pub fn wait_for_action_server(&self, timeout: Duration) -> bool {
        let start = StdInstant::now();
        loop {
            if self.action_server_is_ready() {
                return true;
            }
            let elapsed = start.elapsed();
            if elapsed >= timeout || self.node.backends.shutdown().is_shutdown() {
                return false;
            }
            // Discovery takes milliseconds at best; a short poll costs nothing real.
            std::thread::sleep((timeout - elapsed).min(Duration::from_millis(5)));
        }
    }

    /// Sends `goal` with a fresh goal id. The future resolves when the server accepts
    /// (a [`ClientGoalHandle`]) or rejects it ([`ActionError::Rejected`]); once accepted, the
    /// result is asked for at once.
    ///
    /// # Errors
    /// [`ActionError::Call`] when the request cannot be sent (no server can ever answer, or
    /// the goal does not serialize).
    pub fn send_goal(&self, goal: A::Goal) -> Result<GoalFuture<A>, ActionError> {
        self.core.send(goal, None)
    }

    /// As [`Self::send_goal`], with `feedback` called with each feedback of the goal, in the
    /// executor spinning the client's node.
    ///
    /// # Errors
    /// As [`Self::send_goal`].
    pub fn send_goal_with_feedback(
        &self,
        goal: A::Goal,
        feedback: impl FnMut(GoalId, A::Feedback) + Send + 'static,
    ) -> Result<GoalFuture<A>, ActionError> {
        self.core.send(goal, Some(Box::new(feedback)))
    }

    /// The goal's result, when it ends (as [`ClientGoalHandle::result`]).
    pub fn get_result(&self, goal: &ClientGoalHandle<A>) -> ResultFuture<A> {
        goal.result()
    }

    /// Asks the server to cancel one goal.
    ///
    /// # Errors
    /// [`ActionError::Call`] when the request cannot be sent.
    pub fn cancel_goal(&self, goal: &ClientGoalHandle<A>) -> Result<CancelFuture, ActionError> {
        self.core.cancel(goal.goal_id(), TimeMsg::default())
    }

    /// Asks the server to cancel every goal it has (of any client).
    ///
    /// # Errors
    /// As [`Self::cancel_goal`].
    pub fn cancel_all_goals(&self) -> Result<CancelFuture, ActionError> {
        self.core.cancel(GoalId::default(), TimeMsg::default())
    }

    /// Asks the server to cancel every goal accepted at or before `stamp`.
    ///
    /// # Errors
    /// As [`Self::cancel_goal`].
    pub fn cancel_goals_before(&self, stamp: TimeMsg) -> Result<CancelFuture, ActionError> {
        self.core.cancel(GoalId::default(), stamp)
    }
}

/// The server's answer to one goal.
pub struct GoalFuture<A: Action> {
    tracker: Arc<GoalTracker<A>>,
    accepted: Acceptance,
}

impl<A: Action> GoalFuture<A> {
    pub fn goal_id(&self) -> GoalId {
        self.tracker.id
    }

    fn handle(
        &self,
        answer: Result<TimeMsg, ActionError>,
    ) -> Result<ClientGoalHandle<A>, ActionError> {
        answer.map(|stamp| ClientGoalHandle {
            tracker: self.tracker.clone(),
            stamp,
        })
    }

    /// Waits up to `timeout` for the answer.
    ///
    /// # Errors
    /// [`ActionError::Rejected`], [`ActionError::ServerGone`], [`ActionError::Timeout`],
    /// [`ActionError::Call`].
    pub fn wait(self, timeout: Duration) -> Result<ClientGoalHandle<A>, ActionError> {
        match self.accepted.wait(timeout) {
            Some(answer) => self.handle(answer),
            None => Err(ActionError::Timeout {
                action: self.action_name(),
                waited: timeout,
            }),
        }
    }

    fn action_name(&self) -> String {
        self.tracker
            .core
            .upgrade()
            .map_or_else(String::new, |core| core.name.clone())
    }
}

impl<A: Action> Future for GoalFuture<A> {
    type Output = Result<ClientGoalHandle<A>, ActionError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.accepted
            .poll_value(cx)
            .map(|answer| self.handle(answer))
    }
}

/// One accepted goal on the client side (rclcpp_action's `ClientGoalHandle`). Clones share
/// the goal; the client forgets it (and its feedback) when the last one and its futures are
/// dropped.
pub struct ClientGoalHandle<A: Action> {
    tracker: Arc<GoalTracker<A>>,
    stamp: TimeMsg,
}

impl<A: Action> Clone for ClientGoalHandle<A> {
    fn clone(&self) -> Self {
        Self {
            tracker: self.tracker.clone(),
            stamp: self.stamp.clone(),
        }
    }
}

impl<A: Action> ClientGoalHandle<A> {
    pub fn goal_id(&self) -> GoalId {
        self.tracker.id
    }

    /// When the server accepted the goal.
    pub fn stamp(&self) -> &TimeMsg {
        &self.stamp
    }

    /// The goal's state as last heard (from the status topic or the result).
    pub fn status(&self) -> GoalStatusCode {
        self.tracker
            .core
            .upgrade()
            .map_or(GoalStatusCode::Unknown, |core| {
                core.status_of(self.tracker.id)
            })
    }

    /// The goal's result, when it ends.
    pub fn result(&self) -> ResultFuture<A> {
        ResultFuture {
            tracker: self.tracker.clone(),
        }
    }
}

/// A goal's result.
pub struct ResultFuture<A: Action> {
    tracker: Arc<GoalTracker<A>>,
}

impl<A: Action> ResultFuture<A> {
    /// Waits up to `timeout` for the result.
    ///
    /// # Errors
    /// [`ActionError::ServerGone`] when the server went away first; [`ActionError::Timeout`];
    /// [`ActionError::Call`].
    pub fn wait(&self, timeout: Duration) -> Result<WrappedResult<A>, ActionError> {
        self.tracker.result.wait(timeout).unwrap_or_else(|| {
            Err(ActionError::Timeout {
                action: self
                    .tracker
                    .core
                    .upgrade()
                    .map_or_else(String::new, |core| core.name.clone()),
                waited: timeout,
            })
        })
    }
}

impl<A: Action> Future for ResultFuture<A> {
    type Output = Result<WrappedResult<A>, ActionError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.tracker.result.poll_value(cx)
    }
}

/// The server's answer to a cancel request: which goals are now canceling
/// (`action_msgs/srv/CancelGoal_Response`).
pub struct CancelFuture {
    answer: Arc<Promise<Result<CancelGoal_Response, ActionError>>>,
    action: String,
}

impl CancelFuture {
    /// Waits up to `timeout` for the answer.
    ///
    /// # Errors
    /// [`ActionError::Timeout`]; [`ActionError::Call`].
    pub fn wait(&self, timeout: Duration) -> Result<CancelGoal_Response, ActionError> {
        self.answer.wait(timeout).unwrap_or_else(|| {
            Err(ActionError::Timeout {
                action: self.action.clone(),
                waited: timeout,
            })
        })
    }
}

impl Future for CancelFuture {
    type Output = Result<CancelGoal_Response, ActionError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.answer.poll_value(cx)
    }
}
