//! The parameter table and its rules, without I/O: declare, set, undeclare, list, describe.
//!
//! Locking: `state` guards the table and is held only briefly, so on-set callbacks (and any
//! other thread) can read parameters while a change is being validated. `modify` serializes
//! changes and is held across validation, callbacks and commit, so what the callbacks approved
//! is exactly what gets applied. `modifier` records the thread holding `modify`: a callback
//! that tries to change parameters gets [`ParameterError::ModifiedInCallback`] instead of a
//! deadlock.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::{self, ThreadId};

use super::{
    overrides::{validate_name, Overrides},
    ListParametersResult, Parameter, ParameterDescriptor, ParameterError, ParameterType,
    ParameterValue, SetParametersResult,
};

type SetCallback = Arc<dyn Fn(&[Parameter]) -> SetParametersResult + Send + Sync>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What one change did, for `/parameter_events`.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Change {
    pub new: Vec<Parameter>,
    pub changed: Vec<Parameter>,
    pub deleted: Vec<Parameter>,
}

impl Change {
    pub fn is_empty(&self) -> bool {
        self.new.is_empty() && self.changed.is_empty() && self.deleted.is_empty()
    }
}

struct Declared {
    value: ParameterValue,
    descriptor: ParameterDescriptor,
}

#[derive(Default)]
struct State {
    declared: BTreeMap<String, Declared>,
    overrides: Overrides,
    allow_undeclared: bool,
}

#[derive(Default)]
struct Callbacks {
    next_id: u64,
    /// In the order added; run newest first.
    list: Vec<(u64, SetCallback)>,
}

pub(crate) struct ParameterStore {
    state: Mutex<State>,
    modify: Mutex<()>,
    modifier: Mutex<Option<ThreadId>>,
    callbacks: Arc<Mutex<Callbacks>>,
}

/// Keeps an on-set parameters callback registered; dropping it removes the callback.
#[must_use = "the callback is removed when this handle is dropped"]
pub struct OnSetParametersCallbackHandle {
    callbacks: Weak<Mutex<Callbacks>>,
    id: Option<u64>,
}

impl OnSetParametersCallbackHandle {
    /// Leaves the callback registered for the life of the node.
    pub fn keep_forever(mut self) {
        self.id = None;
    }
}

impl Drop for OnSetParametersCallbackHandle {
    fn drop(&mut self) {
        if let (Some(id), Some(callbacks)) = (self.id, self.callbacks.upgrade()) {
            lock(&callbacks).list.retain(|(i, _)| *i != id);
        }
    }
}

/// Holds `modify` and marks the thread as changing parameters until dropped.
struct Modifying<'a> {
    store: &'a ParameterStore,
    _guard: MutexGuard<'a, ()>,
}

impl Drop for Modifying<'_> {
    fn drop(&mut self) {
        *lock(&self.store.modifier) = None;
    }
}

/// What a validated set will do to one parameter.
enum Action {
    Declare(Parameter),
    Set(Parameter),
    Undeclare(String),
}

impl ParameterStore {
    pub fn new(overrides: Overrides) -> Self {
        Self {
            state: Mutex::new(State {
                overrides,
                ..State::default()
            }),
            modify: Mutex::new(()),
            modifier: Mutex::new(None),
            callbacks: Arc::default(),
        }
    }

    fn begin_modification(&self, name: &str) -> Result<Modifying<'_>, ParameterError> {
        let me = thread::current().id();
        if *lock(&self.modifier) == Some(me) {
            return Err(ParameterError::ModifiedInCallback {
                name: name.to_owned(),
            });
        }
        let guard = lock(&self.modify);
        *lock(&self.modifier) = Some(me);
        Ok(Modifying {
            store: self,
            _guard: guard,
        })
    }

    /// Runs the callbacks, newest first; the first refusal wins.
    fn run_callbacks(&self, parameters: &[Parameter]) -> Result<(), ParameterError> {
        // Cloned so that a callback may add or drop callbacks without deadlocking.
        let callbacks: Vec<SetCallback> = lock(&self.callbacks)
            .list
            .iter()
            .rev()
            .map(|(_, c)| c.clone())
            .collect();
        for callback in callbacks {
            let result = callback(parameters);
            if !result.successful {
                return Err(ParameterError::Rejected {
                    reason: if result.reason.is_empty() {
                        "refused by an on-set parameters callback".to_owned()
                    } else {
                        result.reason
                    },
                });
            }
        }
        Ok(())
    }

    pub fn add_callback(&self, callback: SetCallback) -> OnSetParametersCallbackHandle {
        let mut callbacks = lock(&self.callbacks);
        let id = callbacks.next_id;
        callbacks.next_id += 1;
        callbacks.list.push((id, callback));
        OnSetParametersCallbackHandle {
            callbacks: Arc::downgrade(&self.callbacks),
            id: Some(id),
        }
    }

    pub fn declare(
        &self,
        name: &str,
        default: ParameterValue,
        mut descriptor: ParameterDescriptor,
    ) -> Result<(ParameterValue, Change), ParameterError> {
        validate_name(name)?;
        let _modifying = self.begin_modification(name)?;
        let override_value = {
            let state = lock(&self.state);
            if state.declared.contains_key(name) {
                return Err(ParameterError::AlreadyDeclared {
                    name: name.to_owned(),
                });
            }
            state.overrides.get(name).cloned()
        };
        let invalid = |reason: String| ParameterError::InvalidDescriptor {
            name: name.to_owned(),
            reason,
        };
        let default_ty = default.parameter_type();
        if default_ty != ParameterType::NotSet {
            if descriptor.ty != ParameterType::NotSet
                && descriptor.ty != default_ty
                && !descriptor.dynamic_typing
            {
                return Err(invalid(format!(
                    "the descriptor says {} but the default value is {default_ty}",
                    descriptor.ty
                )));
            }
            if !descriptor.dynamic_typing {
                descriptor.ty = default_ty;
            }
        }
        let ty = descriptor.ty;
        if ty == ParameterType::NotSet && !descriptor.dynamic_typing {
            return Err(invalid(
                "a statically typed parameter needs a default value or a type".to_owned(),
            ));
        }
        check_range_descriptor(&descriptor, ty).map_err(invalid)?;
        let from_override = override_value.is_some();
        let value = match override_value {
            Some(value) => coerce_empty_array(value, ty),
            None => default,
        };
        if !descriptor.dynamic_typing {
            if value == ParameterValue::NotSet {
                return Err(ParameterError::NoValue {
                    name: name.to_owned(),
                    ty,
                });
            }
            if value.parameter_type() != ty {
                return Err(ParameterError::WrongType {
                    name: name.to_owned(),
                    expected: ty,
                    actual: value.parameter_type(),
                    from_override,
                });
            }
        }
        check_range(name, &descriptor, &value)?;
        let parameter = Parameter {
            name: name.to_owned(),
            value: value.clone(),
        };
        self.run_callbacks(std::slice::from_ref(&parameter))?;
        descriptor.name = name.to_owned();
        lock(&self.state).declared.insert(
            name.to_owned(),
            Declared {
                value: value.clone(),
                descriptor,
            },
        );
        Ok((
            value,
            Change {
                new: vec![parameter],
                ..Change::default()
            },
        ))
    }

    pub fn undeclare(&self, name: &str) -> Result<Change, ParameterError> {
        let _modifying = self.begin_modification(name)?;
        let mut state = lock(&self.state);
        let declared = state
            .declared
            .get(name)
            .ok_or_else(|| ParameterError::NotDeclared {
                name: name.to_owned(),
            })?;
        if declared.descriptor.read_only {
            return Err(ParameterError::ReadOnly {
                name: name.to_owned(),
            });
        }
        if !declared.descriptor.dynamic_typing {
            return Err(ParameterError::StaticallyTyped {
                name: name.to_owned(),
            });
        }
        let removed = state.declared.remove(name).map(|d| d.value);
        Ok(Change {
            deleted: vec![Parameter {
                name: name.to_owned(),
                value: removed.unwrap_or_default(),
            }],
            ..Change::default()
        })
    }

    /// Validates every parameter, runs the callbacks on all of them, then applies all.
    pub fn set_atomically(&self, parameters: &[Parameter]) -> Result<Change, ParameterError> {
        let Some(first) = parameters.first() else {
            return Ok(Change::default());
        };
        for p in parameters {
            validate_name(&p.name)?;
        }
        let _modifying = self.begin_modification(&first.name)?;
        let actions = {
            let state = lock(&self.state);
            parameters
                .iter()
                .filter_map(|p| plan(&state, p).transpose())
                .collect::<Result<Vec<_>, _>>()?
        };
        self.run_callbacks(parameters)?;
        let mut change = Change::default();
        let mut state = lock(&self.state);
        for action in actions {
            match action {
                Action::Declare(p) => {
                    let descriptor = ParameterDescriptor {
                        name: p.name.clone(),
                        dynamic_typing: true,
                        ..ParameterDescriptor::default()
                    };
                    state.declared.insert(
                        p.name.clone(),
                        Declared {
                            value: p.value.clone(),
                            descriptor,
                        },
                    );
                    change.new.push(p);
                }
                Action::Set(p) => {
                    if let Some(declared) = state.declared.get_mut(&p.name) {
                        declared.value = p.value.clone();
                    }
                    change.changed.push(p);
                }
                Action::Undeclare(name) => {
                    let value = state.declared.remove(&name).map(|d| d.value);
                    change.deleted.push(Parameter {
                        name,
                        value: value.unwrap_or_default(),
                    });
                }
            }
        }
        Ok(change)
    }

    pub fn has(&self, name: &str) -> bool {
        lock(&self.state).declared.contains_key(name)
    }

    pub fn get(&self, name: &str) -> Result<ParameterValue, ParameterError> {
        let state = lock(&self.state);
        match state.declared.get(name) {
            Some(declared) => Ok(declared.value.clone()),
            None if state.allow_undeclared => Ok(ParameterValue::NotSet),
            None => Err(ParameterError::NotDeclared {
                name: name.to_owned(),
            }),
        }
    }

    pub fn describe<S: AsRef<str>>(
        &self,
        names: &[S],
    ) -> Result<Vec<ParameterDescriptor>, ParameterError> {
        let state = lock(&self.state);
        names
            .iter()
            .map(|name| {
                let name = name.as_ref();
                match state.declared.get(name) {
                    Some(declared) => Ok(ParameterDescriptor {
                        // A dynamically typed parameter is described by its current type.
                        ty: declared.value.parameter_type(),
                        ..declared.descriptor.clone()
                    }),
                    None if state.allow_undeclared => Ok(ParameterDescriptor {
                        name: name.to_owned(),
                        ..ParameterDescriptor::default()
                    }),
                    None => Err(ParameterError::NotDeclared {
                        name: name.to_owned(),
                    }),
                }
            })
            .collect()
    }

    pub fn types<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<ParameterType>, ParameterError> {
        names
            .iter()
            .map(|n| self.get(n.as_ref()).map(|v| v.parameter_type()))
            .collect()
    }

    /// rclcpp's `NodeParameters::list_parameters`: with no prefixes and depth 0, everything;
    /// otherwise names equal to a prefix or under `prefix.`, with fewer than `depth` further
    /// `.`s (any number for depth 0), or with no prefixes, fewer than `depth` `.`s in all.
    pub fn list<S: AsRef<str>>(&self, prefixes: &[S], depth: u64) -> ListParametersResult {
        const DEPTH_RECURSIVE: u64 = 0;
        let shallow_enough =
            |s: &str| depth == DEPTH_RECURSIVE || (s.matches('.').count() as u64) < depth;
        let state = lock(&self.state);
        let mut result = ListParametersResult::default();
        for name in state.declared.keys() {
            let listed = if prefixes.is_empty() {
                shallow_enough(name)
            } else {
                prefixes.iter().any(|prefix| {
                    let prefix = prefix.as_ref();
                    name == prefix
                        || name
                            .strip_prefix(prefix)
                            .and_then(|rest| rest.strip_prefix('.'))
                            .is_some_and(shallow_enough)
                })
            };
            if !listed {
                continue;
            }
            result.names.push(name.clone());
            if let Some((prefix, _)) = name.rsplit_once('.') {
                if !result.prefixes.iter().any(|p| p == prefix) {
                    result.prefixes.push(prefix.to_owned());
                }
            }
        }
        result
    }

    /// Every declared parameter with its value, in name order.
    pub fn values(&self) -> Vec<Parameter> {
        lock(&self.state)
            .declared
            .iter()
            .map(|(name, declared)| Parameter {
                name: name.clone(),
                value: declared.value.clone(),
            })
            .collect()
    }

    /// Makes the table hold exactly `parameters`: each declared one takes its value, one not
    /// declared here is declared dynamically typed, and a declared one not among them is
    /// removed. No on-set callback runs and no event is announced: for restoring state that
    /// the node's callbacks already accepted elsewhere (a node moved to another host).
    ///
    /// # Errors
    /// [`ParameterError::WrongType`] for a value of another type than a statically typed
    /// parameter's (nothing is changed then); [`ParameterError::ModifiedInCallback`].
    pub fn restore(&self, parameters: &[Parameter]) -> Result<(), ParameterError> {
        let _modifying = self.begin_modification(parameters.first().map_or("", |p| &p.name))?;
        let mut state = lock(&self.state);
        for p in parameters {
            validate_name(&p.name)?;
            if let Some(declared) = state.declared.get(&p.name) {
                let actual = p.value.parameter_type();
                if !declared.descriptor.dynamic_typing && actual != declared.descriptor.ty {
                    return Err(ParameterError::WrongType {
                        name: p.name.clone(),
                        expected: declared.descriptor.ty,
                        actual,
                        from_override: false,
                    });
                }
            }
        }
        state
            .declared
            .retain(|name, _| parameters.iter().any(|p| p.name == *name));
        for p in parameters {
            match state.declared.get_mut(&p.name) {
                Some(declared) => declared.value = p.value.clone(),
                None => {
                    let descriptor = ParameterDescriptor {
                        name: p.name.clone(),
                        dynamic_typing: true,
                        ..ParameterDescriptor::default()
                    };
                    state.declared.insert(
                        p.name.clone(),
                        Declared {
                            value: p.value.clone(),
                            descriptor,
                        },
                    );
                }
            }
        }
        Ok(())
    }

    pub fn set_allow_undeclared(&self, allow: bool) {
        lock(&self.state).allow_undeclared = allow;
    }

    pub fn overrides(&self) -> Vec<Parameter> {
        lock(&self.state)
            .overrides
            .iter()
            .map(|(name, value)| Parameter {
                name: name.clone(),
                value: value.clone(),
            })
            .collect()
    }
}

/// What setting `p` will do, or `None` for nothing (unsetting an undeclared parameter).
fn plan(state: &State, p: &Parameter) -> Result<Option<Action>, ParameterError> {
    let name = || p.name.clone();
    let Some(declared) = state.declared.get(&p.name) else {
        if !state.allow_undeclared {
            return Err(ParameterError::NotDeclared { name: name() });
        }
        return Ok((p.value != ParameterValue::NotSet).then(|| Action::Declare(p.clone())));
    };
    let descriptor = &declared.descriptor;
    if descriptor.read_only {
        return Err(ParameterError::ReadOnly { name: name() });
    }
    let actual = p.value.parameter_type();
    if !descriptor.dynamic_typing && actual != descriptor.ty {
        return Err(ParameterError::WrongType {
            name: name(),
            expected: descriptor.ty,
            actual,
            from_override: false,
        });
    }
    if p.value == ParameterValue::NotSet {
        // rclcpp: setting a dynamically typed parameter to "not set" undeclares it.
        return Ok(Some(Action::Undeclare(name())));
    }
    check_range(&p.name, descriptor, &p.value)?;
    Ok(Some(Action::Set(p.clone())))
}

fn check_range(
    name: &str,
    descriptor: &ParameterDescriptor,
    value: &ParameterValue,
) -> Result<(), ParameterError> {
    match descriptor.range {
        Some(range) if !range.contains(value) => Err(ParameterError::OutOfRange {
            name: name.to_owned(),
            value: value.clone(),
            range,
        }),
        _ => Ok(()),
    }
}

fn check_range_descriptor(
    descriptor: &ParameterDescriptor,
    ty: ParameterType,
) -> Result<(), String> {
    use super::ParameterRange;
    let Some(range) = descriptor.range else {
        return Ok(());
    };
    if !descriptor.dynamic_typing && !range.applies_to(ty) {
        return Err(format!("a {range} cannot constrain a {ty} parameter"));
    }
    match range {
        ParameterRange::Integer { from, to, .. } if from > to => {
            Err(format!("the {range} is empty (from > to)"))
        }
        ParameterRange::FloatingPoint { from, to, step }
            if from.is_nan() || to.is_nan() || from > to || !step.is_finite() || step < 0.0 =>
        {
            Err(format!(
                "the {range} needs from <= to and a finite step >= 0"
            ))
        }
        _ => Ok(()),
    }
}

/// YAML cannot say what an empty sequence holds: `[]` takes the declared array type.
fn coerce_empty_array(value: ParameterValue, ty: ParameterType) -> ParameterValue {
    let empty = match &value {
        ParameterValue::StringArray(v) => v.is_empty(),
        _ => false,
    };
    if !empty {
        return value;
    }
    match ty {
        ParameterType::ByteArray => ParameterValue::ByteArray(Vec::new()),
        ParameterType::BoolArray => ParameterValue::BoolArray(Vec::new()),
        ParameterType::IntegerArray => ParameterValue::IntegerArray(Vec::new()),
        ParameterType::DoubleArray => ParameterValue::DoubleArray(Vec::new()),
        _ => value,
    }
}
