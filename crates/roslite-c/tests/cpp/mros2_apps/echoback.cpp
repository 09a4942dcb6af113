// An application in the shape of mROS 2-POSIX's echoback_string: a subscription that prints
// what it receives, and a publisher in a loop in main with osDelay between messages. Built
// unchanged by ../../cpp_rclpy.rs.
#include "mros2.h"
#include "std_msgs/msg/string.hpp"

#include "cmsis_os.h"
#include "netif.h"
#include "netif_posix_add.h"

#include <stdio.h>
#include <string>

void userCallback(std_msgs::msg::String *msg)
{
  printf("subscribed msg: '%s'\r\n", msg->data.c_str());
  fflush(stdout);
}

int main(int argc, char *argv[])
{
  (void)argc;
  (void)argv;
  netif_posix_add(NETIF_IPADDR, NETIF_NETMASK);
  osKernelStart();
  mros2::init(0, NULL);
  mros2::Node node = mros2::Node::create_node("mros2_node");
  mros2::Publisher pub = node.create_publisher<std_msgs::msg::String>("to_linux", 10);
  mros2::Subscriber sub = node.create_subscription<std_msgs::msg::String>("to_stm", 10, userCallback);
  osDelay(100);
  MROS2_INFO("ready to pub/sub message\r\n");
  for (int count = 0; count < 600; count++)
  {
    auto msg = std_msgs::msg::String();
    msg.data = "Hello from mros2 onto Linux: " + std::to_string(count);
    pub.publish(msg);
    osDelay(100);
  }
  return 0;
}
