/* A C node for WebAssembly: publishes std_msgs/String "Hello from Wasm: N" on /chatter every
 * 100 ms. With an argument N it stops after N messages. The same source builds natively
 * against roslite-c; as a Wasm node (roslite_wasm::guest_build) each roslite_* call is an
 * import of module roslite_v1 and the timer calls back through roslite_guest_dispatch.
 * Message types: `roslite interface generate --lang c std_msgs`.
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

struct talker {
  roslite_handle context;
  roslite_handle publisher;
  int published;
  int limit;
  /* Reused by every message: its capacity stays, so publishing allocates no more. */
  roslite_cdr_buffer bytes;
};

static void on_timer(void *user_data)
{
  struct talker *talker = user_data;
  std_msgs__msg__String message;
  char text[64];
  std_msgs__msg__String__init(&message);
  snprintf(text, sizeof text, "Hello from Wasm: %d", ++talker->published);
  if (roslite__String__assign(&message.data, text) &&
      std_msgs__msg__String__encode(&message, &talker->bytes)) {
    printf("Publishing: '%s'\n", text);
    fflush(stdout);
    if (roslite_publish(talker->publisher, talker->bytes.data, talker->bytes.length) != ROSLITE_OK)
      fprintf(stderr, "publish failed: %s\n", roslite_last_error());
  }
  std_msgs__msg__String__fini(&message);
  if (talker->published == talker->limit) roslite_context_shutdown(talker->context);
}

int main(int argc, char **argv)
{
  static struct talker talker;
  roslite_handle node, timer, executor;
  roslite_qos qos;
  roslite_type type = {std_msgs__msg__String__TYPE_NAME, std_msgs__msg__String__TYPE_HASH};
  talker.limit = argc > 1 ? atoi(argv[1]) : 0;
  CHECK(roslite_context_init(argc, (const char *const *)argv, &talker.context));
  CHECK(roslite_install_signal_handlers());
  CHECK(roslite_node_create(talker.context, "wasm_talker", "", &node));
  CHECK(roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos));
  CHECK(roslite_publisher_create(node, "chatter", &type, &qos, &talker.publisher));
  CHECK(roslite_wall_timer_create(node, 100 * 1000 * 1000, on_timer, &talker, &timer));
  CHECK(roslite_executor_create(talker.context, &executor));
  CHECK(roslite_executor_add_node(executor, node));
  CHECK(roslite_executor_spin(executor));
  roslite_cdr_buffer_fini(&talker.bytes);
  roslite_release(executor);
  roslite_release(timer);
  roslite_release(talker.publisher);
  roslite_release(node);
  roslite_release(talker.context);
  return 0;
}
