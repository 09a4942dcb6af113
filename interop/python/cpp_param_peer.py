"""rclpy (real ROS 2) parameter peer for the C++ API's interop test: reads and sets a remote
node's parameters through its parameter services with rclpy's AsyncParameterClient.

Usage: cpp_param_peer.py <node> <seconds>. Prints `GET <name> <value>` for rate and label,
`SET <name> <successful> <reason>` for each set, then DONE."""
import sys
import time

import rclpy
from rclpy.parameter import Parameter, parameter_value_to_python
from rclpy.parameter_client import AsyncParameterClient

target, seconds = sys.argv[1], float(sys.argv[2])
deadline = time.monotonic() + seconds
rclpy.init()
node = rclpy.create_node("py_cpp_param_peer")
client = AsyncParameterClient(node, target)


def wait(future, what):
    rclpy.spin_until_future_complete(node, future, timeout_sec=max(0.1, deadline - time.monotonic()))
    if not future.done() or future.result() is None:
        print(f"FAILED no answer to {what}", flush=True)
        sys.exit(2)
    return future.result()


if not client.wait_for_services(timeout_sec=max(0.1, deadline - time.monotonic())):
    print("FAILED services of", target, "never appeared", flush=True)
    sys.exit(1)
got = wait(client.get_parameters(["rate", "label"]), "get_parameters")
for name, value in zip(["rate", "label"], got.values):
    print("GET", name, parameter_value_to_python(value), flush=True)
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
