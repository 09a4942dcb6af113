/* A content-filtered subscription over roslite's C ABI, driven by ../content_filter.rs.
 *
 *   content_filter HASH   HASH is std_msgs/msg/Int32's type hash
 *
 * Subscribes to /numbers (std_msgs/msg/Int32) with the filter "data > %0 AND data < %1"
 * ("10", "20") or the marker 1000, prints what the ABI says of the filter (`CFT`, `FILTER`,
 * `REFUSED` lines), then `HEARD <n>` per message. At the first marker it changes the filter to
 * "data = %0 OR data = 1000" ("3") and prints `SET`; at the second it removes the filter,
 * prints `UNSET <enabled>` and ends. */
#include <roslite/roslite.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                          \
  do {                                                                                       \
    roslite_status status_ = (call);                                                         \
    if (status_ != ROSLITE_OK) {                                                             \
      fprintf(stderr, "%s:%d: %s -> %d: %s\n", __FILE__, __LINE__, #call, (int)status_,     \
              roslite_last_error());                                                         \
      exit(1);                                                                               \
    }                                                                                        \
  } while (0)

static roslite_handle context, subscription;
static int markers;

/* The first line of the last error, for a `REFUSED` line. */
static void print_refused(const char *what, roslite_status status) {
  const char *error = roslite_last_error();
  size_t line = strcspn(error, "\n");
  printf("REFUSED %s %d %.*s\n", what, (int)status, (int)line, error);
}

static void print_filter(roslite_handle handle) {
  char text[256];
  size_t length = 0, count = 0;
  bool enabled = false;
  CHECK(roslite_subscription_is_cft_enabled(handle, &enabled));
  printf("CFT %d\n", enabled ? 1 : 0);
  CHECK(roslite_subscription_content_filter_expression(handle, text, sizeof text, &length));
  printf("FILTER %s", text);
  CHECK(roslite_subscription_content_filter_parameter_count(handle, &count));
  for (size_t i = 0; i < count; i++) {
    CHECK(roslite_subscription_content_filter_parameter(handle, i, text, sizeof text, &length));
    printf("|%s", text);
  }
  printf("\n");
}

static void on_number(void *user, const uint8_t *cdr, size_t length,
                      const roslite_message_info *info) {
  int32_t data;
  (void)user;
  (void)info;
  if (length < 8) return;
  memcpy(&data, cdr + 4, 4); /* little-endian CDR, as roslite publishes */
  printf("HEARD %d\n", (int)data);
  fflush(stdout);
  if (data != 1000) return;
  if (++markers == 1) {
    const char *three[] = {"3"};
    CHECK(roslite_subscription_set_content_filter(subscription, "data = %0 OR data = 1000",
                                                  three, 1));
    printf("SET\n");
  } else {
    bool enabled = true;
    CHECK(roslite_subscription_set_content_filter(subscription, "", NULL, 0));
    CHECK(roslite_subscription_is_cft_enabled(subscription, &enabled));
    printf("UNSET %d\n", enabled ? 1 : 0);
    CHECK(roslite_context_shutdown(context));
  }
  fflush(stdout);
}

static void on_nothing(void *user, const uint8_t *cdr, size_t length,
                       const roslite_message_info *info) {
  (void)user;
  (void)cdr;
  (void)length;
  (void)info;
}

int main(int argc, char **argv) {
  roslite_handle node, executor, refused = 0, plain;
  roslite_qos qos;
  roslite_status status;
  size_t length = 0;
  char text[64];
  if (argc < 2) return 2;
  roslite_type type = {"std_msgs/msg/Int32", argv[1]};
  CHECK(roslite_context_init(argc, (const char *const *)argv, &context));
  CHECK(roslite_node_create(context, "c_filter_listener", NULL, &node));
  CHECK(roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos));
  qos.depth = 100;

  /* A filter that does not compile refuses the subscription, with the reason. */
  status = roslite_subscription_create_filtered(node, 0, "numbers", &type, &qos, "dat > 1", NULL,
                                                0, on_nothing, NULL, &refused);
  print_refused("create", status);
  /* A subscription without a filter has none to read. (On a topic of its own: the test's
   * publisher counts the subscriptions of /numbers to know when to publish.) */
  CHECK(roslite_subscription_create_in(node, 0, "other_numbers", &type, &qos, on_nothing, NULL,
                                       &plain));
  status = roslite_subscription_content_filter_expression(plain, text, sizeof text, &length);
  print_refused("read", status);

  const char *bounds[] = {"10", "20"};
  CHECK(roslite_subscription_create_filtered(node, 0, "numbers", &type, &qos,
                                             "(data > %0 AND data < %1) OR data = 1000", bounds,
                                             2, on_number, NULL, &subscription));
  print_filter(subscription);
  /* A parameter of the wrong type leaves the filter as it was. */
  const char *text_bound[] = {"'ten'", "20"};
  status = roslite_subscription_set_content_filter(
      subscription, "(data > %0 AND data < %1) OR data = 1000", text_bound, 2);
  print_refused("set", status);
  print_filter(subscription);
  /* A filter made later on an unfiltered subscription. */
  const char *one[] = {"1"};
  CHECK(roslite_subscription_set_content_filter(plain, "data = %0", one, 1));
  print_filter(plain);
  CHECK(roslite_release(plain));
  printf("READY\n");
  fflush(stdout);

  CHECK(roslite_executor_create(context, &executor));
  CHECK(roslite_executor_add_node(executor, node));
  CHECK(roslite_executor_spin(executor));
  CHECK(roslite_release(subscription));
  CHECK(roslite_release(executor));
  CHECK(roslite_release(node));
  CHECK(roslite_release(context));
  return 0;
}
