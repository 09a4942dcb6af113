"""rclpy (real ROS 2) peer of the migration test of a message on its way to the old host
(crates/roslite-wasm/tests/migration.rs): for each line N read from standard input it
publishes "number N: hello ünïcode" on /numbers_in (once both topics matched), and it
prints each reply heard on /numbers_out as `REPLY <text>`. Both topics are reliable and volatile, keep-last 100. Ends
when its input ends.

    numbers_peer.py
"""
import sys
import threading
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String


def main():
    rclpy.init()
    node = rclpy.create_node("py_numbers_peer")
    qos = QoSProfile(
        depth=100,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )
    node.create_subscription(
        String, "numbers_out", lambda m: print("REPLY", m.data, flush=True), qos
    )
    publisher = node.create_publisher(String, "numbers_in", qos)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    # Numbers are read only once both topics matched (a volatile reader misses what came
    # before), and a moment more for the other side to have discovered us too.
    while publisher.get_subscription_count() < 1 or node.count_publishers("numbers_out") < 1:
        time.sleep(0.05)
    time.sleep(1.0)
    for line in sys.stdin:
        number = line.strip()
        if number:
            publisher.publish(String(data=f"number {number}: hello ünïcode"))
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
