/* A deterministic C node for the engine comparison (../guests_rclpy.rs): for each
 * std_msgs/String heard on /numbers_in it publishes on /numbers_out a reply computed from the
 * message and from everything heard before (integer hashing, 64-bit wrap-around, floating
 * point through libm, formatting through printf), so any difference in how wasmtime and wasmi
 * run the same module shows in the bytes of the replies. Both topics are reliable and
 * transient-local with room for the whole sequence, so no message depends on discovery timing.
 * Its state (integers, doubles, the heap) is also what the migration tests (../migration.rs)
 * check survives a move to another host.
 */
#include <roslite/roslite.h>
#include <std_msgs/msg/string.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                      \
  do {                                                                                   \
    if ((call) != ROSLITE_OK) {                                                          \
      fprintf(stderr, "%s failed: %s\n", #call, roslite_last_error());                   \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

struct replier {
  roslite_handle publisher;
  uint32_t heard;
  uint64_t state;
  double accumulated;
  roslite_cdr_buffer bytes;
};

static uint64_t fnv1a(const char *text, size_t length)
{
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < length; i++) {
    hash ^= (unsigned char)text[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

static void on_message(void *user_data, const uint8_t *cdr, size_t length,
                       const roslite_message_info *info)
{
  struct replier *r = user_data;
  std_msgs__msg__String in, out;
  (void)info;
  std_msgs__msg__String__init(&in);
  std_msgs__msg__String__init(&out);
  if (!std_msgs__msg__String__decode(&in, cdr, length)) {
    fprintf(stderr, "undecodable message of %zu bytes\n", length);
    std_msgs__msg__String__fini(&in);
    return;
  }
  const char *data = in.data.data ? in.data.data : "";
  size_t size = in.data.size;
  uint64_t hash = fnv1a(data, size);
  r->heard++;
  r->state = r->state * 6364136223846793005ull + hash;
  r->accumulated += sqrt((double)(size + r->heard)) * 1.5 + sin((double)(hash % 1000) / 7.0);
  /* The text with its ASCII letters in ROT13 (other bytes kept: it stays UTF-8), then the
   * figures. */
  size_t capacity = size + 160;
  char *text = malloc(capacity);
  if (!text) return;
  for (size_t i = 0; i < size; i++) {
    char ch = data[i];
    if (ch >= 'a' && ch <= 'z') ch = (char)('a' + (ch - 'a' + 13) % 26);
    else if (ch >= 'A' && ch <= 'Z') ch = (char)('A' + (ch - 'A' + 13) % 26);
    text[i] = ch;
  }
  snprintf(text + size, capacity - size,
           " | n=%" PRIu32 " fnv=%016" PRIx64 " state=%016" PRIx64 " acc=%.17g", r->heard, hash,
           r->state, r->accumulated);
  if (roslite__String__assign(&out.data, text) &&
      std_msgs__msg__String__encode(&out, &r->bytes)) {
    if (roslite_publish(r->publisher, r->bytes.data, r->bytes.length) != ROSLITE_OK)
      fprintf(stderr, "publish failed: %s\n", roslite_last_error());
    printf("REPLIED %" PRIu32 "\n", r->heard);
  } else {
    printf("UNENCODABLE reply %" PRIu32 "\n", r->heard);
  }
  fflush(stdout);
  free(text);
  std_msgs__msg__String__fini(&in);
  std_msgs__msg__String__fini(&out);
}

int main(int argc, char **argv)
{
  static struct replier replier = {.state = 1};
  roslite_handle context, node, subscription, executor;
  roslite_qos qos;
  roslite_type type = {std_msgs__msg__String__TYPE_NAME, std_msgs__msg__String__TYPE_HASH};
  CHECK(roslite_context_init(argc, (const char *const *)argv, &context));
  CHECK(roslite_install_signal_handlers());
  CHECK(roslite_node_create(context, "wasm_replier", "", &node));
  CHECK(roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos));
  qos.depth = 100;
  /* With the argument "volatile" (the migration tests) nothing is kept for late joiners. */
  qos.durability = argc > 1 && strcmp(argv[1], "volatile") == 0 ? ROSLITE_DURABILITY_VOLATILE
                                                                 : ROSLITE_DURABILITY_TRANSIENT_LOCAL;
  CHECK(roslite_publisher_create(node, "numbers_out", &type, &qos, &replier.publisher));
  CHECK(roslite_subscription_create(node, "numbers_in", &type, &qos, on_message, &replier,
                                    &subscription));
  CHECK(roslite_executor_create(context, &executor));
  CHECK(roslite_executor_add_node(executor, node));
  CHECK(roslite_executor_spin(executor));
  roslite_cdr_buffer_fini(&replier.bytes);
  roslite_release(executor);
  roslite_release(subscription);
  roslite_release(replier.publisher);
  roslite_release(node);
  roslite_release(context);
  return 0;
}
