"""rclpy (real ROS 2) listener for the interop tests: prints each /chatter message, then the
graph as rclpy sees it, then `RESULT <count>`. Exits after `count` messages or `seconds`."""
import sys
import time

import rclpy
from std_msgs.msg import String

seconds, count = float(sys.argv[1]), int(sys.argv[2])
rclpy.init()
node = rclpy.create_node("py_listener")
got = []
node.create_subscription(String, "chatter", lambda m: got.append(m.data), 10)
end = time.monotonic() + seconds
while time.monotonic() < end and len(got) < count:
    rclpy.spin_once(node, timeout_sec=0.1)
for data in got:
    print("HEARD", data, flush=True)
names = sorted(f"{ns.rstrip('/')}/{name}" for name, ns in node.get_node_names_and_namespaces())
print("NODES", " ".join(names), flush=True)
print("RESULT", len(got), flush=True)
