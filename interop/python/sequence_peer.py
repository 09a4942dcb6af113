"""rclpy (real ROS 2) driver for the WebAssembly engine comparison: once a subscriber of
/numbers_in and a publisher of /numbers_out are matched, publishes a fixed sequence of
`count` std_msgs/String on /numbers_in and prints each reply heard on /numbers_out as its
serialized bytes (`OUT <hex>`, CDR as it came off the wire), then `RESULT <replies>`. Both
topics are reliable and transient-local, keep-last 100. Gives up after `seconds`.

    sequence_peer.py <seconds> <count>
"""
import sys
import time

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String


def inputs(count):
    words = ["alpha", "βeta", "", "gamma delta", "ε" * 17, "x" * 300, "0123456789"]
    return [f"{i}:{words[i % len(words)]}" * (1 + i % 3) for i in range(count)]


def main():
    seconds, count = float(sys.argv[1]), int(sys.argv[2])
    rclpy.init()
    node = rclpy.create_node("py_sequence_peer")
    qos = QoSProfile(
        depth=100,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    replies = []
    subscription = node.create_subscription(
        String, "numbers_out", lambda raw: replies.append(bytes(raw)), qos, raw=True
    )
    publisher = node.create_publisher(String, "numbers_in", qos)
    end = time.monotonic() + seconds
    while time.monotonic() < end and (
        publisher.get_subscription_count() < 1 or subscription.get_publisher_count() < 1
    ):
        rclpy.spin_once(node, timeout_sec=0.1)
    for text in inputs(count):
        publisher.publish(String(data=text))
    while time.monotonic() < end and len(replies) < count:
        rclpy.spin_once(node, timeout_sec=0.1)
    for raw in replies:
        print("OUT", raw.hex(), flush=True)
    print("RESULT", len(replies), flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
