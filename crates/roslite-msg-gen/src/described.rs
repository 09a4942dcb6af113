//! A type's REP 2011 description as the runtime's `roslite_msgs::description` values, built
//! from the definitions in an [`InterfaceSet`], for endpoints of types known only at run time
//! (the `roslite` tool's, the C ABI's): their node then answers `~/get_type_description` for
//! them as it does for generated types, which carry theirs as constants.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use roslite_msgs::description::{FieldDescription, IndividualTypeDescription, TypeDescription};

use crate::ast::TypeName;
use crate::hash::{self, HashError};
use crate::registry::InterfaceSet;

/// The description of `ty` in `set`, made once per type name and process and kept (leaked,
/// as the runtime keeps run-time type names), so endpoints can hold it as `'static`. A type
/// described before keeps its first description, as its hash keeps its first definition.
///
/// # Errors
/// When `ty`, or a type it refers to, has no definition in `set`.
pub fn leaked(set: &InterfaceSet, ty: &TypeName) -> Result<&'static TypeDescription, HashError> {
    static DESCRIBED: Mutex<BTreeMap<String, &'static TypeDescription>> =
        Mutex::new(BTreeMap::new());
    let name = ty.to_string();
    if let Some(found) = DESCRIBED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&name)
    {
        return Ok(found);
    }
    let description = hash::type_description(set, ty)?;
    let referenced: Vec<&'static IndividualTypeDescription> = description
        .referenced_type_descriptions
        .iter()
        .map(leak_individual)
        .collect();
    let leaked: &'static TypeDescription = Box::leak(Box::new(TypeDescription {
        type_description: leak_individual(&description.type_description),
        referenced_type_descriptions: referenced.leak(),
    }));
    Ok(*DESCRIBED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(name)
        .or_insert(leaked))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A built-in type described from its definition equals its generated constant.
    #[test]
    fn a_described_type_equals_its_generated_description() {
        let mut set = InterfaceSet::new();
        crate::build::add_builtin_interfaces(&mut set).unwrap();
        let ty = TypeName::parse("geometry_msgs/msg/Twist").unwrap();
        let described = leaked(&set, &ty).unwrap();
        let generated =
            <roslite_msgs::geometry_msgs::msg::Twist as roslite_msgs::Message>::TYPE_DESCRIPTION
                .unwrap();
        assert_eq!(described, generated);
        // Kept: the second call gives the same description.
        assert!(std::ptr::eq(described, leaked(&set, &ty).unwrap()));
    }
}
