//! The standard QoS profiles, publishers and subscriptions of serialized messages.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use roslite::{MessageInfo, QosProfile};

use crate::convert::{
    check_serialized, message_type, qos_of, CMessageInfo, CQos, CType, MessageCallback, UserData,
};
use crate::handles::{self, Object};
use crate::status::{guard, Failure, Status, ROSLITE_ERROR};
use crate::text::{bytes, put, text};

/// # Safety
/// `qos` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_qos_profile(profile: i32, qos: *mut CQos) -> Status {
    guard(|| {
        let chosen = match profile {
            0 => QosProfile::DEFAULT,
            1 => QosProfile::SENSOR_DATA,
            2 => QosProfile::SERVICES_DEFAULT,
            3 => QosProfile::PARAMETERS,
            4 => QosProfile::SYSTEM_DEFAULT,
            _ => {
                return Err(Failure::invalid_argument(format!(
                    "{profile} is not a ROSLITE_QOS_PROFILE_* value (0 to 4)"
                )))
            }
        };
        put(qos, chosen.into(), "qos")
    })
}

/// # Safety
/// `topic` is a string, `ty` and `qos` readable, `out` writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_publisher_create(
    node: u64,
    topic: *const c_char,
    ty: *const CType,
    qos: *const CQos,
    out: *mut u64,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let topic = text(topic, "topic")?;
        let ty = message_type(ty)?;
        let qos = qos_of(qos)?;
        let publisher = node.create_serialized_publisher(topic, ty, qos)?;
        put(
            out,
            handles::insert(Object::Publisher(Arc::new(publisher))),
            "publisher",
        )
    })
}

/// # Safety
/// `cdr` is null (with `length` 0) or holds `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn roslite_publish(publisher: u64, cdr: *const u8, length: usize) -> Status {
    guard(|| {
        let publisher = handles::sender(publisher)?;
        let cdr = bytes(cdr, length, "cdr")?;
        check_serialized(cdr)?;
        publisher
            .publish(cdr)
            .map_err(|e| Failure::new(ROSLITE_ERROR, e.to_string()))
    })
}

/// # Safety
/// `count` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_publisher_subscription_count(
    publisher: u64,
    count: *mut usize,
) -> Status {
    guard(|| {
        put(
            count,
            handles::with_publisher(publisher, |p| p.subscription_count())?,
            "count",
        )
    })
}

/// Of the subscriptions `roslite_publisher_subscription_count` counts, those known to take the
/// publisher's messages already (`Publisher::acknowledged_subscription_count`).
///
/// # Safety
/// `count` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_publisher_acknowledged_subscription_count(
    publisher: u64,
    count: *mut usize,
) -> Status {
    guard(|| {
        put(
            count,
            handles::with_publisher(publisher, |p| p.acknowledged_subscription_count())?,
            "count",
        )
    })
}

/// # Safety
/// `topic` is a string, `ty` and `qos` readable, `out` writable; `callback` stays callable with
/// `user_data` while the subscription lives.
#[no_mangle]
pub unsafe extern "C" fn roslite_subscription_create(
    node: u64,
    topic: *const c_char,
    ty: *const CType,
    qos: *const CQos,
    callback: Option<MessageCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    roslite_subscription_create_in(node, 0, topic, ty, qos, callback, user_data, out)
}

/// # Safety
/// As [`roslite_subscription_create`].
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature
pub unsafe extern "C" fn roslite_subscription_create_in(
    node: u64,
    group: u64,
    topic: *const c_char,
    ty: *const CType,
    qos: *const CQos,
    callback: Option<MessageCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let group = handles::group_of(&node, group)?;
        let topic = text(topic, "topic")?;
        let ty = message_type(ty)?;
        let qos = qos_of(qos)?;
        let callback = callback.ok_or_else(|| Failure::invalid_argument("callback is NULL"))?;
        let user = UserData(user_data);
        let deliver = move |payload: &roslite_cdr::SharedBuf, info: &MessageInfo| {
            let user = user;
            let bytes = payload.bytes();
            let info = CMessageInfo::from(info);
            // SAFETY: the caller promised `callback` takes these for the subscription's life.
            unsafe { callback(user.0, bytes.as_ptr(), bytes.len(), &info) };
        };
        let subscription = match group {
            Some(group) => {
                node.create_serialized_subscription_in(&group, topic, ty, qos, deliver)?
            }
            None => node.create_serialized_subscription(topic, ty, qos, deliver)?,
        };
        put(
            out,
            handles::insert(Object::Subscription(subscription)),
            "subscription",
        )
    })
}

pub type MessageLostCallback = unsafe extern "C" fn(*mut c_void, u64, u64);

/// # Safety
/// `callback` stays callable with `user_data` while the subscription lives.
#[no_mangle]
pub unsafe extern "C" fn roslite_subscription_on_message_lost(
    subscription: u64,
    callback: Option<MessageLostCallback>,
    user_data: *mut c_void,
) -> Status {
    guard(|| {
        let callback = callback.ok_or_else(|| Failure::invalid_argument("callback is NULL"))?;
        let user = UserData(user_data);
        handles::with(subscription, "subscription", |o| match o {
            Object::Subscription(s) => {
                s.on_message_lost(move |status| {
                    let user = user;
                    // SAFETY: the caller promised `callback` takes `user_data` meanwhile.
                    unsafe { callback(user.0, status.total_count, status.total_count_change) };
                });
                Some(())
            }
            _ => None,
        })
    })
}
