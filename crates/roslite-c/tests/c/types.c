/*
 * Which types roslite knows, from C (run by ../c_abi.rs with ROSLITE_NETWORK=off). Built
 * against the C header `roslite interface generate --lang c` writes for my_msgs/msg/Reading, a
 * type roslite does not ship (it uses my_msgs/msg/Unit and std_msgs/msg/Header).
 *
 *   types STRING_HASH AMENT_TYPE AMENT_HASH
 *
 * STRING_HASH is std_msgs/msg/String's hash; AMENT_TYPE is a type the test put under
 * $AMENT_PREFIX_PATH and AMENT_HASH its hash. Prints each check's status and message.
 */
#include <roslite/roslite.h>

#include "my_msgs/msg/reading.h"

#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    roslite_status status_ = (call);                                                         \
    if (status_ != ROSLITE_OK) {                                                             \
      fprintf(stderr, "%s failed: status %d: %s\n", #call, (int)status_,                     \
              roslite_last_error());                                                         \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

static int received;
static double received_value;

static void on_reading(void *user, const uint8_t *cdr, size_t length,
                       const roslite_message_info *info) {
  my_msgs__msg__Reading reading;
  (void)user;
  (void)info;
  my_msgs__msg__Reading__init(&reading);
  if (my_msgs__msg__Reading__decode(&reading, cdr, length)) {
    received += 1;
    received_value = reading.value;
  }
  my_msgs__msg__Reading__fini(&reading);
}

/* Prints the outcome as "<what>: status N, message '...'"; 1 if the status is not `want`. */
static int expect(roslite_status got, roslite_status want, const char *what) {
  printf("%s: status %d, message '%s'\n", what, (int)got, got == ROSLITE_OK ? "" : roslite_last_error());
  if (got != want) {
    printf("  expected status %d\n", (int)want);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  roslite_handle context, node, h, publisher, subscription, executor;
  roslite_qos qos;
  int failed = 0;
  if (argc < 5) return 2;
  const char *zeros = "RIHS01_0000000000000000000000000000000000000000000000000000000000000000";
  roslite_type string_wrong = {"std_msgs/msg/String", zeros};
  roslite_type string_right = {"std_msgs/msg/String", argv[2]};
  roslite_type reading = {my_msgs__msg__Reading__TYPE_NAME, my_msgs__msg__Reading__TYPE_HASH};
  roslite_type reading_wrong = {my_msgs__msg__Reading__TYPE_NAME, zeros};
  roslite_type from_ament = {argv[3], argv[4]};
  roslite_service_type service_wrong = {"std_srvs/srv/SetBool", zeros, zeros};
  CHECK(roslite_context_init(argc, (const char *const *)argv, &context));
  CHECK(roslite_node_create(context, "c_types", NULL, &node));
  CHECK(roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos));

  failed += expect(roslite_publisher_create(node, "chatter", &string_wrong, &qos, &h),
                   ROSLITE_UNKNOWN_TYPE, "known type, wrong hash");
  failed += expect(roslite_client_create(node, "set", &service_wrong, &h), ROSLITE_UNKNOWN_TYPE,
                   "known service type, wrong hashes");
  failed += expect(roslite_publisher_create(node, "chatter", &string_right, &qos, &h),
                   ROSLITE_OK, "known type, right hash");
  failed += expect(roslite_publisher_create(node, "reading", &reading, &qos, &h),
                   ROSLITE_UNKNOWN_TYPE, "unknown type");
  failed += expect(roslite_type_register("int32 x\n"), ROSLITE_INVALID_ARGUMENT,
                   "a definition without its MSG: line");
  failed += expect(roslite_type_register("MSG: my_msgs/msg/Bad\nint32\n"),
                   ROSLITE_INVALID_ARGUMENT, "a definition that does not parse");
  failed += expect(roslite_type_register(my_msgs__msg__Reading__TYPE_DEFINITION), ROSLITE_OK,
                   "registering the user type");
  failed += expect(roslite_type_register(my_msgs__msg__Reading__TYPE_DEFINITION), ROSLITE_OK,
                   "registering it again");
  failed += expect(roslite_type_register("MSG: my_msgs/msg/Unit\nint8 other\n"),
                   ROSLITE_INVALID_ARGUMENT, "registering another definition of a registered type");
  failed += expect(roslite_publisher_create(node, "reading", &reading_wrong, &qos, &h),
                   ROSLITE_UNKNOWN_TYPE, "registered type, wrong hash");
  failed += expect(roslite_publisher_create(node, "thing", &from_ament, &qos, &h), ROSLITE_OK,
                   "a type under AMENT_PREFIX_PATH");

  /* The registered type is usable: published and received in this process. */
  failed += expect(roslite_publisher_create(node, "reading", &reading, &qos, &publisher),
                   ROSLITE_OK, "registered type, publisher");
  failed += expect(roslite_subscription_create(node, "reading", &reading, &qos, on_reading, NULL,
                                               &subscription),
                   ROSLITE_OK, "registered type, subscription");
  CHECK(roslite_executor_create(context, &executor));
  CHECK(roslite_executor_add_node(executor, node));
  my_msgs__msg__Reading message;
  my_msgs__msg__Reading__init(&message);
  message.value = 21.5;
  roslite_cdr_buffer bytes = {0};
  if (!my_msgs__msg__Reading__encode(&message, &bytes)) return 1;
  for (int i = 0; i < 100 && received == 0; ++i) {
    CHECK(roslite_publish(publisher, bytes.data, bytes.length));
    CHECK(roslite_executor_spin_for(executor, 20000000));
  }
  roslite_cdr_buffer_fini(&bytes);
  my_msgs__msg__Reading__fini(&message);
  printf("received %d, value %.1f\n", received > 0, received_value);
  failed += received == 0;
  printf(failed ? "FAILED %d\n" : "all type checks held\n", failed);
  return failed ? 1 : 0;
}
