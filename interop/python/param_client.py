"""rclpy (real ROS 2) parameter client for the interop tests: drives a remote node's six
parameter services with rclpy's AsyncParameterClient and watches /parameter_events.

Usage: param_client.py <node> <seconds>. Prints one line per answer (LIST, TYPES, DESCRIBE,
GET, SET, ATOMIC, EVENT), then DONE; exits non-zero if the services never appear or a call
gets no answer within the time left.
"""
import sys
import time

import rclpy
from rcl_interfaces.msg import ParameterEvent
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.parameter_client import AsyncParameterClient

target, seconds = sys.argv[1], float(sys.argv[2])
deadline = time.monotonic() + seconds
rclpy.init()
node = rclpy.create_node("py_param_client")
events = []
node.create_subscription(ParameterEvent, "/parameter_events", events.append, 1000)
client = AsyncParameterClient(node, target)


def py(value):
    """A ParameterValue as plain Python (arrays as lists, so they print alike)."""
    v = parameter_value_to_python(value)
    return v.tolist() if hasattr(v, "tolist") else v


def left():
    return max(0.0, deadline - time.monotonic())


def wait(future, what):
    rclpy.spin_until_future_complete(node, future, timeout_sec=left())
    if not future.done() or future.result() is None:
        print(f"FAILED no answer to {what}", flush=True)
        sys.exit(2)
    return future.result()


if not client.wait_for_services(timeout_sec=left()):
    print("FAILED services of", target, "never appeared", flush=True)
    sys.exit(1)

listed = wait(client.list_parameters(), "list_parameters")
print("LIST", " ".join(sorted(listed.result.names)), flush=True)

names = ["rate", "mode", "robot_id", "gains"]
types = wait(client.get_parameter_types(names), "get_parameter_types")
print("TYPES", " ".join(str(t) for t in types.types), flush=True)

described = wait(client.describe_parameters(names), "describe_parameters")
for d in described.descriptors:
    ranges = [(r.from_value, r.to_value, r.step) for r in d.floating_point_range]
    ranges += [(r.from_value, r.to_value, r.step) for r in d.integer_range]
    print(f"DESCRIBE {d.name} type={d.type} read_only={d.read_only} "
          f"range={ranges} description={d.description!r}", flush=True)

got = wait(client.get_parameters(names), "get_parameters")
for name, value in zip(names, got.values):
    print("GET", name, repr(py(value)), flush=True)

for param in [
    Parameter("rate", Parameter.Type.DOUBLE, 25.0),  # fine
    Parameter("rate", Parameter.Type.STRING, "fast"),  # wrong type
    Parameter("rate", Parameter.Type.DOUBLE, 500.0),  # out of range
    Parameter("robot_id", Parameter.Type.INTEGER, 8),  # read-only
    Parameter("missing", Parameter.Type.INTEGER, 1),  # undeclared
]:
    result = wait(client.set_parameters([param]), "set_parameters").results[0]
    print("SET", param.name, result.successful, result.reason, flush=True)

atomic = wait(
    client.set_parameters_atomically(
        [Parameter("mode", Parameter.Type.STRING, "manual"),
         Parameter("gains", Parameter.Type.INTEGER_ARRAY, [4, 5, 6])]),
    "set_parameters_atomically")
print("ATOMIC", atomic.result.successful, atomic.result.reason, flush=True)

got = wait(client.get_parameters(["rate", "mode", "gains"]), "get_parameters")
for name, value in zip(["rate", "mode", "gains"], got.values):
    print("GET", name, repr(py(value)), flush=True)

# Events for the three successful changes come from the roslite node.
while left() > 0 and sum(1 for e in events if e.node == target) < 2:
    rclpy.spin_once(node, timeout_sec=0.1)
for event in events:
    if event.node != target:
        continue
    for p in event.changed_parameters:
        print("EVENT changed", p.name, repr(py(p.value)), flush=True)
print("DONE", flush=True)
node.destroy_node()
rclpy.shutdown()
