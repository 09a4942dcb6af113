"""rclpy (real ROS 2) transient-local listener for the migration tests: joins /kept late
(reliable, transient-local, keep-last 10) and prints each std_msgs/String it hears as
`HEARD <data> <publication sequence number>` as it comes. Once it heard `count` messages it
listens one second more (so a message given twice shows), then prints `RESULT <heard>`; it
gives up after `seconds`."""
import sys
import time

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

seconds, count = float(sys.argv[1]), int(sys.argv[2])
rclpy.init()
node = rclpy.create_node("py_kept_listener")
got = []


def heard(message, info):
    got.append(message.data)
    print("HEARD", message.data, info["publication_sequence_number"], flush=True)


qos = QoSProfile(
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)
node.create_subscription(String, "kept", heard, qos)
end = time.monotonic() + seconds
while time.monotonic() < end and len(got) < count:
    rclpy.spin_once(node, timeout_sec=0.1)
more = time.monotonic() + 1.0
while time.monotonic() < more:
    rclpy.spin_once(node, timeout_sec=0.1)
print("RESULT", len(got), flush=True)
