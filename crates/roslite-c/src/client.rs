//! Service clients of serialized requests and responses.

use std::ffi::c_char;
use std::sync::Arc;

use roslite::CallError;

use crate::handles::{self, Object};
use crate::pubsub::{check_serialized, type_info};
use crate::status::{guard, Failure, Status, ROSLITE_BAD_MESSAGE, ROSLITE_ERROR, ROSLITE_TIMEOUT};
use crate::status::{ROSLITE_SHUTDOWN, ROSLITE_UNKNOWN_TYPE};
use crate::text::{bytes, put, text, timeout};

/// `roslite_service_type`.
#[repr(C)]
pub struct CServiceType {
    pub name: *const c_char,
    pub request_hash: *const c_char,
    pub response_hash: *const c_char,
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
        let client = node.create_serialized_client(service, request, response)?;
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
        let client = handles::client(client)?;
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
        let client = handles::client(client)?;
        let request = bytes(request, length, "request")?;
        check_serialized(request)?;
        if response.is_null() {
            return Err(Failure::invalid_argument("response is NULL"));
        }
        let limit = timeout(timeout_ns).unwrap_or(std::time::Duration::from_secs(u64::MAX >> 2));
        match client.call(request, limit) {
            Ok(reply) => put(response, into_buffer(reply.bytes()), "response"),
            Err(e) => {
                let status = match e {
                    CallError::Timeout { .. } => ROSLITE_TIMEOUT,
                    CallError::Cancelled => ROSLITE_SHUTDOWN,
                    CallError::MalformedResponse { .. } => ROSLITE_BAD_MESSAGE,
                    _ => ROSLITE_ERROR,
                };
                Err(Failure::new(status, e.to_string()))
            }
        }
    })
}
