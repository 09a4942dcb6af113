//! Service clients of serialized requests and responses.

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use roslite::CallError;

use crate::handles::{self, ClientEntry, Object};
use roslite::serialized::TypeInfo;

use crate::convert::{check_serialized, type_info};
use crate::convert::{qos_of, CQos, UserData};
use crate::status::{guard, Failure, Status, ROSLITE_BAD_MESSAGE, ROSLITE_ERROR, ROSLITE_TIMEOUT};
use crate::status::{ROSLITE_NOT_FOUND, ROSLITE_OK, ROSLITE_SHUTDOWN, ROSLITE_UNKNOWN_TYPE};
use crate::text::{bytes, put, text, timeout};

/// `roslite_service_type`.
#[repr(C)]
pub struct CServiceType {
    pub name: *const c_char,
    pub request_hash: *const c_char,
    pub response_hash: *const c_char,
}

fn call_status(e: &CallError) -> Status {
    match e {
        CallError::Timeout { .. } => ROSLITE_TIMEOUT,
        CallError::Cancelled => ROSLITE_SHUTDOWN,
        CallError::MalformedResponse { .. } => ROSLITE_BAD_MESSAGE,
        _ => ROSLITE_ERROR,
    }
}

/// `roslite_buffer`.
#[repr(C)]
pub struct CBuffer {
    pub data: *mut u8,
    pub length: usize,
}

/// # Safety
/// `buffer` is null or was filled by roslite and not given back yet.
#[no_mangle]
pub unsafe extern "C" fn roslite_buffer_fini(buffer: *mut CBuffer) {
    let Some(buffer) = buffer.as_mut() else {
        return;
    };
    if !buffer.data.is_null() {
        // SAFETY: `data`/`length` came from `Box<[u8]>::into_raw` in `into_buffer`.
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            buffer.data,
            buffer.length,
        )));
    }
    buffer.data = std::ptr::null_mut();
    buffer.length = 0;
}

fn into_buffer(bytes: &[u8]) -> CBuffer {
    let boxed: Box<[u8]> = bytes.into();
    let length = boxed.len();
    CBuffer {
        data: Box::into_raw(boxed).cast::<u8>(),
        length,
    }
}

/// The service type's name and its request and response types.
///
/// # Safety
/// `ty` is null or readable with valid strings.
unsafe fn service_types(
    ty: *const CServiceType,
) -> Result<(&'static str, (TypeInfo, TypeInfo)), Failure> {
    let ty = ty
        .as_ref()
        .ok_or_else(|| Failure::invalid_argument("type is NULL"))?;
    let name = text(ty.name, "type->name")?;
    if name.split('/').nth(1) != Some("srv") {
        return Err(Failure::new(
            ROSLITE_UNKNOWN_TYPE,
            format!("service type name '{name}' is not of the form 'package/srv/Name'"),
        ));
    }
    let request = type_info(
        &format!("{name}_Request"),
        text(ty.request_hash, "type->request_hash")?,
        "srv",
    )?;
    let response = type_info(
        &format!("{name}_Response"),
        text(ty.response_hash, "type->response_hash")?,
        "srv",
    )?;
    // The request's interned name less its suffix: a name that lives as long as the process.
    let interned = request
        .type_name
        .strip_suffix("_Request")
        .unwrap_or(request.type_name);
    Ok((interned, (request, response)))
}

pub type RequestCallback = unsafe extern "C" fn(*mut c_void, *const u8, usize, u64);

/// # Safety
/// `service` is a string, `ty` readable with valid strings, `qos` null or readable, `out`
/// writable; `callback` stays callable with `user_data` while the service lives.
#[no_mangle]
pub unsafe extern "C" fn roslite_service_create(
    node: u64,
    service: *const c_char,
    ty: *const CServiceType,
    qos: *const CQos,
    callback: Option<RequestCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    roslite_service_create_in(node, 0, service, ty, qos, callback, user_data, out)
}

/// # Safety
/// As [`roslite_service_create`].
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature
pub unsafe extern "C" fn roslite_service_create_in(
    node: u64,
    group: u64,
    service: *const c_char,
    ty: *const CServiceType,
    qos: *const CQos,
    callback: Option<RequestCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let group = handles::group_of(&node, group)?;
        let service = text(service, "service")?;
        let (type_name, types) = service_types(ty)?;
        let qos = if qos.is_null() {
            roslite::QosProfile::SERVICES_DEFAULT
        } else {
            qos_of(qos)?
        };
        let callback = callback.ok_or_else(|| Failure::invalid_argument("callback is NULL"))?;
        let user = UserData(user_data);
        let serve = move |request: &roslite_cdr::SharedBuf, responder| {
            let user = user;
            let responder = handles::insert(Object::Responder(Mutex::new(Some(responder))));
            let bytes = request.bytes();
            // SAFETY: the caller promised `callback` takes these while the service lives.
            unsafe { callback(user.0, bytes.as_ptr(), bytes.len(), responder) };
        };
        let mut server = match group {
            Some(group) => {
                node.create_serialized_service_in(&group, service, type_name, types, qos, serve)?
            }
            None => node.create_serialized_service(service, type_name, types, qos, serve)?,
        };
        // As rcl registers a server's service type with its node.
        if let Some(hash) = crate::types::service_hash(type_name) {
            server.register_service_type_later(&hash, type_name, crate::types::describe);
        }
        put(
            out,
            handles::insert(Object::Service(Arc::new(server))),
            "service",
        )
    })
}

/// # Safety
/// `cdr` holds `length` bytes.
#[no_mangle]
pub unsafe extern "C" fn roslite_service_send_response(
    responder: u64,
    cdr: *const u8,
    length: usize,
) -> Status {
    guard(|| {
        let cdr = bytes(cdr, length, "cdr")?;
        check_serialized(cdr)?;
        handles::take_responder(responder)?.send(cdr);
        Ok(())
    })
}

/// # Safety
/// `service` is a string, `ty` readable with valid strings, `out` writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_client_create(
    node: u64,
    service: *const c_char,
    ty: *const CServiceType,
    out: *mut u64,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let service = text(service, "service")?;
        let (type_name, (request, response)) = service_types(ty)?;
        let mut client = node.create_serialized_client(service, request, response)?;
        if let Some(hash) = crate::types::service_hash(type_name) {
            client.register_service_type_later(&hash, type_name, crate::types::describe);
        }
        let client = ClientEntry {
            client,
            next_id: AtomicI64::new(1),
            pending: Mutex::default(),
        };
        put(
            out,
            handles::insert(Object::Client(Arc::new(client))),
            "client",
        )
    })
}

#[no_mangle]
pub extern "C" fn roslite_client_wait_for_service(client: u64, timeout_ns: i64) -> Status {
    guard(|| {
        let client = &handles::client(client)?.client;
        let ready = match timeout(timeout_ns) {
            Some(limit) => client.wait_for_service(limit),
            None => loop {
                if client.wait_for_service(std::time::Duration::from_secs(1)) {
                    break true;
                }
            },
        };
        if ready {
            Ok(())
        } else {
            Err(Failure::new(
                ROSLITE_TIMEOUT,
                format!("no server of '{}' appeared in time", client.service_name()),
            ))
        }
    })
}

/// # Safety
/// `request` holds `length` bytes; `response` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_client_call(
    client: u64,
    request: *const u8,
    length: usize,
    timeout_ns: i64,
    response: *mut CBuffer,
) -> Status {
    guard(|| {
        let client = &handles::client(client)?.client;
        let request = bytes(request, length, "request")?;
        check_serialized(request)?;
        if response.is_null() {
            return Err(Failure::invalid_argument("response is NULL"));
        }
        let limit = timeout(timeout_ns).unwrap_or(std::time::Duration::from_secs(u64::MAX >> 2));
        match client.call(request, limit) {
            Ok(reply) => put(response, into_buffer(reply.bytes()), "response"),
            Err(e) => Err(Failure::new(call_status(&e), e.to_string())),
        }
    })
}

pub type ResponseCallback = unsafe extern "C" fn(*mut c_void, i32, *const u8, usize);

/// # Safety
/// `request` holds `length` bytes; `request_id` is null or writable; `callback` stays
/// callable with `user_data` until it was called or the request removed.
#[no_mangle]
pub unsafe extern "C" fn roslite_client_send_request(
    client: u64,
    request: *const u8,
    length: usize,
    callback: Option<ResponseCallback>,
    user_data: *mut c_void,
    request_id: *mut i64,
) -> Status {
    guard(|| {
        let entry = handles::client(client)?;
        let request = bytes(request, length, "request")?;
        check_serialized(request)?;
        let callback = callback.ok_or_else(|| Failure::invalid_argument("callback is NULL"))?;
        let user = UserData(user_data);
        let id = entry.next_id.fetch_add(1, Ordering::Relaxed);
        let weak = Arc::downgrade(&entry);
        let key = entry
            .client
            .call_with(request, move |result| {
                let user = user;
                if let Some(entry) = weak.upgrade() {
                    entry.forget_id(id);
                }
                // SAFETY: the caller promised `callback` takes `user_data` until called.
                unsafe {
                    match result {
                        Ok(reply) => {
                            let bytes = reply.bytes();
                            callback(user.0, ROSLITE_OK, bytes.as_ptr(), bytes.len());
                        }
                        Err(e) => callback(user.0, call_status(&e), std::ptr::null(), 0),
                    }
                }
            })
            .map_err(|e| Failure::new(call_status(&e), e.to_string()))?;
        // Not held while sending: a reply is completed on a network thread, which must not
        // wait for this one. A reply that came before the id was noted leaves it noted for a
        // call no longer pending: noted after, it is dropped again here.
        entry
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, key);
        if !entry.client.is_pending(key) {
            entry.forget_id(id);
        }
        if !request_id.is_null() {
            request_id.write(id);
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn roslite_client_remove_pending_request(client: u64, request_id: i64) -> Status {
    guard(|| {
        let entry = handles::client(client)?;
        match entry.forget_id(request_id) {
            Some(key) if entry.client.forget(key) => Ok(()),
            _ => Err(Failure::new(
                ROSLITE_NOT_FOUND,
                format!("request {request_id} is not pending (answered, removed or never sent)"),
            )),
        }
    })
}
