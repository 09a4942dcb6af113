// An application in the shape of mROS 2-POSIX's sub_pose: a subscription whose callback takes
// a geometry_msgs Pose pointer and logs it with MROS2_INFO, then mros2::spin. Built unchanged
// by ../../cpp_api.rs.
#include "cmsis_os.h"

#include "mros2.h"
#include "geometry_msgs/msg/pose.hpp"

#include "netif.h"
#include "netif_posix_add.h"

#include <stdio.h>

void userCallback(geometry_msgs::msg::Pose *msg)
{
  printf("pose %.1f %.1f %.1f %.2f\n", msg->position.x, msg->position.y, msg->position.z,
         msg->orientation.w);
  fflush(stdout);
  MROS2_INFO("subscribed Pose msg!!");
}

int main(int argc, char *argv[])
{
  (void)argc;
  (void)argv;
  netif_posix_add(NETIF_IPADDR, NETIF_NETMASK);
  osKernelStart();
  mros2::init(0, NULL);
  mros2::Node node = mros2::Node::create_node("sub_pose");
  mros2::Subscriber sub = node.create_subscription<geometry_msgs::msg::Pose>("pose", 10, userCallback);
  osDelay(100);
  MROS2_INFO("ready to pub/sub message");
  mros2::spin();
  return 0;
}
