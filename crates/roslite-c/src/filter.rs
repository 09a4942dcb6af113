//! Content-filtered subscriptions (rcl's `content_filter_options`, rclcpp's
//! `SubscriptionOptions::content_filter_options`): creating one, and changing, reading and
//! asking about a subscription's filter. The language is roslite's
//! (`roslite::content_filter`, DDS SQL as Fast DDS reads it).
//!
//! A filter reads a message's fields by its type's REP 2011 description. The subscriptions
//! here see a type by name and hash only, so the description comes from the definitions the
//! library knows (built in, registered, `$AMENT_PREFIX_PATH`; [`crate::types`]), built once per
//! type and kept for the process; a size-optimised library, built without them, filters
//! nothing and says so.

use std::ffi::{c_char, c_void};

use roslite::content_filter::{ContentFilterError, ContentFilterOptions};
use roslite::msgs::description::TypeDescription;
use roslite::serialized::TypeInfo;
use roslite::{MessageInfo, SubscriptionOptions};

use crate::convert::{message_type, qos_of, CMessageInfo, CType, MessageCallback, UserData};
use crate::handles::{self, Object};
use crate::status::{guard, Failure, Status, ROSLITE_ERROR, ROSLITE_INVALID_ARGUMENT};
use crate::text::{copy_out, put, text};

/// The options a C caller passes: `expression` and `count` parameters at `parameters`.
///
/// # Safety
/// `expression` is a string; `parameters` is null (with `count` 0) or holds `count` strings.
unsafe fn options_of(
    expression: *const c_char,
    parameters: *const *const c_char,
    count: usize,
) -> Result<ContentFilterOptions, Failure> {
    let expression = text(expression, "filter_expression")?;
    if parameters.is_null() && count > 0 {
        return Err(Failure::invalid_argument(format!(
            "expression_parameters is NULL but parameter_count is {count}"
        )));
    }
    let mut values = Vec::with_capacity(count.min(128));
    for index in 0..count {
        let what = format!("expression_parameters[{index}]");
        values.push(text(*parameters.add(index), &what)?.to_owned());
    }
    Ok(ContentFilterOptions::new(expression, values))
}

fn filter_failure(error: ContentFilterError) -> Failure {
    Failure::new(ROSLITE_INVALID_ARGUMENT, error.to_string())
}

/// `ty` with its description when a filter needs one.
fn described(ty: TypeInfo, options: &ContentFilterOptions) -> Result<TypeInfo, Failure> {
    if options.is_empty() {
        return Ok(ty);
    }
    Ok(ty.with_description(Some(description(ty.type_name)?)))
}

/// The REP 2011 description of message type `name`, which a filter reads its fields by.
fn description(name: &str) -> Result<&'static TypeDescription, Failure> {
    crate::types::description(name).map_err(|why| {
        Failure::new(
            why.status,
            format!(
                "a content filter reads the fields of {name} by its definition: {}",
                why.message
            ),
        )
    })
}

/// # Safety
/// As `roslite_subscription_create_in`; `filter_expression` is a string and
/// `expression_parameters` holds `parameter_count` strings (or is null with 0).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // the C signature
pub unsafe extern "C" fn roslite_subscription_create_filtered(
    node: u64,
    group: u64,
    topic: *const c_char,
    ty: *const CType,
    qos: *const CQosArg,
    filter_expression: *const c_char,
    expression_parameters: *const *const c_char,
    parameter_count: usize,
    callback: Option<MessageCallback>,
    user_data: *mut c_void,
    out: *mut u64,
) -> Status {
    guard(|| {
        let node = handles::node(node)?;
        let group = handles::group_of(&node, group)?;
        let topic = text(topic, "topic")?;
        let qos = qos_of(qos)?;
        let options = options_of(filter_expression, expression_parameters, parameter_count)?;
        let ty = described(message_type(ty)?, &options)?;
        let callback = callback.ok_or_else(|| Failure::invalid_argument("callback is NULL"))?;
        let user = UserData(user_data);
        let deliver = move |payload: &roslite_cdr::SharedBuf, info: &MessageInfo| {
            let user = user;
            let bytes = payload.bytes();
            let info = CMessageInfo::from(info);
            // SAFETY: the caller promised `callback` takes these for the subscription's life.
            unsafe { callback(user.0, bytes.as_ptr(), bytes.len(), &info) };
        };
        let subscription_options = SubscriptionOptions {
            callback_group: group,
            content_filter_options: options,
        };
        let subscription = node
            .create_serialized_subscription_with_options(
                topic,
                ty,
                qos,
                deliver,
                subscription_options,
            )
            .map_err(|e| match e {
                roslite::NodeError::ContentFilter(e) => filter_failure(e),
                other => Failure::from(other),
            })?;
        put(
            out,
            handles::insert(Object::Subscription(subscription)),
            "subscription",
        )
    })
}

/// The `roslite_qos` argument (named for the header's type).
type CQosArg = crate::convert::CQos;

/// `f` on the subscription behind `handle`.
fn with_subscription<R>(
    handle: u64,
    f: impl FnOnce(&roslite::SerializedSubscription) -> R,
) -> Result<R, Failure> {
    handles::with(handle, "subscription", |o| match o {
        Object::Subscription(s) => Some(f(s)),
        _ => None,
    })
}

/// # Safety
/// `filter_expression` is a string; `expression_parameters` holds `parameter_count` strings
/// (or is null with 0).
#[no_mangle]
pub unsafe extern "C" fn roslite_subscription_set_content_filter(
    subscription: u64,
    filter_expression: *const c_char,
    expression_parameters: *const *const c_char,
    parameter_count: usize,
) -> Status {
    guard(|| {
        let options = options_of(filter_expression, expression_parameters, parameter_count)?;
        if !options.is_empty() {
            // A subscription made without a filter was not described (that takes the
            // definitions' parsing, once per type): it is now.
            let type_name = with_subscription(subscription, |s| s.type_name())?;
            let described = description(type_name)?;
            with_subscription(subscription, |s| s.describe_type(described))?;
        }
        with_subscription(subscription, |s| {
            let parameters: Vec<&str> = options
                .expression_parameters
                .iter()
                .map(String::as_str)
                .collect();
            s.set_content_filter(&options.filter_expression, &parameters)
        })?
        .map_err(filter_failure)
    })
}

/// # Safety
/// `enabled` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_subscription_is_cft_enabled(
    subscription: u64,
    enabled: *mut bool,
) -> Status {
    guard(|| {
        let on = with_subscription(subscription, |s| s.is_cft_enabled())?;
        put(enabled, on, "enabled")
    })
}

/// The subscription's filter, or the failure of a subscription without one.
fn current_filter(subscription: u64) -> Result<ContentFilterOptions, Failure> {
    with_subscription(subscription, |s| s.content_filter())?.ok_or_else(|| {
        Failure::new(
            ROSLITE_ERROR,
            "the subscription has no content filter (roslite_subscription_is_cft_enabled says \
             so)",
        )
    })
}

/// # Safety
/// `buffer` holds `capacity` bytes (or is null), `length` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_subscription_content_filter_expression(
    subscription: u64,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> Status {
    guard(|| {
        let filter = current_filter(subscription)?;
        copy_out(&filter.filter_expression, buffer, capacity, length)
    })
}

/// # Safety
/// `count` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_subscription_content_filter_parameter_count(
    subscription: u64,
    count: *mut usize,
) -> Status {
    guard(|| {
        let filter = current_filter(subscription)?;
        put(count, filter.expression_parameters.len(), "count")
    })
}

/// # Safety
/// `buffer` holds `capacity` bytes (or is null), `length` is writable.
#[no_mangle]
pub unsafe extern "C" fn roslite_subscription_content_filter_parameter(
    subscription: u64,
    index: usize,
    buffer: *mut c_char,
    capacity: usize,
    length: *mut usize,
) -> Status {
    guard(|| {
        let filter = current_filter(subscription)?;
        let count = filter.expression_parameters.len();
        let parameter = filter.expression_parameters.get(index).ok_or_else(|| {
            Failure::invalid_argument(format!(
                "parameter {index} does not exist: the filter has {count} parameter(s)"
            ))
        })?;
        copy_out(parameter, buffer, capacity, length)
    })
}
