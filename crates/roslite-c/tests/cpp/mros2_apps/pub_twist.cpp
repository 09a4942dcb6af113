// An application in the shape of mROS 2-POSIX's pub_twist: a publisher created from a node,
// and a loop that fills geometry_msgs Vector3 and Twist values and publishes them with
// osDelay between, never spinning. Built unchanged by ../../cpp_api.rs.
#include "mros2.h"
#include "geometry_msgs/msg/vector3.hpp"
#include "geometry_msgs/msg/twist.hpp"

#include "cmsis_os.h"
#include "netif.h"
#include "netif_posix_add.h"

#include <stdio.h>

int main(int argc, char *argv[])
{
  netif_posix_add(NETIF_IPADDR, NETIF_NETMASK);
  osKernelStart();
  mros2::init(argc, argv);

  mros2::Node node = mros2::Node::create_node("twist_node");
  mros2::Publisher pub = node.create_publisher<geometry_msgs::msg::Twist>("cmd_vel", 10);
  osDelay(100);
  MROS2_INFO("ready to publish\r\n");

  geometry_msgs::msg::Vector3 linear;
  geometry_msgs::msg::Vector3 angular;
  geometry_msgs::msg::Twist twist;
  for (int count = 0; count < 600; count++)
  {
    linear.x = count;
    linear.y = count / 2.0;
    angular.z = -count;
    twist.linear = linear;
    twist.angular = angular;
    pub.publish(twist);
    osDelay(50);
  }
  return 0;
}
