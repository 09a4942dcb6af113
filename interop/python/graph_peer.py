"""rclpy (real ROS 2) graph observer for the interop tests: a node with no endpoints of its own
that waits until rclpy's graph API shows node `<namespace>/<name>` with at least one
publisher and one subscription, then prints what the graph API returns:

    NODES <fully qualified names, sorted>
    TOPIC <name> <types, comma-separated>                 (get_topic_names_and_types)
    NODE_PUB <name> <types>                               (get_publisher_names_and_types_by_node)
    NODE_SUB <name> <types>                               (get_subscriber_names_and_types_by_node)
    PUB_INFO <topic> <node namespace>/<node name> <type> <reliability> <durability>
    SUB_INFO <topic> <node namespace>/<node name> <type> <reliability> <durability>
                                           (get_publishers/subscriptions_info_by_topic, for
                                            every topic of the node)
    RESULT found|timeout

    graph_peer.py <seconds> <namespace> <name>
"""
import sys
import time

import rclpy


def fq(namespace, name):
    return f"{namespace.rstrip('/')}/{name}"


def main():
    seconds, namespace, name = float(sys.argv[1]), sys.argv[2], sys.argv[3]
    rclpy.init()
    node = rclpy.create_node("py_graph_observer")
    end = time.monotonic() + seconds
    found = False
    pubs, subs = [], []
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
        if (name, namespace) not in node.get_node_names_and_namespaces():
            continue
        try:
            pubs = node.get_publisher_names_and_types_by_node(name, namespace)
            subs = node.get_subscriber_names_and_types_by_node(name, namespace)
        except Exception:  # the node vanished between the two calls
            continue
        # Every node also has /rosout and /parameter_events in rclpy; roslite may not, so
        # wait for the endpoints the test made (ours are outside those two).
        own = lambda entries: [t for t, _ in entries if t not in ("/rosout", "/parameter_events")]
        if own(pubs) and own(subs):
            found = True
            break
    names = sorted(fq(ns, n) for n, ns in node.get_node_names_and_namespaces())
    print("NODES", " ".join(names), flush=True)
    for topic, types in sorted(node.get_topic_names_and_types()):
        print("TOPIC", topic, ",".join(types), flush=True)
    for topic, types in sorted(pubs):
        print("NODE_PUB", topic, ",".join(types), flush=True)
    for topic, types in sorted(subs):
        print("NODE_SUB", topic, ",".join(types), flush=True)
    for label, query, entries in (
        ("PUB_INFO", node.get_publishers_info_by_topic, pubs),
        ("SUB_INFO", node.get_subscriptions_info_by_topic, subs),
    ):
        for topic, _ in sorted(entries):
            for info in query(topic):
                print(
                    label,
                    topic,
                    fq(info.node_namespace, info.node_name),
                    info.topic_type,
                    info.qos_profile.reliability.name,
                    info.qos_profile.durability.name,
                    flush=True,
                )
    print("RESULT", "found" if found else "timeout", flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
