//! The six `rcl_interfaces` parameter services of a node, answered as rclcpp's
//! `ParameterService` answers them: `<node>/get_parameters`, `set_parameters`,
//! `set_parameters_atomically`, `list_parameters`, `describe_parameters` and
//! `get_parameter_types`, all with `rmw_qos_profile_parameters` (reliable, volatile, keep last
//! 1000).
//!
//! Each handler is a plain function of the core and the request. Where rclcpp would throw
//! for an undeclared name (get, describe, get types), the response is empty, as rclcpp's
//! service sends it.

use std::any::Any;
use std::sync::Arc;

use super::{Parameter, ParameterCore, ParameterValue, SetParametersResult};
use crate::msgs::rcl_interfaces::msg as rcl;
use crate::msgs::rcl_interfaces::srv::{
    DescribeParameters, DescribeParameters_Request, DescribeParameters_Response, GetParameterTypes,
    GetParameterTypes_Request, GetParameterTypes_Response, GetParameters, GetParameters_Request,
    GetParameters_Response, ListParameters, ListParameters_Request, ListParameters_Response,
    SetParameters, SetParametersAtomically, SetParametersAtomically_Request,
    SetParametersAtomically_Response, SetParameters_Request, SetParameters_Response,
};
use crate::node::{Node, NodeError};
use crate::vocabulary::qos::QosProfile;
use crate::ServiceType;

pub(crate) fn get_parameters(
    core: &ParameterCore,
    req: GetParameters_Request,
) -> GetParameters_Response {
    let values = req
        .names
        .iter()
        .map(|name| core.store().get(name).map(|v| v.to_msg()))
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_default();
    GetParameters_Response { values }
}

pub(crate) fn get_parameter_types(
    core: &ParameterCore,
    req: GetParameterTypes_Request,
) -> GetParameterTypes_Response {
    let types = core
        .store()
        .types(&req.names)
        .map(|types| types.into_iter().map(|t| t.code()).collect())
        .unwrap_or_default();
    GetParameterTypes_Response { types }
}

pub(crate) fn describe_parameters(
    core: &ParameterCore,
    req: DescribeParameters_Request,
) -> DescribeParameters_Response {
    let descriptors = core
        .store()
        .describe(&req.names)
        .map(|ds| ds.iter().map(|d| d.to_msg()).collect())
        .unwrap_or_default();
    DescribeParameters_Response { descriptors }
}

pub(crate) fn list_parameters(
    core: &ParameterCore,
    req: ListParameters_Request,
) -> ListParameters_Response {
    let result = core.store().list(&req.prefixes, req.depth);
    ListParameters_Response {
        result: rcl::ListParametersResult {
            names: result.names,
            prefixes: result.prefixes,
        },
    }
}

/// Each parameter is set on its own (rclcpp: one `set_parameters_atomically` per parameter).
pub(crate) fn set_parameters(
    core: &ParameterCore,
    req: SetParameters_Request,
) -> SetParameters_Response {
    let results = req
        .parameters
        .iter()
        .map(|p| match from_msg(p) {
            Ok(p) => core.set_atomically(std::slice::from_ref(&p)).to_msg(),
            Err(refused) => refused.to_msg(),
        })
        .collect();
    SetParameters_Response { results }
}

pub(crate) fn set_parameters_atomically(
    core: &ParameterCore,
    req: SetParametersAtomically_Request,
) -> SetParametersAtomically_Response {
    let result = match req
        .parameters
        .iter()
        .map(from_msg)
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(parameters) => core.set_atomically(&parameters),
        Err(refused) => refused,
    };
    SetParametersAtomically_Response {
        result: result.to_msg(),
    }
}

fn from_msg(p: &rcl::Parameter) -> Result<Parameter, SetParametersResult> {
    let value = ParameterValue::from_msg(&p.value).ok_or_else(|| {
        SetParametersResult::rejected(format!(
            "parameter '{}' has type code {}, which is no rcl_interfaces/msg/ParameterType",
            p.name, p.value.r#type
        ))
    })?;
    Ok(Parameter {
        name: p.name.clone(),
        value,
    })
}

/// Starts the six services of `node`; the returned handles keep them serving.
pub(super) fn start(
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
