"""rclpy (real ROS 2) server for `roslite bench service`, the ROS 2 baseline.

    bench_service_server.py <service>

Serves std_srvs/SetBool on <service> (example_interfaces/AddTwoInts is not installed in the venv;
SetBool is as small): success = data, empty message. Runs until killed.
"""
import sys

import rclpy
from std_srvs.srv import SetBool


def main() -> None:
    service = sys.argv[1]
    rclpy.init()
    node = rclpy.create_node("roslite_bench_service_server")

    def on_request(request, response):
        response.success = request.data
        response.message = ""
        return response

    node.create_service(SetBool, service, on_request)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
