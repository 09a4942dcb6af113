//! A node's parameters, as rclcpp's `NodeParameters` interface offers them: the node's
//! parameter methods, and the `/parameter_events` publisher and six `rcl_interfaces` services
//! each node starts with. The parameter table and its rules are `crate::params`, below.

use std::any::Any;
use std::sync::{Arc, PoisonError};

use super::{Node, NodeError};
use crate::params::services::{
    describe_parameters, get_parameter_types, get_parameters, list_parameters, set_parameters,
    set_parameters_atomically,
};
use crate::params::{
    ListParametersResult, NodeParameters, OnSetParametersCallbackHandle, Parameter, ParameterCore,
    ParameterDescriptor, ParameterError, ParameterServices, ParameterType, ParameterValue,
    SetParametersResult,
};
use crate::vocabulary::qos::QosProfile;
use roslite_msgs::rcl_interfaces::msg as rcl;
use roslite_msgs::rcl_interfaces::srv::{
    DescribeParameters, GetParameterTypes, GetParameters, ListParameters, SetParameters,
    SetParametersAtomically,
};
use roslite_msgs::Service as ServiceType;

impl NodeParameters {
    /// Declares `use_sim_time` and, unless disabled, starts the event publisher and the six
    /// services. Called once by `Node::new`.
    pub(crate) fn start(node: &Node, use_sim_time: bool) -> Result<(), NodeError> {
        let params = &node.parameters;
        if params.enabled == ParameterServices::Enabled {
            let publisher = node.create_publisher::<rcl::ParameterEvent>(
                "/parameter_events",
                QosProfile::PARAMETER_EVENTS,
            )?;
            let _ = params.core.events.set(publisher);
        }
        // rclcpp declares it on every node. The clock source is chosen when the node is made,
        // so a later change could not take effect: refuse it instead of pretending.
        params
            .core
            .declare(
                "use_sim_time",
                ParameterValue::Bool(use_sim_time),
                ParameterDescriptor::new(),
            )
            // Invariant: the store is fresh (no callbacks, nothing declared) and
            // `Overrides::use_sim_time` checked the override is a bool, so this cannot fail.
            .expect("internal bug: declaring use_sim_time on a fresh node failed");
        let handle = params
            .core
            .store
            .add_callback(Arc::new(move |changed: &[Parameter]| {
                match changed.iter().find(|p| p.name == "use_sim_time") {
                    Some(p) if p.value != ParameterValue::Bool(use_sim_time) => {
                        SetParametersResult::rejected(
                            "roslite chooses the clock when the node is created; restart it with \
                         --ros-args -p use_sim_time:=<value> to change use_sim_time",
                        )
                    }
                    _ => SetParametersResult::success(),
                }
            }));
        handle.keep_forever();
        if params.enabled == ParameterServices::Enabled {
            let services = start_services(node, &params.core)?;
            *params
                .services
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = services;
        }
        Ok(())
    }
}

/// Parameters (rclcpp's `NodeParameters` interface).
impl Node {
    /// Declares parameter `name` and returns its value: the override from
    /// `--ros-args -p [node:]name:=value` or `--params-file` if there is one, else `default`.
    ///
    /// Unless `descriptor.dynamic_typing`, the parameter keeps the type of its value for
    /// life. A default of [`ParameterValue::NotSet`] with `descriptor.ty` set makes the
    /// override mandatory. On-set callbacks see the initial value and may refuse it.
    ///
    /// # Errors
    /// [`ParameterError`]: already declared, invalid name or descriptor, an override of the
    /// wrong type, out of range, no value, or refused by a callback.
    pub fn declare_parameter(
        &self,
        name: &str,
        default: impl Into<ParameterValue>,
        descriptor: ParameterDescriptor,
    ) -> Result<ParameterValue, ParameterError> {
        self.parameters
            .core
            .declare(name, default.into(), descriptor)
    }

    /// Removes a dynamically typed, writable parameter.
    ///
    /// # Errors
    /// [`ParameterError::NotDeclared`], [`ParameterError::ReadOnly`],
    /// [`ParameterError::StaticallyTyped`], [`ParameterError::ModifiedInCallback`].
    pub fn undeclare_parameter(&self, name: &str) -> Result<(), ParameterError> {
        self.parameters.core.undeclare(name)
    }

    pub fn has_parameter(&self, name: &str) -> bool {
        self.parameters.core.store.has(name)
    }

    /// The parameter's current value; [`ParameterValue::NotSet`] for an undeclared one when
    /// undeclared parameters are allowed.
    ///
    /// # Errors
    /// [`ParameterError::NotDeclared`].
    pub fn get_parameter(&self, name: &str) -> Result<Parameter, ParameterError> {
        let value = self.parameters.core.store.get(name)?;
        Ok(Parameter {
            name: name.to_owned(),
            value,
        })
    }

    /// Several parameters at once, in the order asked.
    ///
    /// # Errors
    /// [`ParameterError::NotDeclared`] for the first undeclared one.
    pub fn get_parameters<S: AsRef<str>>(
        &self,
        names: &[S],
    ) -> Result<Vec<Parameter>, ParameterError> {
        names
            .iter()
            .map(|n| self.get_parameter(n.as_ref()))
            .collect()
    }

    /// Sets one parameter (declaring it when undeclared parameters are allowed). The result
    /// says whether it was set, and why not.
    pub fn set_parameter(&self, parameter: Parameter) -> SetParametersResult {
        self.parameters
            .core
            .set_atomically(std::slice::from_ref(&parameter))
    }

    /// Sets each parameter on its own, in order; one result per parameter.
    pub fn set_parameters(&self, parameters: &[Parameter]) -> Vec<SetParametersResult> {
        self.parameters.core.set_each(parameters)
    }

    /// Sets all parameters or none: every value is checked and the callbacks see them all
    /// before any is applied.
    pub fn set_parameters_atomically(&self, parameters: &[Parameter]) -> SetParametersResult {
        self.parameters.core.set_atomically(parameters)
    }

    /// Adds a callback that validates every declaration and set before it is applied; it may
    /// refuse it with [`SetParametersResult::rejected`]. The most recently added callback runs
    /// first; the first refusal stops the change. The callback stays until the returned handle
    /// is dropped. It may read parameters but not change them.
    pub fn add_on_set_parameters_callback(
        &self,
        callback: impl Fn(&[Parameter]) -> SetParametersResult + Send + Sync + 'static,
    ) -> OnSetParametersCallbackHandle {
        self.parameters.core.store.add_callback(Arc::new(callback))
    }

    /// Parameter names under `prefixes` (all when empty) at most `depth` levels below them (0:
    /// any depth), as rclcpp's `list_parameters` computes them.
    pub fn list_parameters<S: AsRef<str>>(
        &self,
        prefixes: &[S],
        depth: u64,
    ) -> ListParametersResult {
        self.parameters.core.store.list(prefixes, depth)
    }

    /// The descriptors of parameters, with `name` and `ty` filled in.
    ///
    /// # Errors
    /// [`ParameterError::NotDeclared`] for the first undeclared one (unless undeclared
    /// parameters are allowed, which describes them as not set).
    pub fn describe_parameters<S: AsRef<str>>(
        &self,
        names: &[S],
    ) -> Result<Vec<ParameterDescriptor>, ParameterError> {
        self.parameters.core.store.describe(names)
    }

    /// The types of parameters ([`ParameterType::NotSet`] for undeclared ones when undeclared
    /// parameters are allowed).
    ///
    /// # Errors
    /// [`ParameterError::NotDeclared`].
    pub fn get_parameter_types<S: AsRef<str>>(
        &self,
        names: &[S],
    ) -> Result<Vec<ParameterType>, ParameterError> {
        self.parameters.core.store.types(names)
    }

    /// Lets `set_parameter` create parameters that were never declared (rclcpp's
    /// `allow_undeclared_parameters` node option; off by default). They are dynamically typed.
    pub fn set_allow_undeclared_parameters(&self, allow: bool) {
        self.parameters.core.store.set_allow_undeclared(allow);
    }

    /// Every declared parameter with its current value, in name order.
    pub fn parameter_values(&self) -> Vec<Parameter> {
        self.parameters.core.store.values()
    }

    /// Makes the node's parameters exactly `parameters` (values set, missing ones declared
    /// dynamically typed, others removed) without running its on-set callbacks and without a
    /// `/parameter_events` message. It is for restoring state, not for changing it: a node
    /// moved to another host (roslite-wasm's migration) gets back the values its callbacks
    /// accepted on the old host. To change a parameter use [`Self::set_parameter`].
    ///
    /// # Errors
    /// [`ParameterError::WrongType`] for a value that does not fit a statically typed
    /// parameter (then nothing changed); [`ParameterError::ModifiedInCallback`] when called
    /// from an on-set callback.
    pub fn restore_parameters(&self, parameters: &[Parameter]) -> Result<(), ParameterError> {
        self.parameters.core.store.restore(parameters)
    }

    /// The overrides this node was started with (`-p`, `--params-file`), declared or not.
    pub fn parameter_overrides(&self) -> Vec<Parameter> {
        self.parameters.core.store.overrides()
    }
}

/// Starts the six parameter services of `node` (`crate::params::services` answers them);
/// the returned handles keep them serving.
fn start_services(
    node: &Node,
    core: &Arc<ParameterCore>,
) -> Result<Vec<Box<dyn Any + Send + Sync>>, NodeError> {
    fn serve<S: ServiceType>(
        node: &Node,
        core: &Arc<ParameterCore>,
        suffix: &str,
        handler: fn(&ParameterCore, S::Request) -> S::Response,
    ) -> Result<Box<dyn Any + Send + Sync>, NodeError> {
        let core = core.clone();
        let name = format!("{}/{suffix}", node.fully_qualified_name());
        let service = node.create_service_in::<S, _>(
            node.default_callback_group(),
            &name,
            QosProfile::PARAMETERS,
            move |req| handler(&core, req),
        )?;
        Ok(Box::new(service))
    }
    Ok(vec![
        serve::<DescribeParameters>(node, core, "describe_parameters", describe_parameters)?,
        serve::<GetParameterTypes>(node, core, "get_parameter_types", get_parameter_types)?,
        serve::<GetParameters>(node, core, "get_parameters", get_parameters)?,
        serve::<ListParameters>(node, core, "list_parameters", list_parameters)?,
        serve::<SetParameters>(node, core, "set_parameters", set_parameters)?,
        serve::<SetParametersAtomically>(
            node,
            core,
            "set_parameters_atomically",
            set_parameters_atomically,
        )?,
    ])
}
