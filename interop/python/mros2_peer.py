"""rclpy (real ROS 2) peer for the mROS 2-shaped applications' interop test: publishes
`from rclpy <n>` on /to_stm at 10 Hz and prints each std_msgs/String heard on /to_linux as
`HEARD <data>`, then `RESULT <count>`. Once `count` messages were heard it publishes 2 s
more (so the other side hears rclpy too), then exits; it gives up after `seconds`."""
import sys
import time

import rclpy
from std_msgs.msg import String

seconds, count = float(sys.argv[1]), int(sys.argv[2])
rclpy.init()
node = rclpy.create_node("py_mros2_peer")
heard = []
node.create_subscription(String, "to_linux", lambda m: heard.append(m.data), 10)
publisher = node.create_publisher(String, "to_stm", 10)
end = time.monotonic() + seconds
n = 0
linger_until = None
while time.monotonic() < end:
    if linger_until is None and len(heard) >= count:
        linger_until = time.monotonic() + 2.0
    if linger_until is not None and time.monotonic() > linger_until:
        break
    n += 1
    publisher.publish(String(data=f"from rclpy {n}"))
    rclpy.spin_once(node, timeout_sec=0.1)
heard = heard[:count]
for data in heard:
    print("HEARD", data, flush=True)
print("RESULT", len(heard), flush=True)
node.destroy_node()
rclpy.shutdown()
