"""rclpy (real ROS 2, Fast DDS) peer of the content filter interop tests
(crates/roslite/tests/interop_content_filter.rs), on /numbers (std_msgs/Int32, volatile,
keep-last 100, reliable unless `best_effort` is given).

    content_filter_peer.py talk [best_effort]
        prints `READY` once its publisher exists, `MATCHED` once a subscription matched;
        then for each stdin line `SEND <a> <b>` publishes a .. b-1 and 1000 (the marker),
        waits until every reliable subscription acknowledged them and prints `SENT`;
        ends at the line `END` or stdin's end.
    content_filter_peer.py listen <expression> [parameter ...]
        subscribes with ContentFilterOptions(expression, parameters), prints
        `CFT <is_cft_enabled>` and `FILTER <expression>|<parameter>|...` (get_content_filter),
        then `HEARD <data>` per message; a stdin line `SET <expression>|<parameter>|...`
        calls set_content_filter and prints `SET <is_cft_enabled>`; ends at the line `END` or
        stdin's end.

The domain is ROS_DOMAIN_ID (default 0).
"""
import sys
import threading
import time

import rclpy
from rclpy.duration import Duration
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.subscription_content_filter_options import ContentFilterOptions
from std_msgs.msg import Int32

MARKER = 1000


def say(*words):
    print(*words, flush=True)


def qos(best_effort):
    return QoSProfile(
        depth=100,
        reliability=ReliabilityPolicy.BEST_EFFORT if best_effort else ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def talk(node, best_effort):
    publisher = node.create_publisher(Int32, "numbers", qos(best_effort))
    say("READY")
    while publisher.get_subscription_count() < 1:
        time.sleep(0.02)
    say("MATCHED")
    for line in sys.stdin:
        words = line.split()
        if words == ["END"]:
            break
        if not words or words[0] != "SEND":
            continue
        first, end = int(words[1]), int(words[2])
        for data in list(range(first, end)) + [MARKER]:
            publisher.publish(Int32(data=data))
        if not best_effort:
            publisher.wait_for_all_acked(Duration(seconds=30))
        say("SENT")


def listen(node, expression, parameters):
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    subscription = node.create_subscription(
        Int32,
        "numbers",
        lambda m: say("HEARD", m.data),
        qos(False),
        content_filter_options=ContentFilterOptions(
            filter_expression=expression, expression_parameters=parameters
        ),
    )
    say("CFT", subscription.is_cft_enabled)
    current = subscription.get_content_filter()
    say("FILTER " + "|".join([current.filter_expression] + list(current.expression_parameters)))
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    for line in sys.stdin:
        if line.strip() == "END":
            break
        if line.startswith("SET "):
            expression, *parameters = line[4:].rstrip("\n").split("|")
            subscription.set_content_filter(expression, parameters)
            say("SET", subscription.is_cft_enabled)
    executor.shutdown()


def main():
    rclpy.init()
    node = rclpy.create_node(f"py_content_filter_{sys.argv[1]}")
    if sys.argv[1] == "talk":
        talk(node, "best_effort" in sys.argv[2:])
    else:
        listen(node, sys.argv[2], sys.argv[3:])
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
