/*
 * roslite C ABI: ROS 2 nodes in C (and the C++ and WebAssembly APIs built on it).
 *
 * Conventions, the same for every call:
 * - Objects are handles: 64-bit integers, never pointers; 0 is no object. A handle that was
 *   released, never existed or names an object of another kind gives
 *   ROSLITE_INVALID_HANDLE, never a crash. roslite_release() ends any handle.
 * - Every call returns a roslite_status; results come back through out-pointers. On an error,
 *   roslite_last_error() names what went wrong and how to fix it (per thread, until the next
 *   failing call on that thread).
 * - Messages cross as serialized bytes: CDR with its 4-byte encapsulation header, the bytes
 *   ROS 2 puts on the wire, tagged with the ROS type name ("std_msgs/msg/String") and its
 *   RIHS01 type hash. Generated C and C++ types encode and decode them.
 * - Callbacks are (function, user data) pairs. roslite calls them from the thread that spins
 *   the node's executor, with the user data given at creation.
 * - Strings are NUL-terminated UTF-8. Durations are signed nanoseconds.
 * - No Rust panic crosses this boundary: a fault inside roslite is ROSLITE_ERROR.
 */
#ifndef ROSLITE_ROSLITE_H
#define ROSLITE_ROSLITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status ---------------------------------------------------------------------------- */

typedef int32_t roslite_status;

#define ROSLITE_OK 0
/* Anything not listed below; roslite_last_error() says what. */
#define ROSLITE_ERROR 1
/* A null pointer where one is required, text that is not UTF-8, a value out of range. */
#define ROSLITE_INVALID_ARGUMENT 2
/* The handle was released, never existed, or names an object of another kind. */
#define ROSLITE_INVALID_HANDLE 3
/* A node, namespace, topic, service or parameter name that ROS 2 does not accept. */
#define ROSLITE_INVALID_NAME 4
/* Bytes that are not a serialized message (CDR with an encapsulation header). */
#define ROSLITE_BAD_MESSAGE 5
/* A type name that is not "package/msg/Name" (or srv), a hash that is not RIHS01_<64 hex>, a
 * type roslite does not know (see roslite_type_register), or a known type whose hash is not the
 * one roslite computes from its definition (code generated from another definition). */
#define ROSLITE_UNKNOWN_TYPE 6
/* The time given ran out first. */
#define ROSLITE_TIMEOUT 7
/* The context was shut down. */
#define ROSLITE_SHUTDOWN 8
/* No such parameter. */
#define ROSLITE_NOT_FOUND 9
/* A parameter value of another type than the parameter's. */
#define ROSLITE_TYPE_MISMATCH 10
/* An invalid QoS profile (for example KEEP_LAST with depth 0). */
#define ROSLITE_INVALID_QOS 11
/* A lifecycle transition that does not start from the node's current state, or one asked for
 * while another transition's callback runs. */
#define ROSLITE_INVALID_TRANSITION 12

typedef uint64_t roslite_handle;

/* What the last failing call on this thread said went wrong; "" when none failed. Valid until
 * the next failing call on this thread. */
const char *roslite_last_error(void);

/* Ends `handle` (any kind): a node stops when it and everything created from it is released;
 * a context's network stops when it and its nodes are released. */
roslite_status roslite_release(roslite_handle handle);

/* ---- Context --------------------------------------------------------------------------- */

/* A context from the command line (argv[0] first; "--ros-args ... [--]" read as rcl reads it:
 * remapping, -p, --params-file, --log-level) and the environment (ROS_DOMAIN_ID,
 * ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_STATIC_PEERS, ...). argc 0 with argv NULL is allowed. */
roslite_status roslite_context_init(int argc, const char *const *argv, roslite_handle *context);

/* Stops every executor spinning nodes of `context`. */
roslite_status roslite_context_shutdown(roslite_handle context);

/* Whether `context` is running (not shut down). */
roslite_status roslite_context_ok(roslite_handle context, bool *ok);

/* From now on SIGINT and SIGTERM shut down every context (as rclcpp::init does); a second
 * signal ends the process as without the handler. */
roslite_status roslite_install_signal_handlers(void);

/* ---- Node ------------------------------------------------------------------------------ */

/* A node `name` in `namespace_` ("" or NULL: the root namespace, "/"). */
roslite_status roslite_node_create(
    roslite_handle context, const char *name, const char *namespace_, roslite_handle *node);

/* The node's fully qualified name ("/ns/name") or its logger name ("ns.name"), copied into
 * `buffer` (`capacity` bytes, NUL-terminated); `length` gets the length without the NUL.
 * A buffer too small (or NULL) gets nothing and ROSLITE_INVALID_ARGUMENT, `length` the size
 * needed. */
roslite_status roslite_node_fully_qualified_name(
    roslite_handle node, char *buffer, size_t capacity, size_t *length);
roslite_status roslite_node_logger_name(
    roslite_handle node, char *buffer, size_t capacity, size_t *length);

/* The node's ROS time, in nanoseconds since the Unix epoch: the system clock, or under
 * use_sim_time (`--ros-args -p use_sim_time:=true`) the time of the last /clock message (0
 * before the first). What rclcpp's Node::now() returns. */
roslite_status roslite_node_now(roslite_handle node, int64_t *ns);

/* Callback groups: callbacks of one mutually exclusive group never run at the same time;
 * those of a reentrant group may, on a multi-threaded executor. Entities created with the
 * *_in functions join `group`; 0 (and the functions without _in) is the node's default,
 * mutually exclusive group. */
#define ROSLITE_CALLBACK_GROUP_MUTUALLY_EXCLUSIVE 0
#define ROSLITE_CALLBACK_GROUP_REENTRANT 1

roslite_status roslite_callback_group_create(
    roslite_handle node, int32_t kind, roslite_handle *callback_group);

/* Publishers and subscriptions on `topic` known in the graph (this process and others). */
roslite_status roslite_node_count_publishers(roslite_handle node, const char *topic, size_t *count);
roslite_status roslite_node_count_subscribers(
    roslite_handle node, const char *topic, size_t *count);

/* Names from the graph: `count` names and, for topics and services, each one's types
 * (comma-separated; "" for node names). Owned by roslite until roslite_names_fini. */
typedef struct roslite_names {
  size_t count;
  char **names;
  char **types;
} roslite_names;

void roslite_names_fini(roslite_names *names);

/* Topics, services (with their types) and fully qualified node names known in the graph. */
roslite_status roslite_node_topic_names_and_types(roslite_handle node, roslite_names *out);
roslite_status roslite_node_service_names_and_types(roslite_handle node, roslite_names *out);
roslite_status roslite_node_names(roslite_handle node, roslite_names *out);

/* ---- QoS ------------------------------------------------------------------------------- */

#define ROSLITE_HISTORY_KEEP_LAST 0
#define ROSLITE_HISTORY_KEEP_ALL 1
#define ROSLITE_RELIABILITY_RELIABLE 0
#define ROSLITE_RELIABILITY_BEST_EFFORT 1
#define ROSLITE_DURABILITY_VOLATILE 0
#define ROSLITE_DURABILITY_TRANSIENT_LOCAL 1
#define ROSLITE_LIVELINESS_AUTOMATIC 0
#define ROSLITE_LIVELINESS_MANUAL_BY_TOPIC 1

/* A QoS profile. Durations of 0 mean "infinite" (no deadline, no lifespan, no lease). */
typedef struct roslite_qos {
  int32_t history;
  uint32_t depth;
  int32_t reliability;
  int32_t durability;
  int64_t deadline_ns;
  int64_t lifespan_ns;
  int32_t liveliness;
  int64_t liveliness_lease_ns;
} roslite_qos;

#define ROSLITE_QOS_PROFILE_DEFAULT 0
#define ROSLITE_QOS_PROFILE_SENSOR_DATA 1
#define ROSLITE_QOS_PROFILE_SERVICES_DEFAULT 2
#define ROSLITE_QOS_PROFILE_PARAMETERS 3
#define ROSLITE_QOS_PROFILE_SYSTEM_DEFAULT 4

/* One of ROS 2's standard profiles (rmw_qos_profile_default, ..._sensor_data, ...). */
roslite_status roslite_qos_profile(int32_t profile, roslite_qos *qos);

/* ---- Messages -------------------------------------------------------------------------- */

/* A message type as the wire knows it. */
typedef struct roslite_type {
  /* "std_msgs/msg/String". */
  const char *name;
  /* "RIHS01_" and 64 hex digits (the type description hash). */
  const char *hash;
} roslite_type;

/* Every endpoint's type is checked against the types roslite knows, once per type name: the
 * packages it ships (`roslite interface packages`), definitions registered below, and
 * share/<package>/<msg|srv|action>/<Name>.<ext> under the prefixes of $AMENT_PREFIX_PATH, the
 * first of these winning. A known type must carry the hash roslite computes from its definition;
 * an unknown type, or a known one with another hash, is ROSLITE_UNKNOWN_TYPE with a message
 * saying where roslite looked or which hash it computed. */

/* Makes types known to roslite from their definitions. `definition` is a definition bundle:
 * sections separated by a line of '=' characters, each a line "MSG: pkg/msg/Name" (or
 * "SRV: pkg/srv/Name", "ACTION: pkg/action/Name") followed by that file's text. The C header that
 * `roslite interface generate --lang c` writes for an interface roslite does not ship defines it
 * as <pkg>__<kind>__<Name>__TYPE_DEFINITION (that interface and the unshipped ones it uses); the
 * C++ APIs (rclcpp, mROS 2) register generated types themselves. Registering the same text again
 * does nothing; ROSLITE_INVALID_ARGUMENT for a bundle that does not parse or a name registered
 * before with another text. A definition of a type roslite ships does not replace it. */
roslite_status roslite_type_register(const char *definition);

/* What a subscription learns about a message besides its bytes. Timestamps are nanoseconds on
 * this process's CLOCK_MONOTONIC. `publisher_gid` is the publisher's id across the ROS graph
 * (its RTPS writer's GUID, rmw's publisher_gid), all zero for a publisher of this process. */
typedef struct roslite_message_info {
  int64_t source_timestamp_ns;
  int64_t received_timestamp_ns;
  uint64_t publication_sequence_number;
  bool from_intra_process;
  uint8_t publisher_gid[16];
} roslite_message_info;

/* ---- Publisher ------------------------------------------------------------------------- */

roslite_status roslite_publisher_create(
    roslite_handle node, const char *topic, const roslite_type *type, const roslite_qos *qos,
    roslite_handle *publisher);

/* Publishes one serialized message (`cdr`, `length` bytes, encapsulation header first).
 * `publisher` may also be a lifecycle publisher (roslite_lifecycle_publisher_create), which
 * sends only while its node is active; the publisher calls below take one too. */
roslite_status roslite_publish(roslite_handle publisher, const uint8_t *cdr, size_t length);

/* Subscriptions matched with this publisher, in this process and others. */
roslite_status roslite_publisher_subscription_count(roslite_handle publisher, size_t *count);

/* Of those, the subscriptions known to take this publisher's messages already: their side
 * discovered it (over RTPS their participant acknowledged its announcement; over a same-host
 * link their reader attached). A message published before that may not reach them. */
roslite_status roslite_publisher_acknowledged_subscription_count(
    roslite_handle publisher, size_t *count);

/* ---- Subscription ---------------------------------------------------------------------- */

/* Called with each message: its bytes (valid only during the call) and its info. */
typedef void (*roslite_message_callback)(
    void *user_data, const uint8_t *cdr, size_t length, const roslite_message_info *info);

roslite_status roslite_subscription_create(
    roslite_handle node, const char *topic, const roslite_type *type, const roslite_qos *qos,
    roslite_message_callback callback, void *user_data, roslite_handle *subscription);

roslite_status roslite_subscription_create_in(
    roslite_handle node, roslite_handle callback_group, const char *topic,
    const roslite_type *type, const roslite_qos *qos, roslite_message_callback callback,
    void *user_data, roslite_handle *subscription);

/* A subscription, as roslite_subscription_create_in, whose callback gets only the messages for
 * which `filter_expression` holds (rcl's content_filter_options; the DDS SQL subset Fast DDS
 * reads: field paths such as header.frame_id or points[2].x, = <> != < <= > >=, LIKE, BETWEEN,
 * AND, OR, NOT, parentheses; see docs/content-filter.md). `expression_parameters` holds
 * `parameter_count` values for %0, %1, ..., each written as a literal ("'text'", "42", "1.5",
 * "TRUE"); NULL with a count of 0 is none. An empty expression is no filter. A filter holds on
 * every path a message can take, and is announced to Fast DDS writers, which then filter for
 * the subscription. ROSLITE_INVALID_ARGUMENT for a filter that does not compile for the type
 * (roslite_last_error() says what is wrong, where, and how to fix it). */
roslite_status roslite_subscription_create_filtered(
    roslite_handle node, roslite_handle callback_group, const char *topic,
    const roslite_type *type, const roslite_qos *qos, const char *filter_expression,
    const char *const *expression_parameters, size_t parameter_count,
    roslite_message_callback callback, void *user_data, roslite_handle *subscription);

/* Replaces the subscription's content filter (an empty expression removes it), as rcl's
 * rcl_subscription_set_content_filter; on an error the filter in place stays. */
roslite_status roslite_subscription_set_content_filter(
    roslite_handle subscription, const char *filter_expression,
    const char *const *expression_parameters, size_t parameter_count);

/* Whether the subscription has a content filter (rclcpp's is_cft_enabled). */
roslite_status roslite_subscription_is_cft_enabled(roslite_handle subscription, bool *enabled);

/* The content filter's expression, its number of parameters and parameter `index`, copied as
 * roslite_node_fully_qualified_name copies text. ROSLITE_ERROR for a subscription without a
 * filter. */
roslite_status roslite_subscription_content_filter_expression(
    roslite_handle subscription, char *buffer, size_t capacity, size_t *length);
roslite_status roslite_subscription_content_filter_parameter_count(
    roslite_handle subscription, size_t *count);
roslite_status roslite_subscription_content_filter_parameter(
    roslite_handle subscription, size_t index, char *buffer, size_t capacity, size_t *length);

/* Called when messages of a publisher are known to be lost (SAMPLE_LOST): the total so far and
 * the increase since the last call. */
typedef void (*roslite_message_lost_callback)(
    void *user_data, uint64_t total_count, uint64_t total_count_change);

roslite_status roslite_subscription_on_message_lost(
    roslite_handle subscription, roslite_message_lost_callback callback, void *user_data);

/* Publishers matched with this subscription, in this process and others. */
roslite_status roslite_subscription_publisher_count(roslite_handle subscription, size_t *count);

/* Of those, the publishers known to send to this subscription already: their side discovered
 * it (over RTPS their participant acknowledged its announcement; over a same-host link this
 * subscription's reader attached to their writer). */
roslite_status roslite_subscription_acknowledged_publisher_count(
    roslite_handle subscription, size_t *count);

/* ---- Status events (publishers and subscriptions) --------------------------------------- */

/* Called when the endpoint's matches change: matched now, the change, and matched ever. */
typedef void (*roslite_matched_callback)(
    void *user_data, int32_t current_count, int32_t current_count_change, int32_t total_count);
roslite_status roslite_on_matched(
    roslite_handle publisher_or_subscription, roslite_matched_callback callback, void *user_data);

/* The QoS policy an incompatible pair disagreed on. */
#define ROSLITE_QOS_POLICY_NONE 0
#define ROSLITE_QOS_POLICY_RELIABILITY 1
#define ROSLITE_QOS_POLICY_DURABILITY 2
#define ROSLITE_QOS_POLICY_DEADLINE 3
#define ROSLITE_QOS_POLICY_LIVELINESS 4
#define ROSLITE_QOS_POLICY_LIFESPAN 5
#define ROSLITE_QOS_POLICY_OWNERSHIP 6
#define ROSLITE_QOS_POLICY_DATA_REPRESENTATION 7
#define ROSLITE_QOS_POLICY_OTHER 8

/* Called when an endpoint of incompatible QoS is found (rclcpp's REQUESTED/OFFERED
 * INCOMPATIBLE_QOS): how many so far and the last policy. */
typedef void (*roslite_incompatible_qos_callback)(
    void *user_data, int32_t total_count, int32_t last_policy);
roslite_status roslite_on_incompatible_qos(
    roslite_handle publisher_or_subscription, roslite_incompatible_qos_callback callback,
    void *user_data);

/* ---- Timer ----------------------------------------------------------------------------- */

typedef void (*roslite_timer_callback)(void *user_data);

/* A timer on steady time (rclcpp's wall timer) calling `callback` every `period_ns`. */
roslite_status roslite_wall_timer_create(
    roslite_handle node, int64_t period_ns, roslite_timer_callback callback, void *user_data,
    roslite_handle *timer);

/* A timer on the node's clock (simulated time under use_sim_time). */
roslite_status roslite_timer_create(
    roslite_handle node, int64_t period_ns, roslite_timer_callback callback, void *user_data,
    roslite_handle *timer);

roslite_status roslite_wall_timer_create_in(
    roslite_handle node, roslite_handle callback_group, int64_t period_ns,
    roslite_timer_callback callback, void *user_data, roslite_handle *timer);
roslite_status roslite_timer_create_in(
    roslite_handle node, roslite_handle callback_group, int64_t period_ns,
    roslite_timer_callback callback, void *user_data, roslite_handle *timer);

roslite_status roslite_timer_cancel(roslite_handle timer);
roslite_status roslite_timer_reset(roslite_handle timer);

/* ---- Service types and buffers ------------------------------------------------------- */

/* A service type: its name ("example_interfaces/srv/AddTwoInts") and the RIHS01 hashes of its
 * request and response messages. */
typedef struct roslite_service_type {
  const char *name;
  const char *request_hash;
  const char *response_hash;
} roslite_service_type;

/* Bytes roslite allocated for the caller; give them back with roslite_buffer_fini(). */
typedef struct roslite_buffer {
  uint8_t *data;
  size_t length;
} roslite_buffer;

void roslite_buffer_fini(roslite_buffer *buffer);

/* ---- Service server -------------------------------------------------------------------- */

/* Called with each request (bytes valid only during the call) and a responder handle that
 * answers it: roslite_service_send_response(responder, ...), now or later from any thread
 * (the responder ends with it; released unanswered, the client times out). */
typedef void (*roslite_request_callback)(
    void *user_data, const uint8_t *request, size_t length, roslite_handle responder);

/* A server of `service`; `qos` NULL is ROS 2's services default. */
roslite_status roslite_service_create(
    roslite_handle node, const char *service, const roslite_service_type *type,
    const roslite_qos *qos, roslite_request_callback callback, void *user_data,
    roslite_handle *server);

roslite_status roslite_service_create_in(
    roslite_handle node, roslite_handle callback_group, const char *service,
    const roslite_service_type *type, const roslite_qos *qos, roslite_request_callback callback,
    void *user_data, roslite_handle *server);

roslite_status roslite_service_send_response(
    roslite_handle responder, const uint8_t *cdr, size_t length);

/* ---- Service client -------------------------------------------------------------------- */

roslite_status roslite_client_create(
    roslite_handle node, const char *service, const roslite_service_type *type,
    roslite_handle *client);

/* Waits up to `timeout_ns` (negative: for ever) for a server; ROSLITE_TIMEOUT if none came. */
roslite_status roslite_client_wait_for_service(roslite_handle client, int64_t timeout_ns);

/* Sends a serialized request and waits up to `timeout_ns` for the serialized response, which
 * lands in `response` (free it with roslite_buffer_fini). */
roslite_status roslite_client_call(
    roslite_handle client, const uint8_t *request, size_t length, int64_t timeout_ns,
    roslite_buffer *response);

/* Called once with the reply of an asynchronous request (status ROSLITE_OK, bytes valid only
 * during the call) or why there is none (ROSLITE_SHUTDOWN when the client went first), on the
 * thread that received it, outside roslite's locks: it may call roslite. */
typedef void (*roslite_response_callback)(
    void *user_data, roslite_status status, const uint8_t *response, size_t length);

/* Sends a request without waiting (rclcpp's async_send_request); `request_id` (may be NULL)
 * gets the id roslite_client_remove_pending_request takes. */
roslite_status roslite_client_send_request(
    roslite_handle client, const uint8_t *request, size_t length,
    roslite_response_callback callback, void *user_data, int64_t *request_id);

/* Forgets a pending request: its callback is never called (ROSLITE_NOT_FOUND if it is not
 * pending any more). */
roslite_status roslite_client_remove_pending_request(roslite_handle client, int64_t request_id);

/* ---- Service introspection ------------------------------------------------------------- */

/* What a server or client publishes of its calls on `<service>/_service_event`
 * (rcl's rcl_service_introspection_state_t): nothing, each event without the request or
 * response, or each event with it. */
#define ROSLITE_SERVICE_INTROSPECTION_OFF 0
#define ROSLITE_SERVICE_INTROSPECTION_METADATA 1
#define ROSLITE_SERVICE_INTROSPECTION_CONTENTS 2

/* Turns a server's or client's introspection on, changes it, or turns it off (rclcpp's
 * configure_introspection): a server publishes REQUEST_RECEIVED and RESPONSE_SENT, a client
 * REQUEST_SENT and RESPONSE_RECEIVED, as `<Service>_Event` messages. `qos` (NULL: system
 * default) is the event publisher's, fixed when introspection is turned on. The service's
 * event type must be known to roslite (shipped, registered or on $AMENT_PREFIX_PATH:
 * ROSLITE_UNKNOWN_TYPE otherwise); the size-optimised library refuses CONTENTS with
 * ROSLITE_UNKNOWN_TYPE, as it carries no definitions to encode them with. */
roslite_status roslite_service_configure_introspection(
    roslite_handle server, const roslite_qos *qos, int32_t state);
roslite_status roslite_client_configure_introspection(
    roslite_handle client, const roslite_qos *qos, int32_t state);

/* ---- Parameters ------------------------------------------------------------------------ */

/* rcl_interfaces/msg/ParameterType's numbering. */
#define ROSLITE_PARAMETER_NOT_SET 0
#define ROSLITE_PARAMETER_BOOL 1
#define ROSLITE_PARAMETER_INTEGER 2
#define ROSLITE_PARAMETER_DOUBLE 3
#define ROSLITE_PARAMETER_STRING 4
#define ROSLITE_PARAMETER_BYTE_ARRAY 5
#define ROSLITE_PARAMETER_BOOL_ARRAY 6
#define ROSLITE_PARAMETER_INTEGER_ARRAY 7
#define ROSLITE_PARAMETER_DOUBLE_ARRAY 8
#define ROSLITE_PARAMETER_STRING_ARRAY 9

/* A parameter value. `type` says which member holds it; arrays point at `array_length`
 * elements of uint8_t (byte and bool arrays), int64_t, double or const char *. */
typedef struct roslite_parameter_value {
  int32_t type;
  bool bool_value;
  int64_t integer_value;
  double double_value;
  const char *string_value;
  const void *array_values;
  size_t array_length;
} roslite_parameter_value;

/* Frees what roslite allocated in a value it filled in (roslite_parameter_get,
 * roslite_parameter_declare's `value`); never call it on a value of your own. */
void roslite_parameter_value_fini(roslite_parameter_value *value);

/* Declares parameter `name` with `default_value`; `value` (may be NULL) gets the value it
 * has, which an override (-p, --params-file) may have set. */
roslite_status roslite_parameter_declare(
    roslite_handle node, const char *name, const roslite_parameter_value *default_value,
    roslite_parameter_value *value);

roslite_status roslite_parameter_get(
    roslite_handle node, const char *name, roslite_parameter_value *value);

/* Sets a declared parameter; ROSLITE_ERROR with the reason when a callback or its descriptor
 * refuses it. */
roslite_status roslite_parameter_set(
    roslite_handle node, const char *name, const roslite_parameter_value *value);

/* Called before parameters are declared or set, with their names and new values; returns
 * false to refuse the change, with a NUL-terminated reason of at most `reason_capacity` bytes
 * written into `reason`. Runs on the thread that sets them; it may read parameters but not
 * change them. */
typedef bool (*roslite_parameters_callback)(
    void *user_data, const char *const *names, const roslite_parameter_value *values,
    size_t count, char *reason, size_t reason_capacity);

/* Adds an on-set callback (rclcpp's add_on_set_parameters_callback); releasing `handle`
 * removes it. */
roslite_status roslite_parameter_add_on_set_callback(
    roslite_handle node, roslite_parameters_callback callback, void *user_data,
    roslite_handle *handle);

/* ---- Logging --------------------------------------------------------------------------- */

#define ROSLITE_LOG_DEBUG 10
#define ROSLITE_LOG_INFO 20
#define ROSLITE_LOG_WARN 30
#define ROSLITE_LOG_ERROR 40
#define ROSLITE_LOG_FATAL 50

/* Logs `message` under `logger` ("talker", "ns.talker") at `severity`, as rclcpp's
 * RCLCPP_INFO and friends do (console and /rosout, subject to --log-level). `function` may be
 * NULL. */
roslite_status roslite_log(
    const char *logger, int32_t severity, const char *function, const char *message);

/* ---- Executor -------------------------------------------------------------------------- */

roslite_status roslite_executor_create(roslite_handle context, roslite_handle *executor);
roslite_status roslite_executor_add_node(roslite_handle executor, roslite_handle node);

/* Runs callbacks until the context is shut down. */
roslite_status roslite_executor_spin(roslite_handle executor);

/* Runs callbacks on `threads` threads until the context is shut down (MultiThreadedExecutor). */
roslite_status roslite_executor_spin_threads(roslite_handle executor, size_t threads);

/* Runs every callback ready now. */
roslite_status roslite_executor_spin_some(roslite_handle executor);

/* Waits up to `timeout_ns` (negative: for ever) for work and runs one callback; `ran` (may be
 * NULL) says whether one ran. */
roslite_status roslite_executor_spin_once(
    roslite_handle executor, int64_t timeout_ns, bool *ran);

/* Runs callbacks for `duration_ns`. */
roslite_status roslite_executor_spin_for(roslite_handle executor, int64_t duration_ns);

/* ---- Lifecycle (managed) nodes --------------------------------------------------------- */

/* A managed node (rclcpp_lifecycle's LifecycleNode) moves through ROS 2's default lifecycle
 * state machine when asked: by roslite_lifecycle_node_trigger, or by a tool or another node
 * through the services it serves under its name (~/change_state, ~/get_state,
 * ~/get_available_states, ~/get_available_transitions, ~/get_transition_graph); each step is
 * published on ~/transition_event. `ros2 lifecycle` and launch manage it as an rclcpp one. The
 * services run on the executor that spins the node.
 *
 * States, transitions and callback results are the ids of lifecycle_msgs/msg/State and
 * lifecycle_msgs/msg/Transition. */

/* Primary states, where a node rests (UNKNOWN: none yet). */
#define ROSLITE_LIFECYCLE_STATE_UNKNOWN 0
#define ROSLITE_LIFECYCLE_STATE_UNCONFIGURED 1
#define ROSLITE_LIFECYCLE_STATE_INACTIVE 2
#define ROSLITE_LIFECYCLE_STATE_ACTIVE 3
#define ROSLITE_LIFECYCLE_STATE_FINALIZED 4
/* Transition states, which a node passes through while the transition's callback runs. */
#define ROSLITE_LIFECYCLE_STATE_CONFIGURING 10
#define ROSLITE_LIFECYCLE_STATE_CLEANINGUP 11
#define ROSLITE_LIFECYCLE_STATE_SHUTTINGDOWN 12
#define ROSLITE_LIFECYCLE_STATE_ACTIVATING 13
#define ROSLITE_LIFECYCLE_STATE_DEACTIVATING 14
#define ROSLITE_LIFECYCLE_STATE_ERRORPROCESSING 15

/* The transitions a node is asked for (labels "configure", "cleanup", "activate", "deactivate",
 * "shutdown"); shutdown has one id per primary state it leaves. */
#define ROSLITE_LIFECYCLE_TRANSITION_CONFIGURE 1
#define ROSLITE_LIFECYCLE_TRANSITION_CLEANUP 2
#define ROSLITE_LIFECYCLE_TRANSITION_ACTIVATE 3
#define ROSLITE_LIFECYCLE_TRANSITION_DEACTIVATE 4
#define ROSLITE_LIFECYCLE_TRANSITION_UNCONFIGURED_SHUTDOWN 5
#define ROSLITE_LIFECYCLE_TRANSITION_INACTIVE_SHUTDOWN 6
#define ROSLITE_LIFECYCLE_TRANSITION_ACTIVE_SHUTDOWN 7

/* What a transition's callback answers: the transition succeeds; it fails (the node goes back
 * to the state it started from; a failed shutdown still finalizes); or it meets an error (the
 * node goes to errorprocessing, whose callback's success returns it to unconfigured and
 * anything else finalizes it). */
#define ROSLITE_LIFECYCLE_CALLBACK_SUCCESS 97
#define ROSLITE_LIFECYCLE_CALLBACK_FAILURE 98
#define ROSLITE_LIFECYCLE_CALLBACK_ERROR 99

/* Runs one transition's work: `transition_state` says which (ROSLITE_LIFECYCLE_STATE_CONFIGURING
 * for on_configure, ..._CLEANINGUP, ..._SHUTTINGDOWN, ..._ACTIVATING, ..._DEACTIVATING,
 * ..._ERRORPROCESSING for on_error), `previous_state` is the primary state the transition
 * started from. Answers a ROSLITE_LIFECYCLE_CALLBACK_*; any other value counts as an error
 * (and is logged). Called on the thread that asked for the transition: the one calling
 * roslite_lifecycle_node_trigger or releasing the lifecycle node, or the executor's serving
 * ~/change_state. It may create and release entities and read the node's state; a transition
 * it asks for fails with ROSLITE_INVALID_TRANSITION. */
typedef uint8_t (*roslite_lifecycle_callback)(
    void *user_data, uint8_t transition_state, uint8_t previous_state);

/* Makes `node` a managed node, in state unconfigured, and starts its lifecycle services and
 * event publisher. `callback` may be NULL: every transition then succeeds. The node handle
 * stays usable for everything else (subscriptions, timers, parameters, the executor); make one
 * lifecycle node per node. Releasing `lifecycle_node` while the context runs shuts the node
 * down first (the shutdown transition, with its callback) unless it is finalized, and stops
 * its lifecycle services. */
roslite_status roslite_lifecycle_node_create(
    roslite_handle node, roslite_lifecycle_callback callback, void *user_data,
    roslite_handle *lifecycle_node);

/* Runs a transition, as ~/change_state does: the one labelled `label` ("configure", ...) or,
 * when `label` is NULL or "", the one with id `transition_id` (ROSLITE_LIFECYCLE_TRANSITION_*;
 * label "shutdown" picks the id that leaves the current state). Returns once the node rests in
 * a primary state again: `state` (may be NULL) gets it, `callback_result` (may be NULL) what
 * the transition's callback answered (ROSLITE_LIFECYCLE_CALLBACK_*; a failure or an error is
 * still ROSLITE_OK: the transition ran). ROSLITE_INVALID_TRANSITION, naming the transitions
 * that are valid, if none such starts from the current state or another one is running; the
 * node stays where it was. */
roslite_status roslite_lifecycle_node_trigger(
    roslite_handle lifecycle_node, uint8_t transition_id, const char *label, uint8_t *state,
    uint8_t *callback_result);

/* The node's current state (a transition state while a transition's callback runs). */
roslite_status roslite_lifecycle_node_state(roslite_handle lifecycle_node, uint8_t *state);

/* The label of state `state` ("unconfigured", "errorprocessing", ...), copied into `buffer` as
 * roslite_node_fully_qualified_name copies; ROSLITE_INVALID_ARGUMENT for an id that is not a
 * state. */
roslite_status roslite_lifecycle_state_label(
    uint8_t state, char *buffer, size_t capacity, size_t *length);

/* A publisher (rclcpp_lifecycle's LifecyclePublisher) that sends only while the node is active:
 * roslite_publish on it sends the message while the node is active (and while its activate
 * callback runs) and otherwise drops it and returns ROSLITE_OK, logging a warning once each
 * time the node leaves active. The node activates and deactivates its publishers itself. It is
 * matched and seen in the graph in every state; the publisher calls and events take it. */
roslite_status roslite_lifecycle_publisher_create(
    roslite_handle lifecycle_node, const char *topic, const roslite_type *type,
    const roslite_qos *qos, roslite_handle *publisher);

/* Whether the lifecycle publisher sends now. */
roslite_status roslite_lifecycle_publisher_is_activated(roslite_handle publisher, bool *activated);

#ifdef __cplusplus
}
#endif

#endif /* ROSLITE_ROSLITE_H */
