/* A C node over roslite's C ABI, driven by the tests in ../c_abi.rs.
 *
 *   node talk HASH COUNT       publish COUNT std_msgs/msg/String "hello from C N" at 20 Hz
 *   node listen HASH COUNT     print the data of COUNT std_msgs/msg/String messages
 *   node param                 declare "rate" (integer, default 1) and "label" and print them
 *   node call REQ_HASH RESP_HASH A B   call /add_two_ints and print the sum
 *   node serve REQ_HASH RESP_HASH COUNT   serve /add_two_ints for COUNT requests
 *   node async REQ_HASH RESP_HASH          two asynchronous calls, one removed before its reply
 *   node onset                 an on-set callback that refuses negative values
 *   node graph HASH            matched and incompatible-QoS events, graph name listings
 *   node errors HASH           check that bad arguments give their status and a message
 *   node lifecycle HASH        a managed node's transitions, callback, publisher and errors
 *
 * Arguments after "--ros-args" go to roslite. */
#define _POSIX_C_SOURCE 200809L
#include <roslite/roslite.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    roslite_status status_ = (call);                                                         \
    if (status_ != ROSLITE_OK) {                                                             \
      fprintf(stderr, "%s:%d: %s -> %d: %s\n", __FILE__, __LINE__, #call, (int)status_,     \
              roslite_last_error());                                                         \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

static roslite_handle context, node;
static roslite_qos qos;

static size_t encode_string(uint8_t *out, const char *text) {
  uint32_t length = (uint32_t)strlen(text) + 1;
  out[0] = 0; out[1] = 1; out[2] = 0; out[3] = 0; /* CDR, little-endian */
  memcpy(out + 4, &length, 4);
  memcpy(out + 8, text, length);
  return 8 + length;
}

struct talker { roslite_handle publisher; int sent, count; };

static void on_tick(void *user) {
  struct talker *t = user;
  char text[64];
  uint8_t cdr[128];
  snprintf(text, sizeof text, "hello from C %d", ++t->sent);
  CHECK(roslite_publish(t->publisher, cdr, encode_string(cdr, text)));
  if (t->sent == t->count) CHECK(roslite_context_shutdown(context));
}

struct listener { int received, count; };

static void on_message(void *user, const uint8_t *cdr, size_t length,
                       const roslite_message_info *info) {
  struct listener *l = user;
  uint32_t n;
  if (length < 8) return;
  memcpy(&n, cdr + 4, 4);
  printf("received '%.*s' seq %" PRIu64 "\n", (int)(n ? n - 1 : 0), (const char *)cdr + 8,
         info->publication_sequence_number);
  fflush(stdout);
  if (++l->received == l->count) CHECK(roslite_context_shutdown(context));
}

struct server { int served, count; };

static void on_request(void *user, const uint8_t *request, size_t length,
                       roslite_handle responder) {
  struct server *s = user;
  int64_t a, b, sum;
  uint8_t response[12] = {0, 1, 0, 0};
  if (length < 20) return; /* unanswered: the client times out */
  memcpy(&a, request + 4, 8);
  memcpy(&b, request + 12, 8);
  sum = a + b;
  memcpy(response + 4, &sum, 8);
  CHECK(roslite_service_send_response(responder, response, sizeof response));
  printf("served %" PRId64 " + %" PRId64 "\n", a, b);
  fflush(stdout);
  if (++s->served == s->count) CHECK(roslite_context_shutdown(context));
}

struct async_call { int done; int64_t sum; roslite_status status; };

static void on_response(void *user, roslite_status status, const uint8_t *response,
                        size_t length) {
  struct async_call *call = user;
  call->status = status;
  if (status == ROSLITE_OK && length >= 12) memcpy(&call->sum, response + 4, 8);
  __atomic_store_n(&call->done, 1, __ATOMIC_RELEASE);
}

static bool refuse_negative(void *user, const char *const *names,
                            const roslite_parameter_value *values, size_t count, char *reason,
                            size_t capacity) {
  (void)user;
  for (size_t i = 0; i < count; i++) {
    if (values[i].type == ROSLITE_PARAMETER_INTEGER && values[i].integer_value < 0) {
      snprintf(reason, capacity, "%s must not be negative", names[i]);
      return false;
    }
  }
  return true;
}

struct counts { int matched, incompatible, last_policy; };

static void on_matched(void *user, int32_t current, int32_t change, int32_t total) {
  struct counts *c = user;
  (void)change;
  (void)total;
  c->matched = current;
}

static void on_incompatible(void *user, int32_t total, int32_t policy) {
  struct counts *c = user;
  c->incompatible = total;
  c->last_policy = policy;
}

static int graph(const char *hash) {
  roslite_type type = {"std_msgs/msg/String", hash};
  struct counts pub_counts = {0, 0, 0}, sub_counts = {0, 0, 0}, bad_counts = {0, 0, 0};
  roslite_handle publisher, subscription, best_effort_sub;
  struct listener l = {0, 1000};
  size_t n = 0;
  CHECK(roslite_publisher_create(node, "chatter", &type, &qos, &publisher));
  CHECK(roslite_on_matched(publisher, on_matched, &pub_counts));
  CHECK(roslite_on_incompatible_qos(publisher, on_incompatible, &bad_counts));
  CHECK(roslite_subscription_create(node, "chatter", &type, &qos, on_message, &l, &subscription));
  CHECK(roslite_on_matched(subscription, on_matched, &sub_counts));
  CHECK(roslite_subscription_publisher_count(subscription, &n));
  printf("publisher matched %d, subscription sees %zu publisher(s)\n", pub_counts.matched, n);
  roslite_qos transient = qos;
  transient.durability = ROSLITE_DURABILITY_TRANSIENT_LOCAL;
  CHECK(roslite_subscription_create(node, "chatter", &type, &transient, on_message, &l,
                                    &best_effort_sub));
  printf("incompatible %d policy %d\n", bad_counts.incompatible, bad_counts.last_policy);
  roslite_names names;
  CHECK(roslite_node_topic_names_and_types(node, &names));
  for (size_t i = 0; i < names.count; i++) printf("topic %s %s\n", names.names[i], names.types[i]);
  roslite_names_fini(&names);
  CHECK(roslite_node_names(node, &names));
  for (size_t i = 0; i < names.count; i++) printf("node %s\n", names.names[i]);
  roslite_names_fini(&names);
  return 0;
}

static void spin(void) {
  roslite_handle executor;
  CHECK(roslite_executor_create(context, &executor));
  CHECK(roslite_executor_add_node(executor, node));
  CHECK(roslite_executor_spin(executor));
  CHECK(roslite_release(executor));
}

static int expect(roslite_status got, roslite_status want, const char *what) {
  const char *message = roslite_last_error();
  printf("%s: status %d, message '%s'\n", what, (int)got, message);
  if (got != want || (want != ROSLITE_OK && message[0] == '\0')) {
    printf("  expected status %d with a message\n", (int)want);
    return 1;
  }
  return 0;
}

static int errors(const char *hash) {
  int failed = 0;
  roslite_handle h = 0;
  roslite_type good = {"std_msgs/msg/String", hash};
  roslite_type bad_name = {"std_msgs/String", hash};
  roslite_type bad_hash = {"std_msgs/msg/String", "RIHS01_nothex"};
  uint8_t cdr[64];
  failed += expect(roslite_node_create(context, "bad name!", NULL, &h), ROSLITE_INVALID_NAME,
                   "invalid node name");
  failed += expect(roslite_node_create(context, NULL, NULL, &h), ROSLITE_INVALID_ARGUMENT,
                   "null node name");
  failed += expect(roslite_node_create(12345, "n", NULL, &h), ROSLITE_INVALID_HANDLE,
                   "context handle that never existed");
  failed += expect(roslite_node_create(node, "n", NULL, &h), ROSLITE_INVALID_HANDLE,
                   "node handle where a context is needed");
  failed += expect(roslite_publisher_create(node, "chatter", &bad_name, &qos, &h),
                   ROSLITE_UNKNOWN_TYPE, "type name without /msg/");
  failed += expect(roslite_publisher_create(node, "chatter", &bad_hash, &qos, &h),
                   ROSLITE_UNKNOWN_TYPE, "malformed type hash");
  failed += expect(roslite_publisher_create(node, "bad topic!", &good, &qos, &h),
                   ROSLITE_INVALID_NAME, "invalid topic name");
  failed += expect(roslite_publisher_create(node, "chatter", &good, NULL, &h),
                   ROSLITE_INVALID_ARGUMENT, "null QoS");
  roslite_qos zero_depth = qos;
  zero_depth.depth = 0;
  failed += expect(roslite_publisher_create(node, "chatter", &good, &zero_depth, &h),
                   ROSLITE_INVALID_QOS, "keep-last depth 0");
  roslite_handle publisher;
  CHECK(roslite_publisher_create(node, "chatter", &good, &qos, &publisher));
  failed += expect(roslite_publish(publisher, (const uint8_t *)"\1", 1), ROSLITE_BAD_MESSAGE,
                   "one byte as a message");
  failed += expect(roslite_publish(publisher, (const uint8_t *)"\x7f\x7f\0\0xxxx", 8),
                   ROSLITE_BAD_MESSAGE, "unknown encapsulation");
  failed += expect(roslite_publish(publisher, NULL, 8), ROSLITE_INVALID_ARGUMENT,
                   "null message with a length");
  failed += expect(roslite_publish(publisher, cdr, encode_string(cdr, "fine")), ROSLITE_OK,
                   "a good message");
  CHECK(roslite_release(publisher));
  failed += expect(roslite_publish(publisher, cdr, encode_string(cdr, "late")),
                   ROSLITE_INVALID_HANDLE, "publish on a released publisher");
  failed += expect(roslite_release(publisher), ROSLITE_INVALID_HANDLE, "release twice");
  failed += expect(roslite_subscription_create(node, "chatter", &good, &qos, NULL, NULL, &h),
                   ROSLITE_INVALID_ARGUMENT, "null callback");
  failed += expect(roslite_wall_timer_create(node, -1, (roslite_timer_callback)abort, NULL, &h),
                   ROSLITE_INVALID_ARGUMENT, "negative timer period");
  roslite_parameter_value value = {.type = 0};
  failed += expect(roslite_parameter_get(node, "undeclared", &value), ROSLITE_NOT_FOUND,
                   "undeclared parameter");
  roslite_parameter_value int_value = {.type = ROSLITE_PARAMETER_INTEGER};
  int_value.integer_value = 3;
  CHECK(roslite_parameter_declare(node, "count", &int_value, NULL));
  roslite_parameter_value text_value = {.type = ROSLITE_PARAMETER_STRING};
  text_value.string_value = "three";
  failed += expect(roslite_parameter_set(node, "count", &text_value), ROSLITE_TYPE_MISMATCH,
                   "string into an integer parameter");
  failed += expect(roslite_log("c_node", 99, NULL, "x"), ROSLITE_INVALID_ARGUMENT,
                   "unknown severity");
  char small[4];
  size_t length = 0;
  failed += expect(roslite_node_fully_qualified_name(node, small, sizeof small, &length),
                   ROSLITE_INVALID_ARGUMENT, "name buffer too small");
  printf("name needs %zu bytes\n", length + 1);
  printf(failed ? "FAILED %d\n" : "all error paths held\n", failed);
  return failed ? 1 : 0;
}

/* A lifecycle callback that prints each call and answers from a script (then success). */
struct managed { int calls, scripted; const uint8_t *answers; };

static uint8_t on_transition(void *user, uint8_t state, uint8_t previous) {
  struct managed *m = user;
  uint8_t answer =
      m->calls < m->scripted ? m->answers[m->calls] : ROSLITE_LIFECYCLE_CALLBACK_SUCCESS;
  m->calls++;
  printf("callback in %d from %d answers %d\n", (int)state, (int)previous, (int)answer);
  return answer;
}

static void trigger(roslite_handle lifecycle_node, uint8_t id, const char *label) {
  uint8_t state = 0, result = 0;
  roslite_status status =
      roslite_lifecycle_node_trigger(lifecycle_node, id, label, &state, &result);
  if (status == ROSLITE_OK)
    printf("trigger %d '%s': state %d result %d\n", (int)id, label ? label : "", (int)state,
           (int)result);
  else
    printf("trigger %d '%s': status %d, message '%s'\n", (int)id, label ? label : "",
           (int)status, roslite_last_error());
}

static void publish_and_listen(roslite_handle executor, roslite_handle publisher,
                               const char *text) {
  uint8_t cdr[128];
  bool activated = false;
  CHECK(roslite_lifecycle_publisher_is_activated(publisher, &activated));
  CHECK(roslite_publish(publisher, cdr, encode_string(cdr, text)));
  CHECK(roslite_executor_spin_for(executor, 200000000));
  printf("published '%s', activated %d\n", text, (int)activated);
}

static int lifecycle(const char *hash) {
  roslite_type type = {"std_msgs/msg/String", hash};
  /* configure: an answer that is no result (an error), then on_error succeeds; configure;
   * activate; deactivate fails, then succeeds; on_shutdown as the handle is released. */
  const uint8_t answers[] = {42, ROSLITE_LIFECYCLE_CALLBACK_SUCCESS,
                             ROSLITE_LIFECYCLE_CALLBACK_SUCCESS, ROSLITE_LIFECYCLE_CALLBACK_SUCCESS,
                             ROSLITE_LIFECYCLE_CALLBACK_FAILURE};
  struct managed m = {0, sizeof answers, answers};
  struct listener heard = {0, 1000};
  roslite_handle managed_node, publisher, plain_publisher, subscription, executor;
  uint8_t state = 0;
  size_t count = 0, length = 0;
  char label[16];
  CHECK(roslite_executor_create(context, &executor));
  CHECK(roslite_executor_add_node(executor, node));
  CHECK(roslite_lifecycle_node_create(node, on_transition, &m, &managed_node));
  CHECK(roslite_lifecycle_node_state(managed_node, &state));
  CHECK(roslite_lifecycle_state_label(state, label, sizeof label, &length));
  printf("state %d %s\n", (int)state, label);
  trigger(managed_node, ROSLITE_LIFECYCLE_TRANSITION_CONFIGURE, NULL);
  trigger(managed_node, 0, "configure");
  CHECK(roslite_lifecycle_publisher_create(managed_node, "managed_chatter", &type, &qos,
                                           &publisher));
  CHECK(roslite_subscription_create(node, "managed_chatter", &type, &qos, on_message, &heard,
                                    &subscription));
  CHECK(roslite_publisher_subscription_count(publisher, &count));
  printf("lifecycle publisher matched %zu\n", count);
  publish_and_listen(executor, publisher, "while inactive");
  trigger(managed_node, ROSLITE_LIFECYCLE_TRANSITION_ACTIVATE, "");
  publish_and_listen(executor, publisher, "while active");
  trigger(managed_node, ROSLITE_LIFECYCLE_TRANSITION_CONFIGURE, NULL);
  trigger(managed_node, 0, "bogus");
  trigger(managed_node, 0, "deactivate");
  trigger(managed_node, 0, "deactivate");
  publish_and_listen(executor, publisher, "after deactivate");
  CHECK(roslite_lifecycle_node_state(managed_node, &state));
  printf("state %d\n", (int)state);

  int failed = 0;
  failed += expect(roslite_lifecycle_state_label(5, label, sizeof label, &length),
                   ROSLITE_INVALID_ARGUMENT, "label of state 5");
  failed += expect(roslite_lifecycle_node_state(node, &state), ROSLITE_INVALID_HANDLE,
                   "a node handle as a lifecycle node");
  failed += expect(roslite_lifecycle_node_trigger(12345, 1, NULL, NULL, NULL),
                   ROSLITE_INVALID_HANDLE, "trigger on a handle that never existed");
  failed += expect(roslite_lifecycle_node_create(12345, NULL, NULL, &managed_node),
                   ROSLITE_INVALID_HANDLE, "lifecycle node of a node that never existed");
  failed += expect(roslite_lifecycle_node_create(node, NULL, NULL, NULL),
                   ROSLITE_INVALID_ARGUMENT, "lifecycle node without an out-pointer");
  CHECK(roslite_publisher_create(node, "chatter", &type, &qos, &plain_publisher));
  bool activated = false;
  failed += expect(roslite_lifecycle_publisher_is_activated(plain_publisher, &activated),
                   ROSLITE_INVALID_HANDLE, "a plain publisher as a lifecycle publisher");

  printf("releasing\n");
  CHECK(roslite_release(managed_node));
  failed += expect(roslite_lifecycle_node_state(managed_node, &state), ROSLITE_INVALID_HANDLE,
                   "a released lifecycle node");
  printf("callbacks %d\n", m.calls);

  /* Without a callback every transition succeeds; a finalized node is left alone on release. */
  roslite_handle second_node, bare;
  CHECK(roslite_node_create(context, "c_bare", "", &second_node));
  CHECK(roslite_lifecycle_node_create(second_node, NULL, NULL, &bare));
  trigger(bare, 0, "configure");
  trigger(bare, 0, "shutdown");
  trigger(bare, 0, "cleanup");
  CHECK(roslite_release(bare));
  CHECK(roslite_release(second_node));
  CHECK(roslite_release(subscription));
  CHECK(roslite_release(publisher));
  CHECK(roslite_release(executor));
  printf(failed ? "FAILED %d\n" : "lifecycle checks held\n", failed);
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  CHECK(roslite_context_init(argc, (const char *const *)argv, &context));
  CHECK(roslite_install_signal_handlers());
  CHECK(roslite_node_create(context, "c_node", "", &node));
  CHECK(roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos));
  const char *mode = argv[1];
  if (strcmp(mode, "talk") == 0) {
    roslite_type type = {"std_msgs/msg/String", argv[2]};
    struct talker t = {0, 0, atoi(argv[3])};
    roslite_handle timer;
    CHECK(roslite_publisher_create(node, "chatter", &type, &qos, &t.publisher));
    CHECK(roslite_wall_timer_create(node, 50000000, on_tick, &t, &timer));
    CHECK(roslite_log("c_node", ROSLITE_LOG_INFO, NULL, "talking"));
    spin();
  } else if (strcmp(mode, "listen") == 0) {
    roslite_type type = {"std_msgs/msg/String", argv[2]};
    struct listener l = {0, atoi(argv[3])};
    roslite_handle subscription;
    CHECK(roslite_subscription_create(node, "chatter", &type, &qos, on_message, &l,
                                      &subscription));
    printf("listening\n");
    fflush(stdout);
    spin();
  } else if (strcmp(mode, "param") == 0) {
    roslite_parameter_value rate = {.type = ROSLITE_PARAMETER_INTEGER}, got = {.type = 0};
    rate.integer_value = 1;
    CHECK(roslite_parameter_declare(node, "rate", &rate, &got));
    printf("rate %" PRId64 "\n", got.integer_value);
    roslite_parameter_value_fini(&got);
    roslite_parameter_value label = {.type = ROSLITE_PARAMETER_STRING};
    label.string_value = "none";
    CHECK(roslite_parameter_declare(node, "label", &label, NULL));
    label.string_value = "set from C";
    CHECK(roslite_parameter_set(node, "label", &label));
    CHECK(roslite_parameter_get(node, "label", &got));
    printf("label %s\n", got.string_value);
    roslite_parameter_value_fini(&got);
    char name[64];
    size_t length;
    CHECK(roslite_node_fully_qualified_name(node, name, sizeof name, &length));
    printf("node %s\n", name);
  } else if (strcmp(mode, "call") == 0) {
    roslite_service_type type = {"example_interfaces/srv/AddTwoInts", argv[2], argv[3]};
    roslite_handle client;
    CHECK(roslite_client_create(node, "add_two_ints", &type, &client));
    CHECK(roslite_client_wait_for_service(client, 20000000000LL));
    uint8_t request[20] = {0, 1, 0, 0};
    int64_t a = atoll(argv[4]), b = atoll(argv[5]), sum;
    memcpy(request + 4, &a, 8);
    memcpy(request + 12, &b, 8);
    roslite_buffer response = {.data = NULL};
    CHECK(roslite_client_call(client, request, sizeof request, 10000000000LL, &response));
    if (response.length < 12) return 3;
    memcpy(&sum, response.data + 4, 8);
    printf("sum %" PRId64 "\n", sum);
    roslite_buffer_fini(&response);
  } else if (strcmp(mode, "serve") == 0) {
    roslite_service_type type = {"example_interfaces/srv/AddTwoInts", argv[2], argv[3]};
    struct server s = {0, atoi(argv[4])};
    roslite_handle server;
    CHECK(roslite_service_create(node, "add_two_ints", &type, NULL, on_request, &s, &server));
    printf("serving\n");
    fflush(stdout);
    spin();
  } else if (strcmp(mode, "async") == 0) {
    roslite_service_type type = {"example_interfaces/srv/AddTwoInts", argv[2], argv[3]};
    roslite_handle client;
    CHECK(roslite_client_create(node, "add_two_ints", &type, &client));
    CHECK(roslite_client_wait_for_service(client, 20000000000LL));
    uint8_t request[20] = {0, 1, 0, 0};
    int64_t a = 40, b = 2;
    memcpy(request + 4, &a, 8);
    memcpy(request + 12, &b, 8);
    struct async_call kept = {0, 0, -1}, removed = {0, 0, -1};
    int64_t kept_id, removed_id;
    CHECK(roslite_client_send_request(client, request, sizeof request, on_response, &removed,
                                      &removed_id));
    roslite_status removal = roslite_client_remove_pending_request(client, removed_id);
    CHECK(roslite_client_send_request(client, request, sizeof request, on_response, &kept,
                                      &kept_id));
    for (int i = 0; i < 1000 && !__atomic_load_n(&kept.done, __ATOMIC_ACQUIRE); i++) {
      struct timespec ms = {0, 10000000};
      nanosleep(&ms, NULL);
    }
    printf("async sum %" PRId64 " status %d; removed: %s, called %d\n", kept.sum,
           (int)kept.status, removal == ROSLITE_OK ? "yes" : "no (already answered)",
           removed.done);
    if (removal == ROSLITE_OK && removed.done) return 4;
    if (!kept.done) return 5;
  } else if (strcmp(mode, "onset") == 0) {
    roslite_handle callback;
    roslite_parameter_value value = {.type = ROSLITE_PARAMETER_INTEGER};
    value.integer_value = 1;
    CHECK(roslite_parameter_declare(node, "speed", &value, NULL));
    CHECK(roslite_parameter_add_on_set_callback(node, refuse_negative, NULL, &callback));
    value.integer_value = -3;
    roslite_status refused = roslite_parameter_set(node, "speed", &value);
    printf("refused %d: %s\n", (int)refused, roslite_last_error());
    value.integer_value = 7;
    CHECK(roslite_parameter_set(node, "speed", &value));
    CHECK(roslite_release(callback));
    value.integer_value = -4;
    CHECK(roslite_parameter_set(node, "speed", &value));
    roslite_parameter_value got = {.type = 0};
    CHECK(roslite_parameter_get(node, "speed", &got));
    printf("speed %" PRId64 "\n", got.integer_value);
  } else if (strcmp(mode, "graph") == 0) {
    return graph(argv[2]);
  } else if (strcmp(mode, "errors") == 0) {
    return errors(argv[2]);
  } else if (strcmp(mode, "lifecycle") == 0) {
    return lifecycle(argv[2]);
  } else {
    return 2;
  }
  CHECK(roslite_release(node));
  CHECK(roslite_release(context));
  return 0;
}
