/* Plain Cyclone DDS 0.10 peer (Debian bookworm `cyclonedds-dev`, the Cyclone of ROS 2 Humble;
 * no ROS) that follows the ROS 2 wire conventions for /chatter: DDS topic `rt/chatter`, type
 * `std_msgs::msg::dds_::String_` (one `string data`, plain CDR), reliable, volatile, KEEP_LAST
 * 10, participant USER_DATA `enclave=/;` as rmw_cyclonedds sends it.
 *
 * The topic descriptor is written by hand (what `idlc` 0.10 generates for
 * `module std_msgs { module msg { module dds_ { struct String_ { string data; }; }; }; };`,
 * minus the XTypes type information, which ROS 2 Humble does not use), so building needs only
 * the C compiler and the library: `cc cyclone_chatter.c -lddsc`.
 *
 *     cyclone_chatter listen <seconds> <count>
 *         prints `HEARD <data>` per sample as it arrives, then `MATCHED <n>` (writers matched
 *         at the end) and `RESULT <count>`; exits after `count` samples or `seconds`.
 *     cyclone_chatter talk <seconds>
 *         publishes `from cyclone <n>` at 10 Hz for `seconds`.
 *
 * The domain is ROS_DOMAIN_ID (default 0); configure the network with CYCLONEDDS_URI. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dds/dds.h"

typedef struct std_msgs_msg_dds__String_ {
  char *data;
} std_msgs_msg_dds__String_;

static const uint32_t string_ops[] = {
  DDS_OP_ADR | DDS_OP_TYPE_STR, offsetof(std_msgs_msg_dds__String_, data),
  DDS_OP_RTS
};

static const dds_topic_descriptor_t string_desc = {
  .m_size = sizeof(std_msgs_msg_dds__String_),
  .m_align = dds_alignof(std_msgs_msg_dds__String_),
  .m_flagset = 0u,
  .m_nkeys = 0u,
  .m_typename = "std_msgs::msg::dds_::String_",
  .m_keys = NULL,
  .m_nops = 2,
  .m_ops = string_ops,
  .m_meta = "",
};

static void check(dds_return_t rc, const char *what) {
  if (rc < 0) {
    fprintf(stderr, "%s: %s\n", what, dds_strretcode(rc));
    exit(1);
  }
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "listen") != 0 && strcmp(argv[1], "talk") != 0)
      || (strcmp(argv[1], "listen") == 0 && argc < 4)) {
    fprintf(stderr, "usage: %s listen <seconds> <count> | talk <seconds>\n", argv[0]);
    return 2;
  }
  const dds_time_t end = dds_time() + (dds_time_t)(atof(argv[2]) * 1e9);
  const char *domain_env = getenv("ROS_DOMAIN_ID");
  const dds_domainid_t domain = domain_env ? (dds_domainid_t)atoi(domain_env) : 0;

  dds_qos_t *pqos = dds_create_qos();
  dds_qset_userdata(pqos, "enclave=/;", strlen("enclave=/;"));
  dds_entity_t participant = dds_create_participant(domain, pqos, NULL);
  dds_delete_qos(pqos);
  check(participant, "create participant");
  dds_entity_t topic = dds_create_topic(participant, &string_desc, "rt/chatter", NULL, NULL);
  check(topic, "create topic");

  dds_qos_t *qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_MSECS(100));
  dds_qset_durability(qos, DDS_DURABILITY_VOLATILE);
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, 10);
  dds_data_representation_id_t xcdr1 = DDS_DATA_REPRESENTATION_XCDR1;
  dds_qset_data_representation(qos, 1, &xcdr1);

  if (strcmp(argv[1], "listen") == 0) {
    const int count = atoi(argv[3]);
    dds_entity_t reader = dds_create_reader(participant, topic, qos, NULL);
    check(reader, "create reader");
    int got = 0;
    while (dds_time() < end && got < count) {
      void *samples[16] = {NULL};
      dds_sample_info_t infos[16];
      dds_return_t n = dds_take(reader, samples, infos, 16, 16);
      check(n, "take");
      for (int i = 0; i < n; i++) {
        if (infos[i].valid_data) {
          got++;
          printf("HEARD %s\n", ((std_msgs_msg_dds__String_ *)samples[i])->data);
          fflush(stdout);
        }
      }
      if (n > 0) {
        dds_return_loan(reader, samples, n);
      }
      dds_sleepfor(DDS_MSECS(20));
    }
    dds_subscription_matched_status_t matched;
    check(dds_get_subscription_matched_status(reader, &matched), "matched status");
    printf("MATCHED %u\nRESULT %d\n", matched.current_count, got);
    fflush(stdout);
  } else {
    dds_entity_t writer = dds_create_writer(participant, topic, qos, NULL);
    check(writer, "create writer");
    char text[64];
    for (int n = 1; dds_time() < end; n++) {
      snprintf(text, sizeof text, "from cyclone %d", n);
      std_msgs_msg_dds__String_ sample = {.data = text};
      check(dds_write(writer, &sample), "write");
      dds_sleepfor(DDS_MSECS(100));
    }
  }
  dds_delete_qos(qos);
  dds_delete(participant);
  return 0;
}
