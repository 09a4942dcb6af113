//! Service servers and clients.

use super::*;

pub(super) fn c_service_type(t: &Option<ServiceTypeText>) -> Option<CServiceType> {
    t.as_ref().map(|(name, request, response)| CServiceType {
        name: optional(name),
        request_hash: optional(request),
        response_hash: optional(response),
    })
}

#[allow(clippy::too_many_arguments)]
pub fn service_create(
    g: &mut dyn GuestCalls,
    node: i64,
    group: i64,
    service: i32,
    service_type_at: i32,
    qos_at: i32,
    slot: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let group = native(g, group)?;
        let name = string(g, service, "service")?;
        let text = service_type(g, service_type_at)?;
        let q = qos(g, qos_at)?;
        check_out(g, out, 8, "service")?;
        let ty = c_service_type(&text);
        let described = name
            .as_ref()
            .map_or(String::new(), |t| t.to_string_lossy().into_owned());
        let user = g.state().target(
            slot,
            CallbackKind::Request,
            format!("service callback of {described}"),
        );
        let mut server = 0;
        // SAFETY: everything passed lives until the call returns; `user` until the guest ends.
        let status = unsafe {
            roslite_c::client::roslite_service_create_in(
                node,
                group,
                optional(&name),
                or_null(&ty),
                or_null(&q),
                Some(on_request),
                user,
                &mut server,
            )
        };
        hand_out(g, status, server, out)
    })();
    finish(g, outcome)
}

pub fn service_send_response(
    g: &mut dyn GuestCalls,
    responder: i64,
    cdr: i32,
    length: i32,
) -> ImportResult {
    let outcome = (|| {
        let native_responder = native(g, responder)?;
        let bytes = g.parts().0.bytes(pointer(cdr), length as u32)?.to_vec();
        // SAFETY: `bytes` holds `len` bytes.
        let status = unsafe {
            roslite_c::client::roslite_service_send_response(
                native_responder,
                bytes.as_ptr(),
                bytes.len(),
            )
        };
        if status == ROSLITE_OK {
            // The responder ends with its answer (as in the C ABI).
            g.state().handles.remove(responder);
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub fn client_create(
    g: &mut dyn GuestCalls,
    node: i64,
    service: i32,
    service_type_at: i32,
    out: i32,
) -> ImportResult {
    let outcome = (|| {
        let node = native(g, node)?;
        let name = string(g, service, "service")?;
        let text = service_type(g, service_type_at)?;
        check_out(g, out, 8, "client")?;
        let ty = c_service_type(&text);
        let mut client = 0;
        // SAFETY: everything passed lives until the call returns.
        let status = unsafe {
            roslite_c::client::roslite_client_create(
                node,
                optional(&name),
                or_null(&ty),
                &mut client,
            )
        };
        hand_out(g, status, client, out)
    })();
    finish(g, outcome)
}

pub fn client_wait_for_service(
    g: &mut dyn GuestCalls,
    client: i64,
    timeout_ns: i64,
) -> ImportResult {
    let outcome = native(g, client)
        .map(|c| roslite_c::client::roslite_client_wait_for_service(c, timeout_ns));
    finish(g, outcome)
}

pub fn client_call(
    g: &mut dyn GuestCalls,
    client: i64,
    request: i32,
    length: i32,
    timeout_ns: i64,
    response: i32,
) -> ImportResult {
    let outcome: Result<Step<i32>, Fault> = (|| {
        let step = (|| {
            let client = native(g, client)?;
            let bytes = g.parts().0.bytes(pointer(request), length as u32)?.to_vec();
            check_out(g, response, layout::BUFFER_SIZE, "response")?;
            Ok((client, bytes))
        })();
        let (client, bytes) = match step {
            Ok(v) => v,
            Err(r) => return Ok(Err(r)),
        };
        let mut reply = CBuffer {
            data: std::ptr::null_mut(),
            length: 0,
        };
        // SAFETY: `bytes` holds its length; a valid out-pointer.
        let status = unsafe {
            roslite_c::client::roslite_client_call(
                client,
                bytes.as_ptr(),
                bytes.len(),
                timeout_ns,
                &mut reply,
            )
        };
        if status != ROSLITE_OK {
            return Ok(Ok(status));
        }
        // SAFETY: filled by the call above.
        let answer = unsafe { std::slice::from_raw_parts(reply.data, reply.length) }.to_vec();
        // SAFETY: filled by the call above.
        unsafe { roslite_c::client::roslite_buffer_fini(&mut reply) };
        let at = g.alloc(answer.len().max(1) as u32)?;
        if at == 0 {
            return Ok(Err(Refusal(
                ROSLITE_INVALID_ARGUMENT,
                "the guest had no memory for the response".into(),
            )));
        }
        let (mut memory, _) = g.parts();
        let written = memory
            .write(at, &answer)
            .and_then(|()| memory.put_u32(pointer(response), at))
            .and_then(|()| memory.put_u32(pointer(response) + 4, answer.len() as u32));
        Ok(written.map(|()| ROSLITE_OK).map_err(Refusal::from))
    })();
    finish(g, outcome?)
}

pub fn client_send_request(
    g: &mut dyn GuestCalls,
    client: i64,
    request: i32,
    length: i32,
    slot: i32,
    request_id: i32,
) -> ImportResult {
    let outcome = (|| {
        let client = native(g, client)?;
        let bytes = g.parts().0.bytes(pointer(request), length as u32)?.to_vec();
        if request_id != 0 {
            g.parts().0.bytes(pointer(request_id), 8)?;
        }
        let user = g
            .state()
            .target(slot, CallbackKind::Response, "response callback".into());
        let mut id = 0i64;
        // SAFETY: `bytes` holds its length; `user` lives until the guest ends.
        let status = unsafe {
            roslite_c::client::roslite_client_send_request(
                client,
                bytes.as_ptr(),
                bytes.len(),
                Some(on_response),
                user,
                &mut id,
            )
        };
        if status == ROSLITE_OK && request_id != 0 {
            g.parts().0.put_i64(pointer(request_id), id)?;
        }
        Ok(status)
    })();
    finish(g, outcome)
}

pub fn client_remove_pending_request(
    g: &mut dyn GuestCalls,
    client: i64,
    request_id: i64,
) -> ImportResult {
    let outcome = native(g, client)
        .map(|c| roslite_c::client::roslite_client_remove_pending_request(c, request_id));
    finish(g, outcome)
}

/// `roslite_service_configure_introspection` and `roslite_client_configure_introspection`:
/// `endpoint` is the server or client, `qos_at` the event publisher's QoS (0: the default).
fn configure_introspection(
    g: &mut dyn GuestCalls,
    endpoint: i64,
    qos_at: i32,
    state: i32,
    configure: unsafe extern "C" fn(u64, *const roslite_c::convert::CQos, i32) -> i32,
) -> ImportResult {
    let outcome = (|| {
        let endpoint = native(g, endpoint)?;
        let q = qos(g, qos_at)?;
        // SAFETY: the QoS read from the guest lives until the call returns.
        Ok(unsafe { configure(endpoint, or_null(&q), state) })
    })();
    finish(g, outcome)
}

pub fn service_configure_introspection(
    g: &mut dyn GuestCalls,
    server: i64,
    qos_at: i32,
    state: i32,
) -> ImportResult {
    configure_introspection(
        g,
        server,
        qos_at,
        state,
        roslite_c::introspection::roslite_service_configure_introspection,
    )
}

pub fn client_configure_introspection(
    g: &mut dyn GuestCalls,
    client: i64,
    qos_at: i32,
    state: i32,
) -> ImportResult {
    configure_introspection(
        g,
        client,
        qos_at,
        state,
        roslite_c::introspection::roslite_client_configure_introspection,
    )
}
