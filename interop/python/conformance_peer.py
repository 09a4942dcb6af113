"""rclpy (real ROS 2, Fast DDS) side of the wire conformance suite
(crates/roslite-cli/tests/conformance.rs): one process per direction, each serving every case of
test_msgs_cases.py. Results are JSON objects, one a line on stdout, naming the case by its
number in `cases`; a field that is null passed, a text says what differed.

    conformance_peer.py cases
        the cases (test_msgs_cases.py).
    conformance_peer.py source <seconds>
        publishes every message case on /conformance/echo/<Name> (reliable, transient local,
        keep all: a late subscriber gets them all, in order), prints
        {"endpoint": topic, "type": ..., "hash": ...} for each publisher as rclpy's graph API
        reports it, then READY.
    conformance_peer.py sink <seconds>
        subscribes to /conformance/pub/c<N> for every message case N roslite sends and compares
        what arrives with the case: {"case": N, "values": ..., "bytes": ...}. Prints READY.
    conformance_peer.py relay <seconds>
        publishes every message case on /conformance/relay/<Name>/in, takes what comes back on
        /conformance/relay/<Name>/out (all but the cases roslite refuses to send; of a keyed
        type, each matched to its case by its key) and compares it
        ({"relay": N, "values", "bytes"}); calls
        /conformance/gen/c<N> for every service case and compares the response
        ({"client": N, "values"}); then checks the type name and hash of every endpoint of
        those topics and services that is not its own against its own
        ({"graph": what, "type": ..., "failure": ...}). Prints READY at the start and DONE at
        the end, and ends.
    conformance_peer.py serve <seconds>
        serves /conformance/call/c<N> for every service case N, answering with the case's
        response and comparing the request with the case's ({"served": N, "values": ...}).
        Prints READY.
"""
import json
import sys
import time

import rclpy
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message, serialize_message

from test_msgs_cases import (
    all_cases, compare_bytes, compare_values, instance_key, print_cases, received, yaml_message,
)

# Every case is kept until read, in order, also for a subscriber that joins later.
KEEP_ALL = QoSProfile(depth=1, history=HistoryPolicy.KEEP_ALL,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)
# What `roslite topic pub` offers by default (reliable, volatile).
VOLATILE = QoSProfile(depth=1, history=HistoryPolicy.KEEP_ALL,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)


def report(**fields):
    print(json.dumps(fields, ensure_ascii=False), flush=True)


def message_cases():
    """(number, type name, class, message) of every message case."""
    return [(n, c["type"], *c["_"]) for n, c in enumerate(all_cases()) if c["kind"] == "msg"]


def by_type(cases):
    out = {}
    for n, ty, cls, msg in cases:
        out.setdefault(ty, []).append((n, cls, msg))
    return out


def short(ty):
    return ty.rsplit("/", 1)[1]


def spin_for(node, seconds, done=lambda: False):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not done():
        rclpy.spin_once(node, timeout_sec=0.05)


def hash_text(info):
    return str(info.topic_type_hash)


def source(seconds):
    node = rclpy.create_node("conformance_source")
    publishers = []
    for ty, cases in by_type(message_cases()).items():
        topic = f"/conformance/echo/{short(ty)}"
        publisher = node.create_publisher(cases[0][1], topic, KEEP_ALL)
        for _, _, msg in cases:
            publisher.publish(msg)
        publishers.append(publisher)
        for info in node.get_publishers_info_by_topic(topic):
            report(endpoint=topic, type=info.topic_type, hash=hash_text(info))
    print("READY", flush=True)
    spin_for(node, seconds)


def sink(seconds):
    node = rclpy.create_node("conformance_sink")
    subscriptions = []
    for n, c in enumerate(all_cases()):
        if c["kind"] != "msg" or c["refused"]:
            continue
        cls, msg = c["_"]

        def check(data, n=n, cls=cls, msg=msg):
            try:
                values = compare_values(received(msg), deserialize_message(data, cls))
            except Exception as e:  # what rclpy cannot deserialize is a failure of the case
                values = f"rclpy cannot deserialize it: {e}"
            report(case=n, values=values, bytes=compare_bytes(cls, serialize_message(msg), data))

        subscriptions.append(
            node.create_subscription(cls, f"/conformance/pub/c{n}", check, VOLATILE, raw=True))
    print("READY", flush=True)
    spin_for(node, seconds)


def relay(seconds):
    end = time.monotonic() + seconds
    node = rclpy.create_node("conformance_relay")
    cases = all_cases()
    pending = {}
    keep = []
    refused = {n for n, c in enumerate(cases) if c["kind"] == "msg" and c["refused"]}
    for ty, group in by_type(message_cases()).items():
        topic = f"/conformance/relay/{short(ty)}"
        cls = group[0][1]
        # roslite refuses to send what `refused` names (bounds counted in bytes), so the
        # others come back, in order (of a keyed type: in order within each instance).
        expected = [case for case in group if case[0] not in refused]
        pending[ty] = expected

        def back(data, ty=ty, expected=expected):
            if not expected:
                report(relay=None, type=ty, failure="more messages came back than were sent")
                return
            n, cls, msg = expected[0]
            try:
                got = deserialize_message(data, cls)
                key = instance_key(got)
                if key is not None:
                    keyed = [i for i, case in enumerate(expected) if instance_key(case[2]) == key]
                    if not keyed:
                        report(relay=None, type=ty, failure=f"a message came back with a key no "
                               f"case waiting sent: {yaml_message(got)[:200]}")
                        return
                    n, cls, msg = expected[keyed[0]]
                values = compare_values(received(msg), got)
            except Exception as e:
                values = f"rclpy cannot deserialize it: {e}"
            expected.remove((n, cls, msg))
            report(relay=n, values=values, bytes=compare_bytes(cls, serialize_message(msg), data))

        keep.append(node.create_subscription(cls, f"{topic}/out", back, KEEP_ALL, raw=True))
        publisher = node.create_publisher(cls, f"{topic}/in", KEEP_ALL)
        for _, _, msg in group:
            publisher.publish(msg)
        keep.append(publisher)
    print("READY", flush=True)

    clients = []
    for n, c in enumerate(cases):
        if c["kind"] == "srv":
            cls, request, response = c["_"]
            clients.append((n, node.create_client(cls, f"/conformance/gen/c{n}"), request,
                            response))
    for n, client, request, response in clients:
        while not client.service_is_ready() and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
        future = client.call_async(request)
        spin_for(node, max(0.0, end - time.monotonic()), future.done)
        if future.done() and future.result() is not None:
            report(client=n, values=compare_values(received(response), future.result()))
        else:
            report(client=n, values="no response (is the roslite server up?)")

    spin_for(node, max(0.0, end - time.monotonic()),
             lambda: not any(pending.values()))
    for ty, left in pending.items():
        for n, _, _ in left:
            report(relay=n, values="not relayed back", bytes="not relayed back")
    graph(node, cases)
    print("DONE", flush=True)


def graph(node, cases):
    """The type name and hash rclpy's graph API gives roslite's endpoints, against its own."""
    own = node.get_name()

    def check(what, mine, theirs):
        if not mine:
            report(graph=what, failure="rclpy lists no endpoint of its own here")
            return
        if not theirs:
            report(graph=what, failure="rclpy lists no roslite endpoint")
            return
        expected = (mine[0].topic_type, hash_text(mine[0]))
        for info in theirs:
            got = (info.topic_type, hash_text(info))
            report(graph=what, type=info.topic_type,
                   failure=None if got == expected else f"rclpy sees {got}, expected {expected}")

    def split(infos):
        return ([i for i in infos if i.node_name == own],
                [i for i in infos if i.node_name != own])

    for ty in sorted({c["type"] for c in cases if c["kind"] == "msg"}):
        topic = f"/conformance/relay/{short(ty)}"
        mine, _ = split(node.get_publishers_info_by_topic(f"{topic}/in"))
        _, theirs = split(node.get_subscriptions_info_by_topic(f"{topic}/in"))
        check(f"{ty} subscription", mine, theirs)
        mine, _ = split(node.get_subscriptions_info_by_topic(f"{topic}/out"))
        _, theirs = split(node.get_publishers_info_by_topic(f"{topic}/out"))
        check(f"{ty} publisher", mine, theirs)
    services = dict(node.get_service_names_and_types())
    for n, c in enumerate(cases):
        if c["kind"] != "srv":
            continue
        name = f"/conformance/gen/c{n}"
        types = services.get(name, [])
        report(graph=f"{c['type']} service c{n}", type=" ".join(types),
               failure=None if types == [c["type"]] else f"rclpy lists the service as {types}")
        request, reply = f"rq{name}Request", f"rr{name}Reply"
        mine, _ = split(node.get_publishers_info_by_topic(request, no_mangle=True))
        _, theirs = split(node.get_subscriptions_info_by_topic(request, no_mangle=True))
        check(f"{c['type']} request reader c{n}", mine, theirs)
        mine, _ = split(node.get_subscriptions_info_by_topic(reply, no_mangle=True))
        _, theirs = split(node.get_publishers_info_by_topic(reply, no_mangle=True))
        check(f"{c['type']} reply writer c{n}", mine, theirs)


def serve(seconds):
    node = rclpy.create_node("conformance_server")
    services = []
    for n, c in enumerate(all_cases()):
        if c["kind"] != "srv":
            continue
        cls, request, response = c["_"]

        def answer(got, _, n=n, request=request, response=response):
            report(served=n, values=compare_values(received(request), got))
            return response

        services.append(node.create_service(cls, f"/conformance/call/c{n}", answer))
    print("READY", flush=True)
    spin_for(node, seconds)


def main():
    mode = sys.argv[1]
    if mode == "cases":
        print_cases()
        return
    rclpy.init()
    try:
        {"source": source, "sink": sink, "relay": relay, "serve": serve}[mode](
            float(sys.argv[2]))
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
