"""rclpy (real ROS 2) observer of one remote node for the WebAssembly node tests: waits until
rclpy's graph API shows node `<namespace>/<name>` with a publisher and a subscription of its
own, prints what the graph API says of it, then lists, reads and sets its parameters through
its parameter services (rclpy's AsyncParameterClient):

    NODES <fully qualified names, sorted>          (get_node_names_and_namespaces)
    TOPIC <name> <types>                           (get_topic_names_and_types)
    NODE_PUB <name> <types>                        (get_publisher_names_and_types_by_node)
    NODE_SUB <name> <types>                        (get_subscriber_names_and_types_by_node)
    NODE_SRV <name> <types>                        (get_service_names_and_types_by_node)
    PUB_INFO <topic> <node> <type>                 (get_publishers_info_by_topic)
    LIST <parameter names, sorted>                 (list_parameters)
    GET <name> <value>                             (get_parameters: rate, label)
    SET <name> <successful> <reason>               (set_parameters: label, rate -5, rate 20)
    DONE | FAILED <why>

    wasm_node_peer.py <seconds> <namespace> <name>
"""
import sys
import time

import rclpy
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.parameter_client import AsyncParameterClient


def fq(namespace, name):
    return f"{namespace.rstrip('/')}/{name}"


def main():
    seconds, namespace, name = float(sys.argv[1]), sys.argv[2], sys.argv[3]
    deadline = time.monotonic() + seconds
    remaining = lambda: max(0.1, deadline - time.monotonic())
    rclpy.init()
    node = rclpy.create_node("py_wasm_node_peer")
    own = lambda entries: [t for t, _ in entries if t not in ("/rosout", "/parameter_events")]
    pubs, subs, srvs = [], [], []
    found = False
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.1)
        if (name, namespace) not in node.get_node_names_and_namespaces():
            continue
        try:
            pubs = node.get_publisher_names_and_types_by_node(name, namespace)
            subs = node.get_subscriber_names_and_types_by_node(name, namespace)
            srvs = node.get_service_names_and_types_by_node(name, namespace)
        except Exception:  # the node vanished between the calls
            continue
        if own(pubs) and own(subs) and any(s.endswith("/list_parameters") for s, _ in srvs):
            found = True
            break
    names = sorted(fq(ns, n) for n, ns in node.get_node_names_and_namespaces())
    print("NODES", " ".join(names), flush=True)
    for topic, types in sorted(node.get_topic_names_and_types()):
        print("TOPIC", topic, ",".join(types), flush=True)
    for label, entries in (("NODE_PUB", pubs), ("NODE_SUB", subs), ("NODE_SRV", srvs)):
        for topic, types in sorted(entries):
            print(label, topic, ",".join(types), flush=True)
    for topic in own(pubs):
        for info in node.get_publishers_info_by_topic(topic):
            print("PUB_INFO", topic, fq(info.node_namespace, info.node_name), info.topic_type,
                  flush=True)
    if not found:
        print("FAILED node", fq(namespace, name), "never showed with its endpoints", flush=True)
        sys.exit(1)

    client = AsyncParameterClient(node, fq(namespace, name))

    def wait(future, what):
        rclpy.spin_until_future_complete(node, future, timeout_sec=remaining())
        if not future.done() or future.result() is None:
            print("FAILED no answer to", what, flush=True)
            sys.exit(2)
        return future.result()

    if not client.wait_for_services(timeout_sec=remaining()):
        print("FAILED parameter services never appeared", flush=True)
        sys.exit(1)
    listed = wait(client.list_parameters([], 0), "list_parameters")
    print("LIST", " ".join(sorted(listed.result.names)), flush=True)
    got = wait(client.get_parameters(["rate", "label"]), "get_parameters")
    for pname, value in zip(["rate", "label"], got.values):
        print("GET", pname, parameter_value_to_python(value), flush=True)
    for param in [
        Parameter("label", Parameter.Type.STRING, "set by rclpy"),
        Parameter("rate", Parameter.Type.INTEGER, -5),
        Parameter("rate", Parameter.Type.INTEGER, 20),
    ]:
        result = wait(client.set_parameters([param]), "set_parameters").results[0]
        print("SET", param.name, result.successful, result.reason, flush=True)
    print("DONE", flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
