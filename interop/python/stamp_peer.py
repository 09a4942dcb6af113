"""rclpy (real ROS 2) peer for the source-timestamp interop tests, on /stamped (std_msgs/String,
reliable, transient local, keep last 1), so that a sample can be published well before the
other side takes it from the writer's history.

  talk SECONDS    publishes one message whose text is the wall-clock time of the publish in
                  nanoseconds, prints `SENT <ns>`, then keeps serving it for SECONDS.
  listen DELAY SECONDS
                  waits DELAY seconds, then subscribes and prints, for the first message,
                  `GOT <text> <source_timestamp> <received_timestamp>` from rclpy's MessageInfo
                  (nanoseconds since the epoch), then `RESULT <count>`.
"""
import sys
import time

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

QOS = QoSProfile(
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)

mode = sys.argv[1]
rclpy.init()
node = rclpy.create_node("py_stamp")
if mode == "talk":
    seconds = float(sys.argv[2])
    publisher = node.create_publisher(String, "stamped", QOS)
    sent = time.time_ns()
    publisher.publish(String(data=str(sent)))
    print("SENT", sent, flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
else:
    delay, seconds = float(sys.argv[2]), float(sys.argv[3])
    time.sleep(delay)
    got = []
    node.create_subscription(String, "stamped", lambda m, info: got.append((m.data, info)), QOS)
    end = time.monotonic() + seconds
    while time.monotonic() < end and not got:
        rclpy.spin_once(node, timeout_sec=0.1)
    for data, info in got[:1]:
        print("GOT", data, info["source_timestamp"], info["received_timestamp"], flush=True)
    print("RESULT", len(got), flush=True)
