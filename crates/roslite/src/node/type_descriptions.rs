//! A node's `~/get_type_description` service (REP 2011 type description distribution), as
//! rclcpp's `NodeTypeDescriptions` starts it and rcl answers it
//! (`rcl_node_type_description_service_handle_request`): given the RIHS01 hash of a type one
//! of the node's endpoints uses, the type's description, those of the types it refers to and,
//! on request, their definition texts. The types come from the node's type cache
//! (`crate::endpoints::type_cache`), which each endpoint registers its type with.
//!
//! The read-only bool parameter `start_type_description_service` decides whether the node
//! serves it, as in rclcpp and rclpy: true unless overridden (`--ros-args -p
//! start_type_description_service:=false`), or unless the context's
//! [`ParameterServices`] are disabled, which leaves a node
//! without tool-facing services of its own unless this parameter asks for this one.

use std::sync::Arc;

use roslite_msgs::description::{IndividualTypeDescription, TypeDescription};
use roslite_msgs::type_description_interfaces::msg as td;
use roslite_msgs::type_description_interfaces::srv::{
    GetTypeDescription, GetTypeDescription_Request, GetTypeDescription_Response,
};

use super::{Node, NodeError};
use crate::endpoints::service::services_default_qos;
use crate::endpoints::service::Service;
use crate::endpoints::type_cache::{parse_type_hash, TypeCache, START_TYPE_DESCRIPTION_SERVICE};
use crate::params::{ParameterDescriptor, ParameterServices, ParameterType, ParameterValue};

/// rcl's `failure_reason` for a hash `rosidl_parse_type_hash_string` refuses.
pub(crate) const MALFORMED_HASH: &str = "Failed to parse type hash";
/// rcl's `failure_reason` for a hash none of the node's endpoints uses.
pub(crate) const TYPE_NOT_IN_USE: &str = "Type not currently in use by this node";

impl Node {
    /// Declares [`START_TYPE_DESCRIPTION_SERVICE`] on this node and, when it is true, starts
    /// the service; the returned handle keeps it serving. The override's type was checked when
    /// the node was made (`Node::new`), so declaring cannot fail on it.
    pub(crate) fn start_type_description_service(
        &self,
    ) -> Result<Option<Arc<Service<GetTypeDescription>>>, NodeError> {
        let default = self.parameters.enabled == ParameterServices::Enabled;
        let mut descriptor = ParameterDescriptor::new()
            .description("Start the ~/get_type_description service for this node.");
        descriptor.ty = ParameterType::Bool;
        let value = self
            .parameters
            .core
            .declare(
                START_TYPE_DESCRIPTION_SERVICE,
                ParameterValue::Bool(default),
                descriptor.read_only(),
            )
            // Invariant: declared once, on a node nobody has added callbacks to, with an override
            // `Node::new` checked to be a bool.
            .expect("internal bug: declaring start_type_description_service on a new node failed");
        if value != ParameterValue::Bool(true) {
            return Ok(None);
        }
        let types = self.shared.host.types.clone();
        let name = format!("{}/get_type_description", self.fully_qualified_name());
        let service = self.create_service_in::<GetTypeDescription, _>(
            self.default_callback_group(),
            &name,
            services_default_qos(),
            move |request| answer(&types, &request),
        )?;
        Ok(Some(Arc::new(service)))
    }
}

/// The response to one request, as rcl builds it: the type is looked up by hash alone (the
/// request's `type_name` is not read), sources only when asked for, no extra information.
pub(crate) fn answer(
    types: &TypeCache,
    request: &GetTypeDescription_Request,
) -> GetTypeDescription_Response {
    let mut response = GetTypeDescription_Response::default();
    let Some(hash) = parse_type_hash(&request.type_hash) else {
        response.failure_reason = MALFORMED_HASH.to_owned();
        return response;
    };
    let Some(description) = types.find(&hash) else {
        response.failure_reason = TYPE_NOT_IN_USE.to_owned();
        return response;
    };
    response.type_description = type_description_message(description);
    if request.include_type_sources {
        response.type_sources = type_sources(description);
    }
    response.successful = true;
    response
}

fn type_description_message(description: &TypeDescription) -> td::TypeDescription {
    td::TypeDescription {
        type_description: individual_message(description.type_description),
        referenced_type_descriptions: description
            .referenced_type_descriptions
            .iter()
            .map(|individual| individual_message(individual))
            .collect(),
    }
}

fn individual_message(individual: &IndividualTypeDescription) -> td::IndividualTypeDescription {
    td::IndividualTypeDescription {
        type_name: individual.type_name.to_owned(),
        fields: individual
            .fields
            .iter()
            .map(|field| td::Field {
                name: field.name.to_owned(),
                r#type: td::FieldType {
                    type_id: field.type_id,
                    capacity: field.capacity,
                    string_capacity: field.string_capacity,
                    nested_type_name: field.nested_type_name.to_owned(),
                },
                default_value: field.default_value.to_owned(),
            })
            .collect(),
    }
}

/// The type's source and then each referenced type's, in the order of the description (as
/// rosidl's `get_type_description_sources`).
fn type_sources(description: &TypeDescription) -> Vec<td::TypeSource> {
    std::iter::once(description.type_description)
        .chain(description.referenced_type_descriptions.iter().copied())
        .map(|individual| td::TypeSource {
            type_name: individual.type_name.to_owned(),
            encoding: individual.encoding.to_owned(),
            raw_file_contents: individual.raw_file_contents.to_owned(),
        })
        .collect()
}
