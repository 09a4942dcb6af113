"""rclpy (real ROS 2) talker or listener for the QoS interop tests: std_msgs/String or
geometry_msgs/Twist, with the reliability, durability and depth given on the command line.
Everything it reports goes to stdout, one line per event, flushed at once, so a test can react
to it while the peer runs; it also reads commands from stdin (`go`, `stop`; EOF = `stop`).

    qos_peer.py talk <topic> <string|twist> [options]
        --history N   first publishes N samples `hist 1` .. `hist N` (Twist: n = 1..N with
                      linear.z = -1), prints `HISTORY N`, and waits for `go` before the live
                      samples; without it, live samples start at once.
        live samples `<prefix><n>` (Twist: n = 1, 2, ... with linear.z = +1) at 10 Hz until
        `stop`, EOF or --seconds; `quiet` stops publishing but keeps the node spinning;
        `burst` publishes --burst more live samples back to back and prints `BURST <last n>`.
    qos_peer.py listen <topic> <string|twist|log> [options]
        prints `HEARD <text>` per sample (rcl_interfaces/Log: `<level> <logger> <msg> (in
        <function> at <file name>:<line>)`); exits after --count samples, `stop`, EOF or
        --seconds, then prints the graph (`NODES`, `TOPIC <name> <types>`) and `RESULT <n>`.

Twist sample n has linear = (n, n + 0.5, z), angular = (n / 4, -n / 8, n / 1000), z = -1 for
history and +1 for live samples; `HEARD` prints the six values with repr(), which round-trips
doubles exactly.

Both modes print `INCOMPATIBLE <POLICY> <total_count>` when rclpy reports an incompatible
remote endpoint (REQUESTED_ / OFFERED_INCOMPATIBLE_QOS), `MATCHED <n>` when the number of
matched remote endpoints changes, and with --deadline `DEADLINE <total_count>` when rclpy
reports a missed deadline (REQUESTED_ / OFFERED_DEADLINE_MISSED).

Options: --best-effort, --transient-local, --depth N (KEEP_LAST, default 10), --count N,
--seconds S (default 30), --prefix P (default `from rclpy `), --node NAME, --deadline S (QoS
deadline period in seconds), --liveliness-lease S (liveliness MANUAL_BY_TOPIC with this lease:
each publish asserts it, so `quiet` lets it lapse), --burst N (samples per `burst`), --size N
(a string sample is `<prefix><n>`, then a space and N `x` when N > 0).
"""
import argparse
import os
import queue
import sys
import threading
import time

import rclpy
from rclpy.duration import Duration
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    LivelinessPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_policy_name_from_kind,
)


def make_type(kind):
    if kind == "string":
        from std_msgs.msg import String

        return String
    if kind == "twist":
        from geometry_msgs.msg import Twist

        return Twist
    if kind == "log":
        from rcl_interfaces.msg import Log

        return Log
    sys.exit(f"unknown type {kind!r}: use string, twist or log")


def twist(n, z):
    from geometry_msgs.msg import Twist

    msg = Twist()
    msg.linear.x, msg.linear.y, msg.linear.z = float(n), n + 0.5, float(z)
    msg.angular.x, msg.angular.y, msg.angular.z = n / 4, -n / 8, n / 1000
    return msg


def text(msg):
    if hasattr(msg, "data"):
        return msg.data
    if hasattr(msg, "level"):
        where = f"{msg.function} at {os.path.basename(msg.file)}:{msg.line}"
        return f"{msg.level} {msg.name} {msg.msg} (in {where})"
    v = (msg.linear.x, msg.linear.y, msg.linear.z, msg.angular.x, msg.angular.y, msg.angular.z)
    return " ".join(repr(x) for x in v)


def say(*words):
    print(*words, flush=True)


def stdin_commands():
    """A queue of stdin lines; `stop` is queued at EOF."""
    commands = queue.Queue()

    def read():
        for line in sys.stdin:
            commands.put(line.strip())
        commands.put("stop")

    threading.Thread(target=read, daemon=True).start()
    return commands


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["talk", "listen"])
    parser.add_argument("topic")
    parser.add_argument("type", choices=["string", "twist", "log"])
    parser.add_argument("--best-effort", action="store_true")
    parser.add_argument("--transient-local", action="store_true")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--history", type=int, default=0)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--prefix", default="from rclpy ")
    parser.add_argument("--node", default=None)
    parser.add_argument("--deadline", type=float, default=None)
    parser.add_argument("--liveliness-lease", type=float, default=None)
    parser.add_argument("--burst", type=int, default=0)
    parser.add_argument("--size", type=int, default=0)
    args = parser.parse_args()

    qos = QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=args.depth,
        reliability=ReliabilityPolicy.BEST_EFFORT if args.best_effort else ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if args.transient_local else DurabilityPolicy.VOLATILE,
    )
    if args.deadline is not None:
        qos.deadline = Duration(nanoseconds=int(args.deadline * 1e9))
    if args.liveliness_lease is not None:
        qos.liveliness = LivelinessPolicy.MANUAL_BY_TOPIC
        qos.liveliness_lease_duration = Duration(nanoseconds=int(args.liveliness_lease * 1e9))
    msg_type = make_type(args.type)
    rclpy.init()
    node = rclpy.create_node(args.node or f"py_qos_{args.mode}")
    commands = stdin_commands()
    end = time.monotonic() + args.seconds

    def on_incompatible(event):
        say("INCOMPATIBLE", qos_policy_name_from_kind(event.last_policy_kind), event.total_count)

    def on_matched(event):
        say("MATCHED", event.current_count)

    def on_deadline(event):
        say("DEADLINE", event.total_count)

    def sample(n, history):
        if args.type == "twist":
            return twist(n, -1 if history else 1)
        padding = " " + "x" * args.size if args.size else ""
        return msg_type(data=f"hist {n}" if history else f"{args.prefix}{n}{padding}")

    if args.mode == "talk":
        publisher = node.create_publisher(
            msg_type,
            args.topic,
            qos,
            event_callbacks=PublisherEventCallbacks(
                incompatible_qos=on_incompatible, matched=on_matched, deadline=on_deadline
            ),
        )
        live = args.history == 0
        for n in range(1, args.history + 1):
            publisher.publish(sample(n, True))
        if args.history:
            say("HISTORY", args.history)
        n = 0
        next_live = time.monotonic()
        while time.monotonic() < end:
            try:
                command = commands.get_nowait()
            except queue.Empty:
                command = None
            if command == "stop":
                break
            if command == "go":
                live = True
            if command == "quiet":
                live = False
            if command == "burst":
                for _ in range(args.burst):
                    n += 1
                    publisher.publish(sample(n, False))
                say("BURST", n)
            if live and time.monotonic() >= next_live:
                n += 1
                publisher.publish(sample(n, False))
                next_live += 0.1
            rclpy.spin_once(node, timeout_sec=0.02)
    else:
        got = [0]

        def on_message(msg):
            got[0] += 1
            say("HEARD", text(msg))

        node.create_subscription(
            msg_type,
            args.topic,
            on_message,
            qos,
            event_callbacks=SubscriptionEventCallbacks(
                incompatible_qos=on_incompatible, matched=on_matched, deadline=on_deadline
            ),
        )
        while time.monotonic() < end and not (args.count and got[0] >= args.count):
            try:
                if commands.get_nowait() == "stop":
                    break
            except queue.Empty:
                pass
            rclpy.spin_once(node, timeout_sec=0.05)
        names = sorted(f"{ns.rstrip('/')}/{name}" for name, ns in node.get_node_names_and_namespaces())
        say("NODES", " ".join(names))
        for name, types in node.get_topic_names_and_types():
            say("TOPIC", name, ",".join(types))
        say("RESULT", got[0])
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
