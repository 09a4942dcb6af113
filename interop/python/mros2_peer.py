"""rclpy (real ROS 2) peer for the mROS 2-shaped applications' interop test: publishes
`from rclpy <n>` on /to_stm at 10 Hz and prints each std_msgs/String heard on /to_linux as
`HEARD <data>`, then `RESULT <count>`. Once `count` messages were heard it publishes 2 s
more (so the other side hears rclpy too), then exits; it gives up after `seconds`.

A publish rclpy refuses (Fast DDS's "cannot publish data", seen a few times in full test runs
on a loaded machine; the cause is not known) is reported on stderr as
`REFUSED <n> after <ms> ms: <error>` and message n is published again at the next period;
more than 10 refusals end the script with that error."""
import sys
import time

import rclpy
from rclpy._rclpy_pybind11 import RCLError
from std_msgs.msg import String

PERIOD = 0.1

seconds, count = float(sys.argv[1]), int(sys.argv[2])
rclpy.init()
node = rclpy.create_node("py_mros2_peer")
heard = []
node.create_subscription(String, "to_linux", lambda m: heard.append(m.data), 10)
publisher = node.create_publisher(String, "to_stm", 10)
end = time.monotonic() + seconds
n = 0
refused = 0
linger_until = None
next_publish = time.monotonic()
while time.monotonic() < end:
    if linger_until is None and len(heard) >= count:
        linger_until = time.monotonic() + 2.0
    if linger_until is not None and time.monotonic() > linger_until:
        break
    if time.monotonic() >= next_publish:
        next_publish += PERIOD
        started = time.monotonic()
        try:
            publisher.publish(String(data=f"from rclpy {n + 1}"))
            n += 1
        except RCLError as error:
            refused += 1
            took_ms = (time.monotonic() - started) * 1000
            print(f"REFUSED {n + 1} after {took_ms:.1f} ms: {error}", file=sys.stderr, flush=True)
            if refused > 10:
                raise
    # Handles what arrives until the next period (a reply must not bring the next publish
    # forward: the echo application answers each message at once).
    rclpy.spin_once(node, timeout_sec=max(0.0, next_publish - time.monotonic()))
heard = heard[:count]
for data in heard:
    print("HEARD", data, flush=True)
print("RESULT", len(heard), flush=True)
node.destroy_node()
rclpy.shutdown()
