"""rclpy (real ROS 2) peer for the type description interop test: asks a roslite node and an
rclpy node with endpoints of the same types for the description of each type on their
`~/get_type_description` services (REP 2011), and compares the two answers field by field.
Then reads the roslite node's `start_type_description_service` parameter as `ros2 param`
does.

Usage: type_description_peer.py <roslite node> <seconds> <type name>=<RIHS01 hash>...

The rclpy node, /py_describer, has the endpoints the test gives the roslite node: publishers
of geometry_msgs/Twist, geometry_msgs/Pose and test_msgs' Strings, WStrings, Arrays, Defaults
and BoundedSequences, a subscription to sensor_msgs/Image, a std_srvs/SetBool server and a
test_msgs/Fibonacci action server. Each request is asked of both nodes with and without
sources; prints per request `SAME <type name> sources=<bool>` or `DIFF <type name>
sources=<bool> <where>: rclpy=<value> roslite=<value>` (each difference on a line of its own),
then `PARAM ...` lines and `DONE`. Exits non-zero if a service never appears or a call gets
no answer in the time left.
"""
import sys
import time

import rclpy
from rclpy.action import ActionServer
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import parameter_value_to_python
from rclpy.parameter_client import AsyncParameterClient

from geometry_msgs.msg import Pose, Twist
from sensor_msgs.msg import Image
from std_srvs.srv import SetBool
from test_msgs.action import Fibonacci
from test_msgs.msg import Arrays, BoundedSequences, Defaults, Strings, WStrings
from type_description_interfaces.srv import GetTypeDescription

target, seconds = sys.argv[1], float(sys.argv[2])
requests = [arg.split("=", 1) for arg in sys.argv[3:]]
deadline = time.monotonic() + seconds

rclpy.init()
described = rclpy.create_node("py_describer")
keep = [
    described.create_publisher(Twist, "cmd_vel", 10),
    described.create_publisher(Pose, "pose", 10),
    described.create_publisher(Strings, "strings", 10),
    described.create_publisher(WStrings, "wstrings", 10),
    described.create_publisher(Arrays, "arrays", 10),
    described.create_publisher(Defaults, "defaults", 10),
    described.create_publisher(BoundedSequences, "bounded_sequences", 10),
    described.create_subscription(Image, "image", lambda _: None, 10),
    described.create_service(SetBool, "power", lambda _, response: response),
    ActionServer(described, Fibonacci, "fibonacci", lambda goal: Fibonacci.Result()),
]
asker = rclpy.create_node("py_type_description_asker")
executor = SingleThreadedExecutor()
executor.add_node(described)
executor.add_node(asker)

clients = {
    "rclpy": asker.create_client(GetTypeDescription, "/py_describer/get_type_description"),
    "roslite": asker.create_client(GetTypeDescription, f"{target}/get_type_description"),
}


def left():
    return max(0.0, deadline - time.monotonic())


def wait(future, what):
    executor.spin_until_future_complete(future, timeout_sec=left())
    if not future.done() or future.result() is None:
        print(f"FAILED no answer to {what}", flush=True)
        sys.exit(2)
    return future.result()


for who, client in clients.items():
    while not client.service_is_ready():
        if left() == 0.0:
            print(f"FAILED the {who} node's ~/get_type_description never appeared", flush=True)
            sys.exit(1)
        executor.spin_once(timeout_sec=0.1)


def plain_individual(individual):
    return {
        "type_name": individual.type_name,
        "fields": [
            {
                "name": f.name,
                "type_id": f.type.type_id,
                "capacity": f.type.capacity,
                "string_capacity": f.type.string_capacity,
                "nested_type_name": f.type.nested_type_name,
                "default_value": f.default_value,
            }
            for f in individual.fields
        ],
    }


def plain(response):
    """Every field of a response as plain Python values, for a comparison that names where
    two answers differ."""
    description = response.type_description
    return {
        "successful": response.successful,
        "failure_reason": response.failure_reason,
        "type_description": plain_individual(description.type_description),
        "referenced_type_descriptions": [
            plain_individual(r) for r in description.referenced_type_descriptions
        ],
        "type_sources": [
            {"type_name": s.type_name, "encoding": s.encoding,
             "raw_file_contents": s.raw_file_contents}
            for s in response.type_sources
        ],
        "extra_information": [{"key": k.key, "value": k.value} for k in response.extra_information],
    }


def differences(rclpy_value, roslite_value, where=""):
    if isinstance(rclpy_value, dict) and isinstance(roslite_value, dict):
        for key in rclpy_value.keys() | roslite_value.keys():
            yield from differences(rclpy_value.get(key), roslite_value.get(key), f"{where}.{key}")
    elif isinstance(rclpy_value, list) and isinstance(roslite_value, list):
        if len(rclpy_value) != len(roslite_value):
            yield f"{where} has {len(rclpy_value)} entries from rclpy, {len(roslite_value)} from roslite"
        for i, (a, b) in enumerate(zip(rclpy_value, roslite_value)):
            yield from differences(a, b, f"{where}[{i}]")
    elif rclpy_value != roslite_value:
        yield f"{where}: rclpy={rclpy_value!r} roslite={roslite_value!r}"


for type_name, type_hash in requests:
    for sources in (False, True):
        request = GetTypeDescription.Request(
            type_name=type_name, type_hash=type_hash, include_type_sources=sources)
        answers = {
            who: plain(wait(client.call_async(request), f"{who} {type_name}"))
            for who, client in clients.items()
        }
        found = list(differences(answers["rclpy"], answers["roslite"]))
        if not found:
            print(f"SAME {type_name} sources={sources} "
                  f"successful={answers['rclpy']['successful']} "
                  f"reason={answers['rclpy']['failure_reason']!r}", flush=True)
        for difference in found:
            print(f"DIFF {type_name} sources={sources} {difference}", flush=True)

parameters = AsyncParameterClient(asker, target)
if not parameters.wait_for_services(timeout_sec=left()):
    print("FAILED parameter services of", target, "never appeared", flush=True)
    sys.exit(1)
listed = wait(parameters.list_parameters(), "list_parameters")
print("PARAM LIST", " ".join(sorted(listed.result.names)), flush=True)
name = "start_type_description_service"
got = wait(parameters.get_parameters([name]), "get_parameters")
print("PARAM GET", name, [parameter_value_to_python(v) for v in got.values], flush=True)
descriptors = wait(parameters.describe_parameters([name]), "describe_parameters").descriptors
for d in descriptors:
    print(f"PARAM DESCRIBE {d.name} type={d.type} read_only={d.read_only} "
          f"description={d.description!r}", flush=True)
print("DONE", flush=True)
