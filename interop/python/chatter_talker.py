"""rclpy (real ROS 2) talker for the interop tests: publishes `from rclpy <n>` on /chatter at
10 Hz for `seconds`."""
import sys
import time

import rclpy
from std_msgs.msg import String

seconds = float(sys.argv[1])
rclpy.init()
node = rclpy.create_node("py_talker")
publisher = node.create_publisher(String, "chatter", 10)
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end:
    n += 1
    publisher.publish(String(data=f"from rclpy {n}"))
    rclpy.spin_once(node, timeout_sec=0.1)
