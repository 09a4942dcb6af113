//! The six `rcl_interfaces` parameter services of a node, answered as rclcpp's
//! `ParameterService` answers them: `<node>/get_parameters`, `set_parameters`,
//! `set_parameters_atomically`, `list_parameters`, `describe_parameters` and
//! `get_parameter_types`, all with `rmw_qos_profile_parameters` (reliable, volatile, keep last
//! 1000).
//!
//! Each handler is a plain function of the core and the request. Where rclcpp would throw
//! for an undeclared name (get, describe, get types), the response is empty, as rclcpp's
//! service sends it.

use super::{Parameter, ParameterCore, ParameterValue, SetParametersResult};
use roslite_msgs::rcl_interfaces::msg as rcl;
use roslite_msgs::rcl_interfaces::srv::{
    DescribeParameters_Request, DescribeParameters_Response, GetParameterTypes_Request,
    GetParameterTypes_Response, GetParameters_Request, GetParameters_Response,
    ListParameters_Request, ListParameters_Response, SetParametersAtomically_Request,
    SetParametersAtomically_Response, SetParameters_Request, SetParameters_Response,
};

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
