// An mROS 2 application as a WebAssembly node, in the shape of mROS 2-POSIX's
// echoreply_string: a String heard on /to_stm is printed and published back on /to_linux.
// The source is what an mROS 2-POSIX workspace application is (its includes, global publisher
// and subscriber, pointer-taking callback, start-up calls, osDelay and mros2::spin); on Wasm
// the guest has one thread, so the callbacks run inside osDelay and mros2::spin.
#include "mros2.h"
#include "std_msgs/msg/string.hpp"

#include "cmsis_os.h"
#include "netif.h"
#include "netif_posix_add.h"

#include <stdio.h>
#include <string.h>

mros2::Subscriber sub;
mros2::Publisher pub;

void userCallback(std_msgs::msg::String *msg)
{
  printf("subscribed msg: '%s'\r\n", msg->data.c_str());
  fflush(stdout);
  pub.publish(*msg);
}

int main(int argc, char *argv[])
{
  (void)argc;
  (void)argv;
  netif_posix_add(NETIF_IPADDR, NETIF_NETMASK);
  osKernelStart();
  printf("app name: echoreply_string\r\n");
  mros2::init(0, NULL);
  MROS2_DEBUG("mROS 2 initialization is completed\r\n");

  mros2::Node node = mros2::Node::create_node("mros2_node");
  pub = node.create_publisher<std_msgs::msg::String>("to_linux", 10);
  sub = node.create_subscription<std_msgs::msg::String>("to_stm", 10, userCallback);
  osDelay(100);
  MROS2_INFO("ready to pub/sub message\r\n");

  mros2::spin();
  return 0;
}
