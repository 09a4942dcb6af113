//! The node's action API: servers and clients, built from the node's services, clients,
//! publishers and subscriptions under `<action>/_action/` (see `endpoints/action`).

use std::sync::Arc;
use std::time::Duration;

use roslite_executor::CallbackGroup;
use roslite_msgs::action_msgs::msg::GoalStatusArray;
use roslite_msgs::Action;

use crate::endpoints::action::{
    action_feedback_qos, action_status_qos, ActionClient, ActionServer, CancelResponse, ClientCore,
    GoalId, GoalResponse, ServerCallbacks, ServerCore, ServerGoalHandle, ServerServices,
    DEFAULT_RESULT_TIMEOUT,
};
use crate::endpoints::service::{services_default_qos, Service, ServiceHandler};
use crate::vocabulary::graph::{action_of_feedback_topic, GraphEndpointKind};

/// The names under which action `action` (fully qualified) lives: services and topics.
fn action_part(action: &str, part: &str) -> String {
    format!("{action}/_action/{part}")
}

impl super::Node {
    /// A server of action `name` (relative names resolve in the node's namespace; ROS
    /// remapping applies to the action name), in the shape of rclcpp_action's:
    /// - `on_goal` decides on each new goal (accept and execute, accept and defer, reject);
    /// - `on_cancel` decides on each request to cancel an accepted goal;
    /// - `on_accepted` gets each accepted goal's [`ServerGoalHandle`], to execute it here (on
    ///   the executor) or to hand to a thread of the application.
    ///
    /// Results are kept [`DEFAULT_RESULT_TIMEOUT`] after a goal ends.
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid action name.
    pub fn create_action_server<A: Action>(
        &self,
        name: &str,
        on_goal: impl FnMut(GoalId, &A::Goal) -> GoalResponse + Send + 'static,
        on_cancel: impl FnMut(&ServerGoalHandle<A>) -> CancelResponse + Send + 'static,
        on_accepted: impl FnMut(ServerGoalHandle<A>) + Send + 'static,
    ) -> Result<ActionServer<A>, super::NodeError> {
        let group = self.shared.host.default_group.clone();
        self.create_action_server_in(
            &group,
            name,
            DEFAULT_RESULT_TIMEOUT,
            ServerCallbacks {
                on_goal: Box::new(on_goal),
                on_cancel: Box::new(on_cancel),
                on_accepted: Box::new(on_accepted),
            },
        )
    }

    /// As [`Self::create_action_server`], in a callback group and with a `result_timeout` of
    /// choice.
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid action name or a zero `result_timeout`.
    pub fn create_action_server_with<A: Action>(
        &self,
        group: &Arc<CallbackGroup>,
        name: &str,
        result_timeout: Duration,
        on_goal: impl FnMut(GoalId, &A::Goal) -> GoalResponse + Send + 'static,
        on_cancel: impl FnMut(&ServerGoalHandle<A>) -> CancelResponse + Send + 'static,
        on_accepted: impl FnMut(ServerGoalHandle<A>) + Send + 'static,
    ) -> Result<ActionServer<A>, super::NodeError> {
        if result_timeout.is_zero() {
            return Err(super::NodeError::ZeroPeriod);
        }
        self.create_action_server_in(
            group,
            name,
            result_timeout,
            ServerCallbacks {
                on_goal: Box::new(on_goal),
                on_cancel: Box::new(on_cancel),
                on_accepted: Box::new(on_accepted),
            },
        )
    }

    fn create_action_server_in<A: Action>(
        &self,
        group: &Arc<CallbackGroup>,
        name: &str,
        result_timeout: Duration,
        callbacks: ServerCallbacks<A>,
    ) -> Result<ActionServer<A>, super::NodeError> {
        let action = self.resolve_topic_name(name)?;
        let status = self.create_publisher::<GoalStatusArray>(
            &action_part(&action, "status"),
            action_status_qos(),
        )?;
        let feedback = self.create_publisher::<A::FeedbackMessage>(
            &action_part(&action, "feedback"),
            action_feedback_qos(),
        )?;
        let host = &self.shared.host;
        let client_listens = {
            let host = Arc::downgrade(host);
            let topic = action_part(&action, "feedback");
            Box::new(move |client: &[u8; 12]| {
                host.upgrade().is_some_and(|host| {
                    host.backends.graph_endpoints().iter().any(|e| {
                        e.kind == GraphEndpointKind::Subscription
                            && e.topic == topic
                            && e.gid[..12] == client[..]
                    })
                })
            })
        };
        let core = ServerCore::new(
            action.clone(),
            (status, feedback),
            callbacks,
            self.shared.ros_clock.clone(),
            result_timeout,
            client_listens,
        );
        let send_goal = {
            let core = Arc::downgrade(&core);
            let name = action_part(&action, "send_goal");
            let introspection = self.introspection(&name);
            Service::new(
                host.clone(),
                group,
                name,
                services_default_qos(),
                ServiceHandler::Deferred(Box::new(move |request, reply| {
                    if let Some(core) = core.upgrade() {
                        core.handle_send_goal(request, reply);
                    }
                })),
                introspection,
            )
        };
        let cancel_goal = {
            let core = Arc::downgrade(&core);
            let name = action_part(&action, "cancel_goal");
            let introspection = self.introspection(&name);
            Service::new(
                host.clone(),
                group,
                name,
                services_default_qos(),
                ServiceHandler::Deferred(Box::new(move |request, reply| {
                    if let Some(core) = core.upgrade() {
                        core.handle_cancel(request, reply);
                    }
                })),
                introspection,
            )
        };
        let get_result = {
            let core = Arc::downgrade(&core);
            let name = action_part(&action, "get_result");
            let introspection = self.introspection(&name);
            Service::new(
                host.clone(),
                group,
                name,
                services_default_qos(),
                ServiceHandler::Deferred(Box::new(move |request, reply| {
                    if let Some(core) = core.upgrade() {
                        core.handle_get_result(request, reply);
                    }
                })),
                introspection,
            )
        };
        Ok(ActionServer::new(
            core,
            ServerServices {
                send_goal,
                cancel_goal,
                get_result,
            },
            group,
            self.shared.timer_clock.clone(),
            host.types.register(A::TYPE_HASH, A::TYPE_DESCRIPTION),
        ))
    }

    /// The ROS graph's actions with their types, sorted (rclpy's
    /// `get_action_names_and_types`): found by their feedback topics, served or called, in
    /// this context and in other processes.
    pub fn action_names_and_types(&self) -> Vec<(String, Vec<String>)> {
        let mut actions: Vec<(String, Vec<String>)> = Vec::new();
        for (topic, types) in self.topic_names_and_types() {
            for ty in types {
                let Some((action, action_type)) = action_of_feedback_topic(&topic, &ty) else {
                    continue;
                };
                match actions.iter_mut().find(|(name, _)| *name == action) {
                    Some((_, types)) if !types.contains(&action_type) => types.push(action_type),
                    Some(_) => {}
                    None => actions.push((action, vec![action_type])),
                }
            }
        }
        actions
    }

    /// A client of action `name`. Its goals' feedback callbacks run in the executor spinning
    /// this node (in the node's default callback group).
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid action name.
    pub fn create_action_client<A: Action>(
        &self,
        name: &str,
    ) -> Result<ActionClient<A>, super::NodeError> {
        let group = self.shared.host.default_group.clone();
        self.create_action_client_in(&group, name)
    }

    /// As [`Self::create_action_client`], with feedback and status handled in a callback
    /// group of choice.
    ///
    /// # Errors
    /// [`super::NodeError`] for an invalid action name.
    pub fn create_action_client_in<A: Action>(
        &self,
        group: &Arc<CallbackGroup>,
        name: &str,
    ) -> Result<ActionClient<A>, super::NodeError> {
        let action = self.resolve_topic_name(name)?;
        let core = ClientCore::<A>::new(
            action.clone(),
            self.create_client(&action_part(&action, "send_goal"))?,
            self.create_client(&action_part(&action, "cancel_goal"))?,
            self.create_client(&action_part(&action, "get_result"))?,
        );
        let feedback = {
            let core = Arc::downgrade(&core);
            self.create_subscription_in(
                group,
                &action_part(&action, "feedback"),
                action_feedback_qos(),
                move |message: A::FeedbackMessage| {
                    if let Some(core) = core.upgrade() {
                        core.handle_feedback(message);
                    }
                },
            )?
        };
        let status = {
            let core = Arc::downgrade(&core);
            self.create_subscription_in(
                group,
                &action_part(&action, "status"),
                action_status_qos(),
                move |message: &GoalStatusArray| {
                    if let Some(core) = core.upgrade() {
                        core.handle_status(message);
                    }
                },
            )?
        };
        Ok(ActionClient::new(
            core,
            feedback,
            status,
            self.shared.host.clone(),
        ))
    }
}
