//! Status events of publishers and subscriptions (matched, incompatible QoS) and the graph's
//! name listings.

use std::ffi::{c_char, c_void, CString};

use roslite::{IncompatibleQosStatus, MatchedStatus, QosPolicyKind};

use crate::convert::UserData;
use crate::handles::{self, Object};
use crate::status::{guard, Failure, Status};
use crate::text::put;

pub type MatchedCallback = unsafe extern "C" fn(*mut c_void, i32, i32, i32);
pub type IncompatibleQosCallback = unsafe extern "C" fn(*mut c_void, i32, i32);

/// `roslite_qos_policy`'s numbering of the policy an incompatible pair disagreed on.
fn policy_code(policy: Option<QosPolicyKind>) -> i32 {
    match policy {
        None => 0,
        Some(QosPolicyKind::Reliability) => 1,
        Some(QosPolicyKind::Durability) => 2,
        Some(QosPolicyKind::Deadline) => 3,
        Some(QosPolicyKind::Liveliness) => 4,
        Some(QosPolicyKind::Lifespan) => 5,
        Some(QosPolicyKind::Ownership) => 6,
        Some(QosPolicyKind::DataRepresentation) => 7,
        Some(_) => 8,
    }
}

fn clamp(value: u32) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}

fn matched_call(callback: MatchedCallback, user: UserData) -> impl FnMut(MatchedStatus) + Send {
    move |status| {
        let user = user;
        // SAFETY: the caller promised `callback` takes `user_data` while the endpoint lives.
        unsafe {
            callback(
                user.0,
                clamp(status.current_count),
                status.current_count_change,
                clamp(status.total_count),
            );
        }
    }
}

fn incompatible_call(
    callback: IncompatibleQosCallback,
    user: UserData,
) -> impl FnMut(IncompatibleQosStatus) + Send {
    move |status| {
        let user = user;
        // SAFETY: as in `matched_call`.
        unsafe {
            callback(
                user.0,
                clamp(status.total_count),
                policy_code(status.last_policy),
            )
        };
    }
}

/// # Safety
/// `callback` stays callable with `user_data` while the endpoint lives.
#[no_mangle]
pub unsafe extern "C" fn roslite_on_matched(
    endpoint: u64,
    callback: Option<MatchedCallback>,
    user_data: *mut c_void,
) -> Status {
    guard(|| {
        let callback = callback.ok_or_else(|| Failure::invalid_argument("callback is NULL"))?;
        let user = UserData(user_data);
        handles::with(endpoint, "publisher or subscription", |o| match o {
            Object::Publisher(p) => {
                p.on_matched(matched_call(callback, user));
                Some(())
            }
            Object::LifecyclePublisher(p) => {
                p.inner().on_matched(matched_call(callback, user));
                Some(())
            }
            Object::Subscription(s) => {
                s.on_matched(matched_call(callback, user));
                Some(())
            }
            _ => None,
        })
    })
}

/// # Safety
/// `callback` stays callable with `user_data` while the endpoint lives.
#[no_mangle]
pub unsafe extern "C" fn roslite_on_incompatible_qos(
    endpoint: u64,
    callback: Option<IncompatibleQosCallback>,
    user_data: *mut c_void,
) -> Status {
    guard(|| {
        let callback = callback.ok_or_else(|| Failure::invalid_argument("callback is NULL"))?;
        let user = UserData(user_data);
        handles::with(endpoint, "publisher or subscription", |o| match o {
            Object::Publisher(p) => {
                p.on_incompatible_qos(incompatible_call(callback, user));
                Some(())
            }
            Object::LifecyclePublisher(p) => {
                p.inner()
                    .on_incompatible_qos(incompatible_call(callback, user));
                Some(())
            }
            Object::Subscription(s) => {
                s.on_incompatible_qos(incompatible_call(callback, user));
                Some(())
            }
            _ => None,
        })
    })
}

/// # Safety
/// `count` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_subscription_publisher_count(
    subscription: u64,
    count: *mut usize,
) -> Status {
    guard(|| {
        let n = handles::with(subscription, "subscription", |o| match o {
            Object::Subscription(s) => Some(s.publisher_count()),
            _ => None,
        })?;
        put(count, n, "count")
    })
}

/// Of the publishers `roslite_subscription_publisher_count` counts, those known to send to the
/// subscription already (`Subscription::acknowledged_publisher_count`).
///
/// # Safety
/// `count` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_subscription_acknowledged_publisher_count(
    subscription: u64,
    count: *mut usize,
) -> Status {
    guard(|| {
        let n = handles::with(subscription, "subscription", |o| match o {
            Object::Subscription(s) => Some(s.acknowledged_publisher_count()),
            _ => None,
        })?;
        put(count, n, "count")
    })
}

/// `roslite_names`: `count` names, each with its types comma-joined in `types[i]`, all owned by
/// roslite until `roslite_names_fini`.
#[repr(C)]
pub struct CNames {
    pub count: usize,
    pub names: *mut *mut c_char,
    pub types: *mut *mut c_char,
}

fn owned(text: &str) -> *mut c_char {
    CString::new(text.replace('\0', ""))
        .unwrap_or_default()
        .into_raw()
}

fn into_names(entries: Vec<(String, String)>) -> CNames {
    let count = entries.len();
    let names: Box<[*mut c_char]> = entries.iter().map(|(n, _)| owned(n)).collect();
    let types: Box<[*mut c_char]> = entries.iter().map(|(_, t)| owned(t)).collect();
    CNames {
        count,
        names: Box::into_raw(names).cast(),
        types: Box::into_raw(types).cast(),
    }
}

/// # Safety
/// `names` is null or was filled by roslite and not freed yet.
#[no_mangle]
pub unsafe extern "C" fn roslite_names_fini(names: *mut CNames) {
    let Some(names) = names.as_mut() else {
        return;
    };
    for list in [names.names, names.types] {
        if list.is_null() {
            continue;
        }
        // SAFETY: from `into_names`, `count` owned strings in a boxed slice.
        let items = Box::from_raw(std::ptr::slice_from_raw_parts_mut(list, names.count));
        for item in items.iter() {
            if !item.is_null() {
                drop(CString::from_raw(*item));
            }
        }
    }
    names.count = 0;
    names.names = std::ptr::null_mut();
    names.types = std::ptr::null_mut();
}

/// # Safety
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_node_topic_names_and_types(node: u64, out: *mut CNames) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let entries = node
            .topic_names_and_types()
            .into_iter()
            .map(|(name, types)| (name, types.join(",")))
            .collect();
        put(out, into_names(entries), "out")
    })
}

/// # Safety
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_node_service_names_and_types(
    node: u64,
    out: *mut CNames,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let entries = node
            .service_names_and_types()
            .into_iter()
            .map(|(name, types)| (name, types.join(",")))
            .collect();
        put(out, into_names(entries), "out")
    })
}

/// # Safety
/// `out` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_node_names(node: u64, out: *mut CNames) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let entries = node
            .node_names()
            .into_iter()
            .map(|name| (name, String::new()))
            .collect();
        put(out, into_names(entries), "out")
    })
}
