/* A C node: prints the std_msgs/String messages on /topic. With an argument N it stops after
 * N messages. Build against an installed roslite:
 *   cc examples/c/listener.c $(PKG_CONFIG_PATH=DIR/lib/pkgconfig pkg-config --cflags --libs roslite) -o listener
 */
#include <roslite/roslite.h>
#include <std_msgs/msg/string.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    if ((call) != ROSLITE_OK) {                                                          \
      fprintf(stderr, "%s failed: %s\n", #call, roslite_last_error());                   \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

static roslite_handle context;
static int heard, limit;

static void on_message(void *user, const uint8_t *cdr, size_t length,
                       const roslite_message_info *info)
{
  std_msgs__msg__String message;
  (void)user;
  (void)info;
  std_msgs__msg__String__init(&message);
  if (std_msgs__msg__String__decode(&message, cdr, length)) {
    printf("I heard: '%s'\n", message.data.data);
    fflush(stdout);
    if (++heard == limit) roslite_context_shutdown(context);
  }
  std_msgs__msg__String__fini(&message);
}

int main(int argc, char **argv)
{
  roslite_handle node, subscription, executor;
  roslite_qos qos;
  roslite_type type = {std_msgs__msg__String__TYPE_NAME, std_msgs__msg__String__TYPE_HASH};
  limit = argc > 1 ? atoi(argv[1]) : 0;
  CHECK(roslite_context_init(argc, (const char *const *)argv, &context));
  CHECK(roslite_install_signal_handlers());
  CHECK(roslite_node_create(context, "c_listener", "", &node));
  CHECK(roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos));
  CHECK(roslite_subscription_create(node, "topic", &type, &qos, on_message, NULL, &subscription));
  CHECK(roslite_executor_create(context, &executor));
  CHECK(roslite_executor_add_node(executor, node));
  CHECK(roslite_executor_spin(executor));
  roslite_release(executor);
  roslite_release(subscription);
  roslite_release(node);
  roslite_release(context);
  return 0;
}
