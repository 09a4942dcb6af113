"""rclpy (real ROS 2) reliable keep-all peer on /chatter (std_msgs/String, volatile), for the
keep-all interop tests (crates/roslite/tests/interop_keep_all.rs).

    keep_all_peer.py listen <seconds>
        prints `READY` once its subscription exists, then `HEARD <data>` per message as it
        comes and `LOST <total_count>` when rclpy reports messages lost; stops after the
        message `end` or `seconds`, printing `RESULT <count>`.
    keep_all_peer.py talk <count> <big_every> <big_size>
        once a subscription matched (and half a second more, for the other side to match it
        too), publishes `n 1` .. `n <count>` one a millisecond, every <big_every>th followed by
        a space and <big_size> `x`, then `end`; waits until every subscription acknowledged
        them all (at most 60 s) and prints `DONE <acknowledged: True|False>`.

The domain is ROS_DOMAIN_ID (default 0).
"""
import sys
import time

import rclpy
from rclpy.duration import Duration
from rclpy.event_handler import SubscriptionEventCallbacks
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String


def say(*words):
    print(*words, flush=True)


def main():
    mode = sys.argv[1]
    qos = QoSProfile(
        history=HistoryPolicy.KEEP_ALL,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )
    rclpy.init()
    node = rclpy.create_node(f"py_keep_all_{mode}")
    if mode == "listen":
        seconds = float(sys.argv[2])
        state = {"got": 0, "ended": False}

        def on_message(msg):
            state["got"] += 1
            say("HEARD", msg.data)
            state["ended"] = state["ended"] or msg.data == "end"

        node.create_subscription(
            String,
            "chatter",
            on_message,
            qos,
            event_callbacks=SubscriptionEventCallbacks(
                message_lost=lambda event: say("LOST", event.total_count)
            ),
        )
        say("READY")
        end = time.monotonic() + seconds
        while time.monotonic() < end and not state["ended"]:
            rclpy.spin_once(node, timeout_sec=0.05)
        say("RESULT", state["got"])
    elif mode == "talk":
        count, big_every, big_size = (int(a) for a in sys.argv[2:5])
        publisher = node.create_publisher(String, "chatter", qos)
        while publisher.get_subscription_count() < 1:
            rclpy.spin_once(node, timeout_sec=0.05)
        time.sleep(0.5)
        padding = " " + "x" * big_size
        for n in range(1, count + 1):
            big = big_every > 0 and n % big_every == 0
            publisher.publish(String(data=f"n {n}" + (padding if big else "")))
            time.sleep(0.001)
        publisher.publish(String(data="end"))
        say("DONE", publisher.wait_for_all_acked(Duration(seconds=60)))
    else:
        sys.exit(
            f"unknown mode {mode!r}: use `listen <seconds>` or "
            "`talk <count> <big_every> <big_size>`"
        )
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
