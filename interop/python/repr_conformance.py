"""rclpy (real ROS 2, test_msgs) side of the text conformance suite
(crates/roslite-cli/tests/conformance_text.rs): what rclpy prints for every test_msgs message
and service, with the fixtures test_msgs ships plus edge values (test_msgs_cases.py).

    repr_conformance.py cases
        prints the cases, one JSON object a line (see test_msgs_cases.py); this suite reads
        `yaml`, `repr` and `refused` of a message, `yaml`, `request_repr` and `response_repr`
        of a service.
    repr_conformance.py serve <seconds>
        serves /conformance/<Name> for every test_msgs service, answering each case's request
        with its response; prints READY.
    repr_conformance.py talk <seconds>
        publishes on /conformance/strings (test_msgs/msg/Strings) and /conformance/wstrings
        (test_msgs/msg/WStrings) the non-ASCII texts of `TEXT_CASES` every 100 ms; prints READY.
"""
import sys
import time

import rclpy

from test_msgs_cases import SERVICES, print_cases, service_pairs, test_msg, test_srv


def key(request):
    return getattr(request, "int64_value", 0)


def serve(seconds):
    node = rclpy.create_node("repr_conformance_server")
    answers = {}
    for name, _, request, response in service_pairs():
        answers[(name, key(request))] = response

    def make(name):
        def answer(request, response):
            return answers[(name, key(request))]
        return answer

    services = [node.create_service(getattr(test_srv, n), f"/conformance/{n}", make(n))
                for n in SERVICES]
    print("READY", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    del services


# What `talk` publishes: rclpy counts bounds in characters, so these go out.
TEXT_CASES = {
    "strings": dict(string_value="😀" * 3, bounded_string_value="ö" * 22),
    "wstrings": dict(wstring_value="😀ハロー", array_of_wstrings=["😀", "ö", "三"],
                     bounded_sequence_of_wstrings=["😀😀"]),
}


def talk(seconds):
    node = rclpy.create_node("repr_conformance_talker")
    strings = node.create_publisher(test_msg.Strings, "/conformance/strings", 10)
    wstrings = node.create_publisher(test_msg.WStrings, "/conformance/wstrings", 10)
    print("READY", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        strings.publish(test_msg.Strings(**TEXT_CASES["strings"]))
        wstrings.publish(test_msg.WStrings(**TEXT_CASES["wstrings"]))
        rclpy.spin_once(node, timeout_sec=0.1)


def main():
    mode = sys.argv[1]
    if mode == "cases":
        print_cases()
        return
    rclpy.init()
    try:
        {"serve": serve, "talk": talk}[mode](float(sys.argv[2]))
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
