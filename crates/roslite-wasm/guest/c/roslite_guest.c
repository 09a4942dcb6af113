/*
 * The guest side of roslite's WebAssembly guest ABI, version 1 (docs/wasm.md): every function
 * of roslite/roslite.h for wasm32, each one a call of the matching import of module
 * `roslite_v1`. Compiled into every Wasm node (C, C++ and mROS 2 alike) by
 * roslite_wasm::guest_build.
 *
 * What cannot cross the boundary as it is stays here:
 * - callbacks: the (function, user data) pairs live in a slot table; the host gets the slot's
 *   number and calls back through the one export roslite_guest_dispatch;
 * - memory the host hands over (names, response buffers, parameter values) comes from
 *   roslite_guest_alloc, i.e. malloc, so the *_fini functions free it here without a call out;
 * - roslite_last_error's text is copied into a buffer of the guest's, which the returned
 *   pointer must name.
 */
#include <roslite/roslite.h>

#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__wasm32__)
#error "roslite_guest.c is the wasm32 guest library; native nodes link roslite-c instead"
#endif

/* ---- The layouts docs/wasm.md promises the host ----------------------------------------- */

#define ROSLITE_ASSERT_LAYOUT(type, size, alignment)                      \
  _Static_assert(sizeof(type) == (size), #type " is " #size " bytes");    \
  _Static_assert(alignof(type) == (alignment), #type " aligns to " #alignment)
#define ROSLITE_ASSERT_FIELD(type, field, offset) \
  _Static_assert(offsetof(type, field) == (offset), #type "." #field " is at " #offset)

_Static_assert(sizeof(void *) == 4 && sizeof(size_t) == 4, "pointers and size_t are i32");
_Static_assert(sizeof(bool) == 1, "bool is one byte in structs");
_Static_assert(sizeof(roslite_handle) == 8, "handles are i64");

ROSLITE_ASSERT_LAYOUT(roslite_qos, 48, 8);
ROSLITE_ASSERT_FIELD(roslite_qos, history, 0);
ROSLITE_ASSERT_FIELD(roslite_qos, depth, 4);
ROSLITE_ASSERT_FIELD(roslite_qos, reliability, 8);
ROSLITE_ASSERT_FIELD(roslite_qos, durability, 12);
ROSLITE_ASSERT_FIELD(roslite_qos, deadline_ns, 16);
ROSLITE_ASSERT_FIELD(roslite_qos, lifespan_ns, 24);
ROSLITE_ASSERT_FIELD(roslite_qos, liveliness, 32);
ROSLITE_ASSERT_FIELD(roslite_qos, liveliness_lease_ns, 40);

ROSLITE_ASSERT_LAYOUT(roslite_type, 8, 4);
ROSLITE_ASSERT_FIELD(roslite_type, name, 0);
ROSLITE_ASSERT_FIELD(roslite_type, hash, 4);

ROSLITE_ASSERT_LAYOUT(roslite_service_type, 12, 4);
ROSLITE_ASSERT_FIELD(roslite_service_type, name, 0);
ROSLITE_ASSERT_FIELD(roslite_service_type, request_hash, 4);
ROSLITE_ASSERT_FIELD(roslite_service_type, response_hash, 8);

ROSLITE_ASSERT_LAYOUT(roslite_message_info, 48, 8);
ROSLITE_ASSERT_FIELD(roslite_message_info, source_timestamp_ns, 0);
ROSLITE_ASSERT_FIELD(roslite_message_info, received_timestamp_ns, 8);
ROSLITE_ASSERT_FIELD(roslite_message_info, publication_sequence_number, 16);
ROSLITE_ASSERT_FIELD(roslite_message_info, from_intra_process, 24);
ROSLITE_ASSERT_FIELD(roslite_message_info, publisher_gid, 25);

ROSLITE_ASSERT_LAYOUT(roslite_parameter_value, 40, 8);
ROSLITE_ASSERT_FIELD(roslite_parameter_value, type, 0);
ROSLITE_ASSERT_FIELD(roslite_parameter_value, bool_value, 4);
ROSLITE_ASSERT_FIELD(roslite_parameter_value, integer_value, 8);
ROSLITE_ASSERT_FIELD(roslite_parameter_value, double_value, 16);
ROSLITE_ASSERT_FIELD(roslite_parameter_value, string_value, 24);
ROSLITE_ASSERT_FIELD(roslite_parameter_value, array_values, 28);
ROSLITE_ASSERT_FIELD(roslite_parameter_value, array_length, 32);

ROSLITE_ASSERT_LAYOUT(roslite_names, 12, 4);
ROSLITE_ASSERT_FIELD(roslite_names, count, 0);
ROSLITE_ASSERT_FIELD(roslite_names, names, 4);
ROSLITE_ASSERT_FIELD(roslite_names, types, 8);

ROSLITE_ASSERT_LAYOUT(roslite_buffer, 8, 4);
ROSLITE_ASSERT_FIELD(roslite_buffer, data, 0);
ROSLITE_ASSERT_FIELD(roslite_buffer, length, 4);

/* ---- Imports (module roslite_v1) ----------------------------------------------------------
 * Declared in the header's own C types: on wasm32 a pointer, size_t, int32_t and bool lower to
 * i32, roslite_handle and int64_t to i64, which is the import table of docs/wasm.md. A slot is
 * an int32_t. */

#define ROSLITE_IMPORT(name) __attribute__((import_module("roslite_v1"), import_name(#name)))

typedef int32_t callback_slot_number;

ROSLITE_IMPORT(last_error) int32_t host_last_error(char *buffer, int32_t capacity);
ROSLITE_IMPORT(release) roslite_status host_release(roslite_handle handle);
ROSLITE_IMPORT(context_init)
roslite_status host_context_init(int32_t argc, const char *const *argv, roslite_handle *out);
ROSLITE_IMPORT(context_shutdown) roslite_status host_context_shutdown(roslite_handle context);
ROSLITE_IMPORT(context_ok) roslite_status host_context_ok(roslite_handle context, bool *ok);
ROSLITE_IMPORT(install_signal_handlers) roslite_status host_install_signal_handlers(void);
ROSLITE_IMPORT(node_create)
roslite_status host_node_create(
    roslite_handle context, const char *name, const char *namespace_, roslite_handle *out);
ROSLITE_IMPORT(node_fully_qualified_name)
roslite_status host_node_fully_qualified_name(
    roslite_handle node, char *buffer, size_t capacity, size_t *length);
ROSLITE_IMPORT(node_logger_name)
roslite_status host_node_logger_name(
    roslite_handle node, char *buffer, size_t capacity, size_t *length);
ROSLITE_IMPORT(node_now) roslite_status host_node_now(roslite_handle node, int64_t *ns);
ROSLITE_IMPORT(callback_group_create)
roslite_status host_callback_group_create(roslite_handle node, int32_t kind, roslite_handle *out);
ROSLITE_IMPORT(node_count_publishers)
roslite_status host_node_count_publishers(roslite_handle node, const char *topic, size_t *count);
ROSLITE_IMPORT(node_count_subscribers)
roslite_status host_node_count_subscribers(roslite_handle node, const char *topic, size_t *count);
ROSLITE_IMPORT(node_topic_names_and_types)
roslite_status host_node_topic_names_and_types(roslite_handle node, roslite_names *names);
ROSLITE_IMPORT(node_service_names_and_types)
roslite_status host_node_service_names_and_types(roslite_handle node, roslite_names *names);
ROSLITE_IMPORT(node_names) roslite_status host_node_names(roslite_handle node, roslite_names *names);
ROSLITE_IMPORT(qos_profile) roslite_status host_qos_profile(int32_t profile, roslite_qos *qos);
ROSLITE_IMPORT(type_register) roslite_status host_type_register(const char *definition);
ROSLITE_IMPORT(publisher_create)
roslite_status host_publisher_create(
    roslite_handle node, const char *topic, const roslite_type *type, const roslite_qos *qos,
    roslite_handle *out);
ROSLITE_IMPORT(publish)
roslite_status host_publish(roslite_handle publisher, const uint8_t *cdr, size_t length);
ROSLITE_IMPORT(publisher_subscription_count)
roslite_status host_publisher_subscription_count(roslite_handle publisher, size_t *count);
ROSLITE_IMPORT(subscription_create)
roslite_status host_subscription_create(
    roslite_handle node, roslite_handle group, const char *topic, const roslite_type *type,
    const roslite_qos *qos, callback_slot_number slot, roslite_handle *out);
ROSLITE_IMPORT(subscription_on_message_lost)
roslite_status host_subscription_on_message_lost(
    roslite_handle subscription, callback_slot_number slot);
ROSLITE_IMPORT(subscription_publisher_count)
roslite_status host_subscription_publisher_count(roslite_handle subscription, size_t *count);
ROSLITE_IMPORT(on_matched)
roslite_status host_on_matched(roslite_handle endpoint, callback_slot_number slot);
ROSLITE_IMPORT(on_incompatible_qos)
roslite_status host_on_incompatible_qos(roslite_handle endpoint, callback_slot_number slot);
ROSLITE_IMPORT(timer_create)
roslite_status host_timer_create(
    roslite_handle node, roslite_handle group, int64_t period_ns, int32_t wall,
    callback_slot_number slot, roslite_handle *out);
ROSLITE_IMPORT(timer_cancel) roslite_status host_timer_cancel(roslite_handle timer);
ROSLITE_IMPORT(timer_reset) roslite_status host_timer_reset(roslite_handle timer);
ROSLITE_IMPORT(service_create)
roslite_status host_service_create(
    roslite_handle node, roslite_handle group, const char *service,
    const roslite_service_type *type, const roslite_qos *qos, callback_slot_number slot,
    roslite_handle *out);
ROSLITE_IMPORT(service_send_response)
roslite_status host_service_send_response(
    roslite_handle responder, const uint8_t *cdr, size_t length);
ROSLITE_IMPORT(client_create)
roslite_status host_client_create(
    roslite_handle node, const char *service, const roslite_service_type *type,
    roslite_handle *out);
ROSLITE_IMPORT(client_wait_for_service)
roslite_status host_client_wait_for_service(roslite_handle client, int64_t timeout_ns);
ROSLITE_IMPORT(client_call)
roslite_status host_client_call(
    roslite_handle client, const uint8_t *request, size_t length, int64_t timeout_ns,
    roslite_buffer *response);
ROSLITE_IMPORT(client_send_request)
roslite_status host_client_send_request(
    roslite_handle client, const uint8_t *request, size_t length, callback_slot_number slot,
    int64_t *request_id);
ROSLITE_IMPORT(client_remove_pending_request)
roslite_status host_client_remove_pending_request(roslite_handle client, int64_t request_id);
ROSLITE_IMPORT(service_configure_introspection)
roslite_status host_service_configure_introspection(
    roslite_handle server, const roslite_qos *qos, int32_t state);
ROSLITE_IMPORT(client_configure_introspection)
roslite_status host_client_configure_introspection(
    roslite_handle client, const roslite_qos *qos, int32_t state);
ROSLITE_IMPORT(parameter_declare)
roslite_status host_parameter_declare(
    roslite_handle node, const char *name, const roslite_parameter_value *default_value,
    roslite_parameter_value *value);
ROSLITE_IMPORT(parameter_get)
roslite_status host_parameter_get(
    roslite_handle node, const char *name, roslite_parameter_value *value);
ROSLITE_IMPORT(parameter_set)
roslite_status host_parameter_set(
    roslite_handle node, const char *name, const roslite_parameter_value *value);
ROSLITE_IMPORT(parameter_add_on_set_callback)
roslite_status host_parameter_add_on_set_callback(
    roslite_handle node, callback_slot_number slot, roslite_handle *out);
ROSLITE_IMPORT(log)
roslite_status host_log(
    const char *logger, int32_t severity, const char *function, const char *message);
ROSLITE_IMPORT(executor_create)
roslite_status host_executor_create(roslite_handle context, roslite_handle *out);
ROSLITE_IMPORT(executor_add_node)
roslite_status host_executor_add_node(roslite_handle executor, roslite_handle node);
ROSLITE_IMPORT(executor_spin) roslite_status host_executor_spin(roslite_handle executor);
ROSLITE_IMPORT(executor_spin_threads)
roslite_status host_executor_spin_threads(roslite_handle executor, int32_t threads);
ROSLITE_IMPORT(executor_spin_some) roslite_status host_executor_spin_some(roslite_handle executor);
ROSLITE_IMPORT(executor_spin_once)
roslite_status host_executor_spin_once(roslite_handle executor, int64_t timeout_ns, bool *ran);
ROSLITE_IMPORT(executor_spin_for)
roslite_status host_executor_spin_for(roslite_handle executor, int64_t duration_ns);

/* ---- Errors ------------------------------------------------------------------------------ */

/* Set when the guest library itself failed a call (the host never saw it), so that
 * roslite_last_error names that failure rather than an older one of the host's. */
static const char *guest_error;

static roslite_status fail_in_guest(roslite_status status, const char *text)
{
  guest_error = text;
  return status;
}

/* Every host call's status passes here: a host failure is newer than any guest one. */
static roslite_status from_host(roslite_status status)
{
  if (status != ROSLITE_OK) guest_error = NULL;
  return status;
}

/* The host's text, kept here because the returned pointer must be guest memory. Grows to fit:
 * error texts name topics and types, which have no fixed bound. */
static char *error_text;
static int32_t error_text_capacity;

const char *roslite_last_error(void)
{
  if (guest_error) return guest_error;
  if (!error_text) {
    error_text_capacity = 256;
    error_text = malloc((size_t)error_text_capacity);
    if (!error_text) return "roslite guest: out of memory for the error text";
  }
  int32_t length = host_last_error(error_text, error_text_capacity);
  if (length >= error_text_capacity) {
    char *larger = realloc(error_text, (size_t)length + 1);
    if (larger) {
      error_text = larger;
      error_text_capacity = length + 1;
      length = host_last_error(error_text, error_text_capacity);
    }
  }
  if (length < 0) length = 0;
  if (length > error_text_capacity - 1) length = error_text_capacity - 1;
  error_text[length] = '\0';
  return error_text;
}

/* ---- Callback slots ----------------------------------------------------------------------
 * The host names a callback by its slot number; slot 0 is never handed out and stands for a
 * NULL callback (the host refuses it as the native ABI does). */

enum callback_kind {
  CALLBACK_FREE = 0,
  CALLBACK_MESSAGE = 1,
  CALLBACK_TIMER = 2,
  CALLBACK_REQUEST = 3,
  CALLBACK_RESPONSE = 4,
  CALLBACK_MESSAGE_LOST = 5,
  CALLBACK_MATCHED = 6,
  CALLBACK_INCOMPATIBLE_QOS = 7,
  CALLBACK_PARAMETERS = 8,
};

typedef void (*any_callback)(void);

struct callback_slot {
  int32_t kind;
  any_callback function;
  void *user_data;
  /* The handle whose release frees the slot (0 until the creating call returned it). */
  roslite_handle owner;
  /* A response slot's request, so that removing the pending request frees it. */
  int64_t request_id;
};

static struct callback_slot *slots;
static int32_t slot_count;

static callback_slot_number slot_allocate(int32_t kind, any_callback function, void *user_data,
                                          roslite_handle owner)
{
  if (!function) return 0;
  callback_slot_number number = 1;
  while (number < slot_count && slots[number].kind != CALLBACK_FREE) number++;
  if (number >= slot_count) {
    int32_t grown = slot_count ? slot_count * 2 : 16;
    struct callback_slot *larger = realloc(slots, (size_t)grown * sizeof *slots);
    if (!larger) return -1;
    memset(larger + slot_count, 0, (size_t)(grown - slot_count) * sizeof *slots);
    slots = larger;
    number = slot_count ? slot_count : 1;
    slot_count = grown;
  }
  slots[number] = (struct callback_slot){kind, function, user_data, owner, 0};
  return number;
}

static void slot_free(callback_slot_number number)
{
  if (number > 0 && number < slot_count) memset(&slots[number], 0, sizeof slots[number]);
}

static void slots_free_owned_by(roslite_handle owner)
{
  for (callback_slot_number number = 1; number < slot_count; number++)
    if (slots[number].kind != CALLBACK_FREE && slots[number].owner == owner) slot_free(number);
}

static roslite_status out_of_slots(void)
{
  return fail_in_guest(ROSLITE_ERROR, "roslite guest: out of memory for the callback table");
}

/* Runs a create call that takes `slot`: the slot is the new handle's on success and free
 * again on failure. */
static roslite_status slot_owned_by_result(
    roslite_status status, callback_slot_number slot, const roslite_handle *created)
{
  if (status == ROSLITE_OK && created && slot > 0)
    slots[slot].owner = *created;
  else
    slot_free(slot);
  return from_host(status);
}

/* Registers an endpoint's event callback (one per endpoint and kind, as natively: a new one
 * replaces the old, whose slot is freed). */
static roslite_status event_callback_set(
    roslite_handle endpoint, int32_t kind, any_callback function, void *user_data,
    roslite_status (*host_call)(roslite_handle, callback_slot_number))
{
  callback_slot_number slot = slot_allocate(kind, function, user_data, endpoint);
  if (slot < 0) return out_of_slots();
  roslite_status status = host_call(endpoint, slot);
  if (status != ROSLITE_OK) {
    slot_free(slot);
    return from_host(status);
  }
  for (callback_slot_number number = 1; number < slot_count; number++)
    if (number != slot && slots[number].kind == kind && slots[number].owner == endpoint)
      slot_free(number);
  return ROSLITE_OK;
}

static const void *guest_pointer(int64_t address)
{
  return (const void *)(uintptr_t)(uint32_t)address;
}

/* What the dispatch export returns for a slot that is free or of another kind: the host
 * called back something the guest never registered (or already released). */
#define DISPATCH_NO_SUCH_SLOT (-1)

__attribute__((export_name("roslite_guest_dispatch")))
int32_t roslite_guest_dispatch(
    callback_slot_number number, int32_t kind, int64_t a, int64_t b, int64_t c, int64_t d)
{
  if (number <= 0 || number >= slot_count || slots[number].kind != kind || kind == CALLBACK_FREE)
    return DISPATCH_NO_SUCH_SLOT;
  /* A copy: the callback may create entities, and the table may move when it grows. */
  struct callback_slot slot = slots[number];
  switch (kind) {
    case CALLBACK_MESSAGE:
      ((roslite_message_callback)slot.function)(
          slot.user_data, guest_pointer(a), (size_t)b, guest_pointer(c));
      return 0;
    case CALLBACK_TIMER:
      ((roslite_timer_callback)slot.function)(slot.user_data);
      return 0;
    case CALLBACK_REQUEST:
      ((roslite_request_callback)slot.function)(
          slot.user_data, guest_pointer(a), (size_t)b, (roslite_handle)c);
      return 0;
    case CALLBACK_RESPONSE:
      slot_free(number); /* used once; freed first so that the callback may reuse it */
      ((roslite_response_callback)slot.function)(
          slot.user_data, (roslite_status)a, guest_pointer(b), (size_t)c);
      return 0;
    case CALLBACK_MESSAGE_LOST:
      ((roslite_message_lost_callback)slot.function)(slot.user_data, (uint64_t)a, (uint64_t)b);
      return 0;
    case CALLBACK_MATCHED:
      ((roslite_matched_callback)slot.function)(
          slot.user_data, (int32_t)a, (int32_t)b, (int32_t)c);
      return 0;
    case CALLBACK_INCOMPATIBLE_QOS:
      ((roslite_incompatible_qos_callback)slot.function)(slot.user_data, (int32_t)a, (int32_t)b);
      return 0;
    case CALLBACK_PARAMETERS: {
      enum { REASON_CAPACITY = 256 }; /* docs/wasm.md: the reason buffer's size */
      bool accepted = ((roslite_parameters_callback)slot.function)(
          slot.user_data, guest_pointer(a), guest_pointer(b), (size_t)c,
          (char *)guest_pointer(d), REASON_CAPACITY);
      return accepted ? 1 : 0;
    }
    default:
      return DISPATCH_NO_SUCH_SLOT;
  }
}

/* ---- The command's entry point ------------------------------------------------------------ */

/* `_start`, in place of the sysroot's crt1-command.o (guest_build links with -nostartfiles):
 * constructors once, main, destructors, as current wasi-libc's crt1-command does. An older
 * crt1-command (Debian bookworm's wasi-libc) leaves the constructors to wasm-ld, which then
 * wraps *every* export of a command in __wasm_call_ctors/__wasm_call_dtors: each
 * roslite_guest_dispatch and roslite_guest_alloc would construct the program's globals
 * afresh and run its atexit handlers, so a C++ global (mROS 2's `mros2::Publisher pub`) set
 * in main would be empty again in a callback. Calling __wasm_call_ctors here is also what
 * tells wasm-ld not to make those wrappers. */
extern void __wasm_call_ctors(void);
extern void __wasm_call_dtors(void);
extern int __main_void(void);

__attribute__((export_name("_start")))
void _start(void)
{
  static volatile int started = 0;
  if (started) __builtin_trap(); /* a command runs once per instance */
  started = 1;
  __wasm_call_ctors();
  int status = __main_void();
  __wasm_call_dtors();
  if (status != 0) _Exit(status);
}

/* ---- Memory the host hands over ---------------------------------------------------------- */

__attribute__((export_name("roslite_guest_alloc")))
int32_t roslite_guest_alloc(int32_t size)
{
  if (size < 0) return 0;
  return (int32_t)(uintptr_t)malloc(size ? (size_t)size : 1);
}

__attribute__((export_name("roslite_guest_free")))
void roslite_guest_free(int32_t pointer)
{
  free((void *)(uintptr_t)(uint32_t)pointer);
}

/* Each name, each type and both arrays are blocks of their own (docs/wasm.md). */
void roslite_names_fini(roslite_names *names)
{
  if (!names) return;
  for (size_t i = 0; i < names->count; i++) {
    if (names->names) free(names->names[i]);
    if (names->types) free(names->types[i]);
  }
  free(names->names);
  free(names->types);
  names->count = 0;
  names->names = NULL;
  names->types = NULL;
}

void roslite_buffer_fini(roslite_buffer *buffer)
{
  if (!buffer) return;
  free(buffer->data);
  buffer->data = NULL;
  buffer->length = 0;
}

void roslite_parameter_value_fini(roslite_parameter_value *value)
{
  if (!value) return;
  free((void *)value->string_value);
  if (value->type == ROSLITE_PARAMETER_STRING_ARRAY && value->array_values) {
    char *const *strings = value->array_values;
    for (size_t i = 0; i < value->array_length; i++) free(strings[i]);
  }
  free((void *)value->array_values);
  memset(value, 0, sizeof *value);
}

/* ---- The header's functions --------------------------------------------------------------- */

roslite_status roslite_release(roslite_handle handle)
{
  roslite_status status = host_release(handle);
  if (status == ROSLITE_OK && handle != 0) slots_free_owned_by(handle);
  return from_host(status);
}

roslite_status roslite_context_init(int argc, const char *const *argv, roslite_handle *context)
{
  return from_host(host_context_init(argc, argv, context));
}

roslite_status roslite_context_shutdown(roslite_handle context)
{
  return from_host(host_context_shutdown(context));
}

roslite_status roslite_context_ok(roslite_handle context, bool *ok)
{
  return from_host(host_context_ok(context, ok));
}

roslite_status roslite_install_signal_handlers(void)
{
  return from_host(host_install_signal_handlers());
}

roslite_status roslite_node_create(
    roslite_handle context, const char *name, const char *namespace_, roslite_handle *node)
{
  return from_host(host_node_create(context, name, namespace_, node));
}

roslite_status roslite_node_fully_qualified_name(
    roslite_handle node, char *buffer, size_t capacity, size_t *length)
{
  return from_host(host_node_fully_qualified_name(node, buffer, capacity, length));
}

roslite_status roslite_node_logger_name(
    roslite_handle node, char *buffer, size_t capacity, size_t *length)
{
  return from_host(host_node_logger_name(node, buffer, capacity, length));
}

roslite_status roslite_node_now(roslite_handle node, int64_t *ns)
{
  return from_host(host_node_now(node, ns));
}

roslite_status roslite_callback_group_create(
    roslite_handle node, int32_t kind, roslite_handle *callback_group)
{
  return from_host(host_callback_group_create(node, kind, callback_group));
}

roslite_status roslite_node_count_publishers(roslite_handle node, const char *topic, size_t *count)
{
  return from_host(host_node_count_publishers(node, topic, count));
}

roslite_status roslite_node_count_subscribers(
    roslite_handle node, const char *topic, size_t *count)
{
  return from_host(host_node_count_subscribers(node, topic, count));
}

roslite_status roslite_node_topic_names_and_types(roslite_handle node, roslite_names *out)
{
  return from_host(host_node_topic_names_and_types(node, out));
}

roslite_status roslite_node_service_names_and_types(roslite_handle node, roslite_names *out)
{
  return from_host(host_node_service_names_and_types(node, out));
}

roslite_status roslite_node_names(roslite_handle node, roslite_names *out)
{
  return from_host(host_node_names(node, out));
}

roslite_status roslite_qos_profile(int32_t profile, roslite_qos *qos)
{
  return from_host(host_qos_profile(profile, qos));
}

roslite_status roslite_type_register(const char *definition)
{
  return from_host(host_type_register(definition));
}

roslite_status roslite_publisher_create(
    roslite_handle node, const char *topic, const roslite_type *type, const roslite_qos *qos,
    roslite_handle *publisher)
{
  return from_host(host_publisher_create(node, topic, type, qos, publisher));
}

roslite_status roslite_publish(roslite_handle publisher, const uint8_t *cdr, size_t length)
{
  return from_host(host_publish(publisher, cdr, length));
}

roslite_status roslite_publisher_subscription_count(roslite_handle publisher, size_t *count)
{
  return from_host(host_publisher_subscription_count(publisher, count));
}

roslite_status roslite_subscription_create_in(
    roslite_handle node, roslite_handle callback_group, const char *topic,
    const roslite_type *type, const roslite_qos *qos, roslite_message_callback callback,
    void *user_data, roslite_handle *subscription)
{
  callback_slot_number slot =
      slot_allocate(CALLBACK_MESSAGE, (any_callback)callback, user_data, 0);
  if (slot < 0) return out_of_slots();
  roslite_status status =
      host_subscription_create(node, callback_group, topic, type, qos, slot, subscription);
  return slot_owned_by_result(status, slot, subscription);
}

roslite_status roslite_subscription_create(
    roslite_handle node, const char *topic, const roslite_type *type, const roslite_qos *qos,
    roslite_message_callback callback, void *user_data, roslite_handle *subscription)
{
  return roslite_subscription_create_in(
      node, 0, topic, type, qos, callback, user_data, subscription);
}

roslite_status roslite_subscription_on_message_lost(
    roslite_handle subscription, roslite_message_lost_callback callback, void *user_data)
{
  return event_callback_set(subscription, CALLBACK_MESSAGE_LOST, (any_callback)callback,
                            user_data, host_subscription_on_message_lost);
}

roslite_status roslite_subscription_publisher_count(roslite_handle subscription, size_t *count)
{
  return from_host(host_subscription_publisher_count(subscription, count));
}

roslite_status roslite_on_matched(
    roslite_handle publisher_or_subscription, roslite_matched_callback callback, void *user_data)
{
  return event_callback_set(publisher_or_subscription, CALLBACK_MATCHED, (any_callback)callback,
                            user_data, host_on_matched);
}

roslite_status roslite_on_incompatible_qos(
    roslite_handle publisher_or_subscription, roslite_incompatible_qos_callback callback,
    void *user_data)
{
  return event_callback_set(publisher_or_subscription, CALLBACK_INCOMPATIBLE_QOS,
                            (any_callback)callback, user_data, host_on_incompatible_qos);
}

static roslite_status timer_create(
    roslite_handle node, roslite_handle callback_group, int64_t period_ns, bool wall,
    roslite_timer_callback callback, void *user_data, roslite_handle *timer)
{
  callback_slot_number slot = slot_allocate(CALLBACK_TIMER, (any_callback)callback, user_data, 0);
  if (slot < 0) return out_of_slots();
  roslite_status status =
      host_timer_create(node, callback_group, period_ns, wall ? 1 : 0, slot, timer);
  return slot_owned_by_result(status, slot, timer);
}

roslite_status roslite_wall_timer_create(
    roslite_handle node, int64_t period_ns, roslite_timer_callback callback, void *user_data,
    roslite_handle *timer)
{
  return timer_create(node, 0, period_ns, true, callback, user_data, timer);
}

roslite_status roslite_timer_create(
    roslite_handle node, int64_t period_ns, roslite_timer_callback callback, void *user_data,
    roslite_handle *timer)
{
  return timer_create(node, 0, period_ns, false, callback, user_data, timer);
}

roslite_status roslite_wall_timer_create_in(
    roslite_handle node, roslite_handle callback_group, int64_t period_ns,
    roslite_timer_callback callback, void *user_data, roslite_handle *timer)
{
  return timer_create(node, callback_group, period_ns, true, callback, user_data, timer);
}

roslite_status roslite_timer_create_in(
    roslite_handle node, roslite_handle callback_group, int64_t period_ns,
    roslite_timer_callback callback, void *user_data, roslite_handle *timer)
{
  return timer_create(node, callback_group, period_ns, false, callback, user_data, timer);
}

roslite_status roslite_timer_cancel(roslite_handle timer)
{
  return from_host(host_timer_cancel(timer));
}

roslite_status roslite_timer_reset(roslite_handle timer)
{
  return from_host(host_timer_reset(timer));
}

roslite_status roslite_service_create_in(
    roslite_handle node, roslite_handle callback_group, const char *service,
    const roslite_service_type *type, const roslite_qos *qos, roslite_request_callback callback,
    void *user_data, roslite_handle *server)
{
  callback_slot_number slot =
      slot_allocate(CALLBACK_REQUEST, (any_callback)callback, user_data, 0);
  if (slot < 0) return out_of_slots();
  roslite_status status =
      host_service_create(node, callback_group, service, type, qos, slot, server);
  return slot_owned_by_result(status, slot, server);
}

roslite_status roslite_service_create(
    roslite_handle node, const char *service, const roslite_service_type *type,
    const roslite_qos *qos, roslite_request_callback callback, void *user_data,
    roslite_handle *server)
{
  return roslite_service_create_in(node, 0, service, type, qos, callback, user_data, server);
}

roslite_status roslite_service_send_response(
    roslite_handle responder, const uint8_t *cdr, size_t length)
{
  return from_host(host_service_send_response(responder, cdr, length));
}

roslite_status roslite_client_create(
    roslite_handle node, const char *service, const roslite_service_type *type,
    roslite_handle *client)
{
  return from_host(host_client_create(node, service, type, client));
}

roslite_status roslite_client_wait_for_service(roslite_handle client, int64_t timeout_ns)
{
  return from_host(host_client_wait_for_service(client, timeout_ns));
}

roslite_status roslite_client_call(
    roslite_handle client, const uint8_t *request, size_t length, int64_t timeout_ns,
    roslite_buffer *response)
{
  return from_host(host_client_call(client, request, length, timeout_ns, response));
}

roslite_status roslite_client_send_request(
    roslite_handle client, const uint8_t *request, size_t length,
    roslite_response_callback callback, void *user_data, int64_t *request_id)
{
  /* Owned by the client, so that releasing the client frees the slots of requests that will
   * never be answered. */
  callback_slot_number slot =
      slot_allocate(CALLBACK_RESPONSE, (any_callback)callback, user_data, client);
  if (slot < 0) return out_of_slots();
  int64_t id = 0;
  roslite_status status = host_client_send_request(client, request, length, slot, &id);
  if (status != ROSLITE_OK) {
    slot_free(slot);
    return from_host(status);
  }
  /* The host may have answered already (a callback run during the call frees the slot). */
  if (slot > 0 && slots[slot].kind == CALLBACK_RESPONSE && slots[slot].owner == client)
    slots[slot].request_id = id;
  if (request_id) *request_id = id;
  return ROSLITE_OK;
}

roslite_status roslite_service_configure_introspection(
    roslite_handle server, const roslite_qos *qos, int32_t state)
{
  return from_host(host_service_configure_introspection(server, qos, state));
}

roslite_status roslite_client_configure_introspection(
    roslite_handle client, const roslite_qos *qos, int32_t state)
{
  return from_host(host_client_configure_introspection(client, qos, state));
}

roslite_status roslite_client_remove_pending_request(roslite_handle client, int64_t request_id)
{
  roslite_status status = host_client_remove_pending_request(client, request_id);
  if (status == ROSLITE_OK) {
    for (callback_slot_number number = 1; number < slot_count; number++)
      if (slots[number].kind == CALLBACK_RESPONSE && slots[number].owner == client &&
          slots[number].request_id == request_id)
        slot_free(number);
  }
  return from_host(status);
}

roslite_status roslite_parameter_declare(
    roslite_handle node, const char *name, const roslite_parameter_value *default_value,
    roslite_parameter_value *value)
{
  return from_host(host_parameter_declare(node, name, default_value, value));
}

roslite_status roslite_parameter_get(
    roslite_handle node, const char *name, roslite_parameter_value *value)
{
  return from_host(host_parameter_get(node, name, value));
}

roslite_status roslite_parameter_set(
    roslite_handle node, const char *name, const roslite_parameter_value *value)
{
  return from_host(host_parameter_set(node, name, value));
}

roslite_status roslite_parameter_add_on_set_callback(
    roslite_handle node, roslite_parameters_callback callback, void *user_data,
    roslite_handle *handle)
{
  callback_slot_number slot =
      slot_allocate(CALLBACK_PARAMETERS, (any_callback)callback, user_data, 0);
  if (slot < 0) return out_of_slots();
  roslite_status status = host_parameter_add_on_set_callback(node, slot, handle);
  return slot_owned_by_result(status, slot, handle);
}

roslite_status roslite_log(
    const char *logger, int32_t severity, const char *function, const char *message)
{
  return from_host(host_log(logger, severity, function, message));
}

roslite_status roslite_executor_create(roslite_handle context, roslite_handle *executor)
{
  return from_host(host_executor_create(context, executor));
}

roslite_status roslite_executor_add_node(roslite_handle executor, roslite_handle node)
{
  return from_host(host_executor_add_node(executor, node));
}

roslite_status roslite_executor_spin(roslite_handle executor)
{
  return from_host(host_executor_spin(executor));
}

roslite_status roslite_executor_spin_threads(roslite_handle executor, size_t threads)
{
  /* size_t is 32 bits on wasm32: the import's i32 holds it whole. */
  return from_host(host_executor_spin_threads(executor, (int32_t)threads));
}

roslite_status roslite_executor_spin_some(roslite_handle executor)
{
  return from_host(host_executor_spin_some(executor));
}

roslite_status roslite_executor_spin_once(roslite_handle executor, int64_t timeout_ns, bool *ran)
{
  return from_host(host_executor_spin_once(executor, timeout_ns, ran));
}

roslite_status roslite_executor_spin_for(roslite_handle executor, int64_t duration_ns)
{
  return from_host(host_executor_spin_for(executor, duration_ns));
}

/* ---- C++ exceptions ----------------------------------------------------------------------
 * Debian's wasm32 libc++abi is built without exception support (and clang 14 has no Wasm
 * exception handling a host could run), so C++ guests that throw would not link. A throw ends
 * the node instead, saying what was thrown; rclcpp's headers print the text of their own
 * errors before throwing (see rclcpp.hpp). Weak, so that a toolchain whose libc++abi has
 * these wins. */

__attribute__((weak)) void *__cxa_allocate_exception(size_t size)
{
  void *exception = malloc(size);
  if (!exception) abort();
  return exception;
}

__attribute__((weak)) void __cxa_free_exception(void *exception)
{
  free(exception);
}

__attribute__((weak, noreturn)) void __cxa_throw(
    void *exception, void *type_info, void (*destructor)(void *))
{
  (void)exception;
  (void)destructor;
  /* An Itanium C++ ABI std::type_info is {vtable pointer, mangled name}. */
  const char *type_name = type_info ? ((const char *const *)type_info)[1] : "?";
  fprintf(stderr,
          "roslite guest: a C++ exception (type %s) was thrown; WebAssembly nodes are built "
          "without exception support, so the node ends here\n",
          type_name);
  fflush(stderr);
  abort();
}
