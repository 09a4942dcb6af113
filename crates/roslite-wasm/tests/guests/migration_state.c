/* A C node whose state lives partly in the host, for the migration tests (../migration.rs):
 *
 * - an integer parameter `offset` (default 0), with an on-set callback that counts the
 *   changes it accepted;
 * - a service `count` (std_srvs/srv/Trigger) that answers "served=N offset=O accepted=A": how
 *   many requests it served (this one included), the parameter as the node reads it now, and
 *   how many changes its on-set callback accepted;
 * - a service `later` (std_srvs/srv/Trigger) that keeps the responder of its request and
 *   answers it ("later") only when `count` is called next;
 * - a reliable transient-local publisher `kept` (depth 3) on which it publishes "kept 1" to
 *   "kept 5" once, before it spins;
 * - a service `publish_kept` (std_srvs/srv/Trigger) that publishes the next of them ("kept 6",
 *   ...) and answers with its text;
 * - a service `churn` (std_srvs/srv/Trigger) that makes a client (of a service nobody serves),
 *   a subscription and a timer on one call and releases them on the next, as a node that
 *   makes a client per call does, and answers "churned": its journal should keep only what
 *   it holds;
 * - a service `bump_offset` (std_srvs/srv/Trigger) with which the node sets its own parameter
 *   `offset` to one more than it is (so its on-set callback runs inside the node's own call)
 *   and answers "offset=O".
 */
#include <roslite/roslite.h>
#include <std_msgs/msg/string.h>
#include <std_srvs/srv/trigger.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    if ((call) != ROSLITE_OK) {                                                          \
      fprintf(stderr, "%s failed: %s\n", #call, roslite_last_error());                   \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

static roslite_handle node;
static const roslite_service_type trigger = {std_srvs__srv__Trigger__TYPE_NAME,
                                             std_srvs__srv__Trigger_Request__TYPE_HASH,
                                             std_srvs__srv__Trigger_Response__TYPE_HASH};
static const roslite_type string_type = {std_msgs__msg__String__TYPE_NAME,
                                         std_msgs__msg__String__TYPE_HASH};
static uint32_t served;
static uint32_t accepted;
static roslite_cdr_buffer bytes;
static roslite_handle kept_responder;
static roslite_handle kept_publisher;
static int kept_published;

/* Publishes "kept N" for the next N on `kept`; false if it could not. */
static bool publish_kept(char *text, size_t capacity)
{
  bool published = false;
  std_msgs__msg__String message;
  std_msgs__msg__String__init(&message);
  snprintf(text, capacity, "kept %d", kept_published + 1);
  if (roslite__String__assign(&message.data, text) &&
      std_msgs__msg__String__encode(&message, &bytes)) {
    if (roslite_publish(kept_publisher, bytes.data, bytes.length) == ROSLITE_OK) {
      kept_published++;
      published = true;
    } else {
      fprintf(stderr, "publish failed: %s\n", roslite_last_error());
    }
  }
  std_msgs__msg__String__fini(&message);
  return published;
}

static void answer(roslite_handle responder, const char *text)
{
  std_srvs__srv__Trigger_Response response;
  std_srvs__srv__Trigger_Response__init(&response);
  response.success = true;
  if (roslite__String__assign(&response.message, text) &&
      std_srvs__srv__Trigger_Response__encode(&response, &bytes)) {
    if (roslite_service_send_response(responder, bytes.data, bytes.length) != ROSLITE_OK)
      fprintf(stderr, "send_response failed: %s\n", roslite_last_error());
  }
  std_srvs__srv__Trigger_Response__fini(&response);
}

static void on_later(void *user_data, const uint8_t *request, size_t length,
                     roslite_handle responder)
{
  (void)user_data;
  (void)request;
  (void)length;
  kept_responder = responder;
}

static void on_publish_kept(void *user_data, const uint8_t *request, size_t length,
                            roslite_handle responder)
{
  (void)user_data;
  (void)request;
  (void)length;
  char text[16];
  if (!publish_kept(text, sizeof text))
    snprintf(text, sizeof text, "failed");
  answer(responder, text);
}

static bool on_set(void *user_data, const char *const *names, const roslite_parameter_value *values,
                   size_t count, char *reason, size_t reason_capacity)
{
  (void)user_data;
  (void)names;
  (void)values;
  (void)reason;
  (void)reason_capacity;
  accepted += (uint32_t)count;
  return true;
}

static void ignore_message(void *user_data, const uint8_t *cdr, size_t length,
                           const roslite_message_info *info)
{
  (void)user_data;
  (void)cdr;
  (void)length;
  (void)info;
}

static void ignore_timer(void *user_data) { (void)user_data; }

/* Makes a client, a subscription and a timer on one call and releases them on the next, so
 * that a move finds the node holding them about half the time. */
static void churn(void)
{
  static roslite_handle made[3];
  static bool holding;
  if (holding) {
    for (int i = 0; i < 3; i++)
      roslite_release(made[i]);
    holding = false;
    return;
  }
  roslite_qos qos;
  if (roslite_client_create(node, "churn_unserved", &trigger, &made[0]) != ROSLITE_OK ||
      roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos) != ROSLITE_OK ||
      roslite_subscription_create(node, "churn", &string_type, &qos, ignore_message, NULL,
                                  &made[1]) != ROSLITE_OK ||
      roslite_timer_create(node, 1000000000, ignore_timer, NULL, &made[2]) != ROSLITE_OK) {
    fprintf(stderr, "churn failed: %s\n", roslite_last_error());
    return;
  }
  holding = true;
}

static void on_churn(void *user_data, const uint8_t *request, size_t length,
                     roslite_handle responder)
{
  (void)user_data;
  (void)request;
  (void)length;
  churn();
  answer(responder, "churned");
}

static void on_bump_offset(void *user_data, const uint8_t *request, size_t length,
                           roslite_handle responder)
{
  (void)user_data;
  (void)request;
  (void)length;
  roslite_parameter_value offset;
  char text[48];
  if (roslite_parameter_get(node, "offset", &offset) != ROSLITE_OK) {
    snprintf(text, sizeof text, "get failed");
  } else {
    offset.integer_value++;
    if (roslite_parameter_set(node, "offset", &offset) == ROSLITE_OK)
      snprintf(text, sizeof text, "offset=%" PRId64, offset.integer_value);
    else
      snprintf(text, sizeof text, "set failed");
    roslite_parameter_value_fini(&offset);
  }
  answer(responder, text);
}

static void on_request(void *user_data, const uint8_t *request, size_t length,
                       roslite_handle responder)
{
  (void)user_data;
  (void)request;
  (void)length;
  roslite_parameter_value offset;
  int64_t value = -1;
  if (roslite_parameter_get(node, "offset", &offset) == ROSLITE_OK) {
    value = offset.integer_value;
    roslite_parameter_value_fini(&offset);
  }
  if (kept_responder != 0) {
    answer(kept_responder, "later");
    kept_responder = 0;
  }
  served++;
  char text[96];
  snprintf(text, sizeof text, "served=%" PRIu32 " offset=%" PRId64 " accepted=%" PRIu32, served,
           value, accepted);
  answer(responder, text);
}

int main(int argc, char **argv)
{
  roslite_handle context, server, later, publish_server, churn_server, bump_server, callback,
      executor;
  roslite_qos qos;
  roslite_parameter_value zero = {.type = ROSLITE_PARAMETER_INTEGER, .integer_value = 0};
  CHECK(roslite_context_init(argc, (const char *const *)argv, &context));
  CHECK(roslite_node_create(context, "migration_state", "", &node));
  CHECK(roslite_parameter_declare(node, "offset", &zero, NULL));
  CHECK(roslite_parameter_add_on_set_callback(node, on_set, NULL, &callback));
  CHECK(roslite_service_create(node, "count", &trigger, NULL, on_request, NULL, &server));
  CHECK(roslite_service_create(node, "later", &trigger, NULL, on_later, NULL, &later));
  CHECK(roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos));
  qos.depth = 3;
  qos.durability = ROSLITE_DURABILITY_TRANSIENT_LOCAL;
  CHECK(roslite_publisher_create(node, "kept", &string_type, &qos, &kept_publisher));
  CHECK(roslite_service_create(node, "publish_kept", &trigger, NULL, on_publish_kept, NULL,
                               &publish_server));
  for (int i = 1; i <= 5; i++) {
    char text[16];
    if (!publish_kept(text, sizeof text))
      return 1;
  }
  CHECK(roslite_service_create(node, "churn", &trigger, NULL, on_churn, NULL, &churn_server));
  CHECK(roslite_service_create(node, "bump_offset", &trigger, NULL, on_bump_offset, NULL,
                               &bump_server));
  CHECK(roslite_executor_create(context, &executor));
  CHECK(roslite_executor_add_node(executor, node));
  CHECK(roslite_executor_spin(executor));
  roslite_cdr_buffer_fini(&bytes);
  roslite_release(executor);
  roslite_release(bump_server);
  roslite_release(churn_server);
  roslite_release(publish_server);
  roslite_release(kept_publisher);
  roslite_release(later);
  roslite_release(server);
  roslite_release(callback);
  roslite_release(node);
  roslite_release(context);
  return 0;
}
