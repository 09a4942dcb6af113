"""One process of `roslite bench scale`'s rclpy graph (rclpy on Fast DDS).

Usage: rclpy_scale.py INDEX PROCESSES ENDPOINTS

Says READY once rclpy is imported, then waits for a `go` line on stdin. Then it starts ROS
(rclpy.init), creates node `scale_<INDEX>` with ENDPOINTS publishers and ENDPOINTS
subscriptions of std_msgs/String on the topics `scale/topic_<k>` (QoS depth 10: reliable,
volatile), says `CREATED <t>`, and every 10 ms sums each publisher's subscription count and each
subscription's publisher count (each capped at PROCESSES, the count when every process's
endpoints are matched, its own included). It says `COUNT <sum> <expected>` whenever the sum
changes and `MATCHED <t>` once it reaches 2 x ENDPOINTS x PROCESSES; then it spins, idle, until
killed. Times are CLOCK_MONOTONIC in nanoseconds, the clock the bench reads too.
"""

import sys
import time

import rclpy
from rclpy.node import Node
from std_msgs.msg import String


def main():
    index, processes, endpoints = (int(a) for a in sys.argv[1:4])
    print("READY", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    rclpy.init()
    node = Node(f"scale_{index}")
    topics = [f"scale/topic_{k}" for k in range(endpoints)]
    publishers = [node.create_publisher(String, t, 10) for t in topics]
    subscriptions = [
        node.create_subscription(String, t, lambda _msg: None, 10) for t in topics
    ]
    print(f"CREATED {time.monotonic_ns()}", flush=True)
    expected = 2 * endpoints * processes
    state = {"last": -1, "timer": None}

    def check():
        count = sum(min(p.get_subscription_count(), processes) for p in publishers)
        count += sum(min(s.get_publisher_count(), processes) for s in subscriptions)
        if count != state["last"]:
            state["last"] = count
            print(f"COUNT {count} {expected}", flush=True)
        if count >= expected:
            print(f"MATCHED {time.monotonic_ns()}", flush=True)
            state["timer"].cancel()

    state["timer"] = node.create_timer(0.01, check)
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
