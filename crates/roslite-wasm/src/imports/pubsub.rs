//! QoS, publishers, subscriptions and their status events.

use super::*;

pub fn qos_profile(g: &mut dyn GuestCalls, profile: i32, out: i32) -> ImportResult {
    let outcome = (|| {
        check_out(g, out, layout::QOS_SIZE, "qos")?;
        let mut q = CQos::default();
        // SAFETY: a valid out-pointer.
        let status = unsafe { roslite_c::pubsub::roslite_qos_profile(profile, &mut q) };
        if status == ROSLITE_OK {
            write_qos(&mut g.parts().0, pointer(out), &q)?;
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub(super) fn c_type(t: &Option<(Option<CString>, Option<CString>)>) -> Option<CType> {
    t.as_ref().map(|(name, hash)| CType {
        name: optional(name),
        hash: optional(hash),
    })
}

pub(super) fn or_null<T>(v: &Option<T>) -> *const T {
    v.as_ref().map_or(std::ptr::null(), |v| v as *const T)
}

pub fn publisher_create(
    g: &mut dyn GuestCalls,
    node: i64,
    topic: i32,
    message_type: i32,
    qos_at: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let topic = string(g, topic, "topic")?;
        let text = self::message_type(g, message_type)?;
        let q = qos(g, qos_at)?;
        check_out(g, out, 8, "publisher")?;
        let ty = c_type(&text);
        let mut publisher = 0;
        // SAFETY: everything passed lives until the call returns.
        let status = unsafe {
            roslite_c::pubsub::roslite_publisher_create(
                node,
                optional(&topic),
                or_null(&ty),
                or_null(&q),
                &mut publisher,
            )
        };
        hand_out(g, status, publisher, out)
    })();
    finish(g, outcome)
}

pub fn publish(g: &mut dyn GuestCalls, publisher: i64, cdr: i32, length: i32) -> ImportResult {
    let outcome = (|| {
        let publisher = native(g, publisher)?;
        let (memory, _) = g.parts();
        let bytes = memory.bytes(pointer(cdr), length as u32)?;
        // Published straight from guest memory, no copy: no guest code runs during the call
        // (the guest's executors never lend their turn, so no callback of this guest runs
        // inline), so the memory neither changes nor moves.
        let (at, n) = (bytes.as_ptr(), bytes.len());
        // SAFETY: `at` points at `n` bytes of guest memory, valid for the call (above).
        Ok(unsafe { roslite_c::pubsub::roslite_publish(publisher, at, n) })
    })();
    finish(g, outcome)
}

pub(super) type EndpointCountFn = unsafe extern "C" fn(u64, *mut usize) -> i32;

pub(super) fn endpoint_count(
    g: &mut dyn GuestCalls,
    endpoint: i64,
    count: i32,
    f: EndpointCountFn,
) -> ImportResult {
    let outcome = (|| {
        let endpoint = native(g, endpoint)?;
        check_out(g, count, 4, "count")?;
        let mut n = 0usize;
        // SAFETY: a valid out-pointer.
        let status = unsafe { f(endpoint, &mut n) };
        if status == ROSLITE_OK {
            g.parts().0.put_u32(pointer(count), n as u32)?;
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub fn publisher_subscription_count(
    g: &mut dyn GuestCalls,
    publisher: i64,
    count: i32,
) -> ImportResult {
    endpoint_count(
        g,
        publisher,
        count,
        roslite_c::pubsub::roslite_publisher_subscription_count,
    )
}

pub fn subscription_publisher_count(
    g: &mut dyn GuestCalls,
    subscription: i64,
    count: i32,
) -> ImportResult {
    endpoint_count(
        g,
        subscription,
        count,
        roslite_c::events::roslite_subscription_publisher_count,
    )
}

#[allow(clippy::too_many_arguments)]
pub fn subscription_create(
    g: &mut dyn GuestCalls,
    node: i64,
    group: i64,
    topic: i32,
    message_type: i32,
    qos_at: i32,
    slot: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let group = native(g, group)?;
        let topic = string(g, topic, "topic")?;
        let text = self::message_type(g, message_type)?;
        let q = qos(g, qos_at)?;
        check_out(g, out, 8, "subscription")?;
        let ty = c_type(&text);
        let described = topic
            .as_ref()
            .map_or(String::new(), |t| t.to_string_lossy().into_owned());
        let user = g.state().target(
            slot,
            CallbackKind::Message,
            format!("subscription callback of {described}"),
        );
        let mut subscription = 0;
        // SAFETY: everything passed lives until the call returns; `user` until the guest ends.
        let status = unsafe {
            roslite_c::pubsub::roslite_subscription_create_in(
                node,
                group,
                optional(&topic),
                or_null(&ty),
                or_null(&q),
                Some(on_message),
                user,
                &mut subscription,
            )
        };
        let status = hand_out(g, status, subscription, out)?;
        if status == ROSLITE_OK {
            g.state()
                .shared
                .subscription_slots
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((subscription, slot));
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub fn subscription_on_message_lost(
    g: &mut dyn GuestCalls,
    subscription: i64,
    slot: i32,
) -> ImportResult {
    let outcome = (|| {
        let subscription = native(g, subscription)?;
        let user = g.state().target(
            slot,
            CallbackKind::MessageLost,
            "message-lost callback".into(),
        );
        // SAFETY: `user` lives until the guest ends.
        Ok(unsafe {
            roslite_c::pubsub::roslite_subscription_on_message_lost(
                subscription,
                Some(on_message_lost),
                user,
            )
        })
    })();
    finish(g, outcome)
}

pub fn on_matched(g: &mut dyn GuestCalls, endpoint: i64, slot: i32) -> ImportResult {
    let outcome =
        (|| {
            let endpoint = native(g, endpoint)?;
            let user = g
                .state()
                .target(slot, CallbackKind::Matched, "matched callback".into());
            // SAFETY: `user` lives until the guest ends.
            Ok(unsafe {
                roslite_c::events::roslite_on_matched(endpoint, Some(on_matched_event), user)
            })
        })();
    finish(g, outcome)
}

pub fn on_incompatible_qos(g: &mut dyn GuestCalls, endpoint: i64, slot: i32) -> ImportResult {
    let outcome = (|| {
        let endpoint = native(g, endpoint)?;
        let user = g.state().target(
            slot,
            CallbackKind::IncompatibleQos,
            "incompatible-QoS callback".into(),
        );
        // SAFETY: `user` lives until the guest ends.
        Ok(unsafe {
            roslite_c::events::roslite_on_incompatible_qos(
                endpoint,
                Some(on_incompatible_qos_event),
                user,
            )
        })
    })();
    finish(g, outcome)
}
