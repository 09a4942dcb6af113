//! The REP 2011 type descriptions of the types the tool's own endpoints use, built from the
//! definitions it loaded, so that its node answers `~/get_type_description` for them as an
//! rclpy tool's node does (generated types carry theirs; the tool's types are known only at
//! run time).

use anyhow::Context as _;
use roslite::msgs::description::{FieldDescription, IndividualTypeDescription, TypeDescription};
use roslite_msg_gen::ast::TypeName;
use roslite_msg_gen::hash;
use roslite_msg_gen::registry::InterfaceSet;

/// The description of `ty` in `set`, leaked as the runtime keeps run-time type names: a tool
/// describes the few types of the endpoints it creates, once each.
///
/// # Errors
/// When `ty`, or a type it refers to, has no definition in `set`.
pub(crate) fn leaked(
    set: &InterfaceSet,
    ty: &TypeName,
) -> anyhow::Result<&'static TypeDescription> {
    let description =
        hash::type_description(set, ty).with_context(|| format!("cannot describe '{ty}'"))?;
    let referenced: Vec<&'static IndividualTypeDescription> = description
        .referenced_type_descriptions
        .iter()
        .map(leak_individual)
        .collect();
    Ok(Box::leak(Box::new(TypeDescription {
        type_description: leak_individual(&description.type_description),
        referenced_type_descriptions: referenced.leak(),
    })))
}

fn leak_individual(
    individual: &hash::IndividualTypeDescription,
) -> &'static IndividualTypeDescription {
    let fields: Vec<FieldDescription> = individual
        .fields
        .iter()
        .map(|field| FieldDescription {
            name: leak_str(&field.name),
            type_id: field.type_id,
            capacity: field.capacity as u64,
            string_capacity: field.string_capacity as u64,
            nested_type_name: leak_str(
                &field
                    .nested_type_name
                    .as_ref()
                    .map(TypeName::to_string)
                    .unwrap_or_default(),
            ),
            default_value: leak_str(&field.default_value),
        })
        .collect();
    Box::leak(Box::new(IndividualTypeDescription {
        type_name: leak_str(&individual.type_name.to_string()),
        fields: fields.leak(),
        encoding: individual.encoding,
        raw_file_contents: leak_str(&individual.raw_file_contents),
    }))
}

fn leak_str(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}
