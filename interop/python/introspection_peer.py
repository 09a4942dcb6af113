"""rclpy (real ROS 2) peer for the service introspection interop tests.

  introspection_peer.py server SERVICE COUNT
        an rclpy std_srvs/SetBool server on SERVICE answering success=data,
        message="on"/"off", its introspection on with contents; prints READY once up and
        exits after COUNT requests and the events below (at most 30 s)
  introspection_peer.py client SERVICE COUNT
        an rclpy SetBool client of SERVICE, its introspection on with contents; once the
        service is ready and both event publishers are matched, it calls with data=True,
        False, True, ... COUNT times and exits after the events below (at most 30 s)

Both listen to SERVICE/_service_event as `ros2 service echo` does (services_default QoS)
and print each event heard as
    event <event_type> <sequence_number> <client_gid hex> <request> <response>
(request and response as rclpy prints them, `-` when absent), then, for each publisher of
the event topic:
    publisher <node> <type> <type hash>
and last its verdict on the events: `verdict ok` when there are COUNT calls of four events
each (kinds 0 to 3), each naming one client and one sequence number, requests with data
True, False, ... in the request events and the answers in the response events; otherwise
`verdict <what is wrong>`.
"""
import sys
import time

import rclpy
from rclpy.node import Node
from rclpy.qos import qos_profile_services_default, qos_profile_system_default
from rclpy.service_introspection import ServiceIntrospectionState
from std_srvs.srv import SetBool


def line(event):
    gid = bytes(int(b) for b in event.info.client_gid).hex()
    request = repr(event.request[0]) if event.request else "-"
    response = repr(event.response[0]) if event.response else "-"
    return (f"event {event.info.event_type} {event.info.sequence_number} {gid} "
            f"{request} {response}")


def verdict(events, count):
    calls = {}
    for event in events:
        calls.setdefault(event.info.sequence_number, []).append(event)
    if len(calls) != count:
        return f"{len(calls)} calls, expected {count}"
    for i, number in enumerate(sorted(calls)):
        call = sorted(calls[number], key=lambda e: e.info.event_type)
        kinds = [e.info.event_type for e in call]
        if kinds != [0, 1, 2, 3]:
            return f"call {number} has events {kinds}"
        gids = {bytes(int(b) for b in e.info.client_gid) for e in call}
        if len(gids) != 1 or gids == {bytes(16)}:
            return f"call {number} names clients {sorted(g.hex() for g in gids)}"
        data = i % 2 == 0
        request = [SetBool.Request(data=data)]
        response = [SetBool.Response(success=data, message="on" if data else "off")]
        for event in call[:2]:
            if list(event.request) != request or list(event.response):
                return f"call {number} request event {line(event)}"
        for event in call[2:]:
            if list(event.request) or list(event.response) != response:
                return f"call {number} response event {line(event)}"
    return "ok"


def answer(request, response):
    response.success = request.data
    response.message = "on" if request.data else "off"
    return response


def main():
    role, service, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rclpy.init()
    node = Node(f"py_introspected_{role}")
    events = []
    topic = service + "/_service_event"
    node.create_subscription(SetBool.Event, topic, events.append,
                             qos_profile_services_default)
    if role == "server":
        endpoint = node.create_service(SetBool, service, answer)
    else:
        endpoint = node.create_client(SetBool, service)
    endpoint.configure_introspection(node.get_clock(), qos_profile_system_default,
                                     ServiceIntrospectionState.CONTENTS)
    print("READY", flush=True)
    deadline = time.time() + 30.0
    # Every call makes four events: two from the client, two from the server.
    expected = 4 * count
    if role == "client":
        if not endpoint.wait_for_service(timeout_sec=20.0):
            print("no server", flush=True)
            sys.exit(1)
        # Both event publishers and both listeners (ours and the other side's) are known,
        # and a moment more lets each event writer match each listener before the calls.
        while ((node.count_publishers(topic) < 2 or node.count_subscribers(topic) < 2)
               and time.time() < deadline):
            rclpy.spin_once(node, timeout_sec=0.05)
        end = time.time() + 0.5
        while time.time() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
        for i in range(count):
            future = endpoint.call_async(SetBool.Request(data=(i % 2 == 0)))
            rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
            print(f"response {future.result()!r}", flush=True)
    while len(events) < expected and time.time() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
    # Late duplicates, if any, would show here.
    end = time.time() + 0.3
    while time.time() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    for event in events:
        print(line(event), flush=True)
    for info in node.get_publishers_info_by_topic(topic):
        print(f"publisher {info.node_name} {info.topic_type} {info.topic_type_hash}",
              flush=True)
    print(f"verdict {verdict(events, count)}", flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
