"""rclpy (real ROS 2) service peer for the interop tests.

    service_peer.py serve <seconds> <count> [<linger>]
        serves std_srvs/SetBool on /motor_power (success = data, message "motor on"/"motor off")
        and std_srvs/Trigger on /trigger (message "triggered <n>"); prints `SERVED <service>
        <detail>` per request and exits after `count` requests in all (and <linger> seconds
        more, default 0.5, for the last reply to arrive), or `seconds`.
    service_peer.py call <seconds> <count>
        waits for both services, calls SetBool alternately true/false and Trigger, `count`
        times each; prints `REPLY <service> <success> <message>` per reply, `SERVICES <names>`
        (what rclpy's graph lists) and `RESULT <replies>`.
"""
import sys
import time

import rclpy
from std_srvs.srv import SetBool, Trigger


def serve(node, seconds, count, linger):
    served = [0]
    triggers = [0]

    def on_set_bool(request, response):
        response.success = request.data
        response.message = "motor on" if request.data else "motor off"
        served[0] += 1
        print("SERVED /motor_power", request.data, flush=True)
        return response

    def on_trigger(_request, response):
        triggers[0] += 1
        response.success = True
        response.message = f"triggered {triggers[0]}"
        served[0] += 1
        print("SERVED /trigger", triggers[0], flush=True)
        return response

    node.create_service(SetBool, "motor_power", on_set_bool)
    node.create_service(Trigger, "trigger", on_trigger)
    print("READY", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end and served[0] < count:
        rclpy.spin_once(node, timeout_sec=0.1)
    # Let the last reply arrive before the process exits: through loss, Fast DDS repairs it
    # only at its next HEARTBEAT, up to 3 s away.
    linger_end = time.monotonic() + linger
    while time.monotonic() < linger_end:
        rclpy.spin_once(node, timeout_sec=0.1)
    print("RESULT", served[0], flush=True)


def call(node, seconds, count):
    end = time.monotonic() + seconds
    set_bool = node.create_client(SetBool, "motor_power")
    trigger = node.create_client(Trigger, "trigger")
    for client in (set_bool, trigger):
        if not client.wait_for_service(timeout_sec=max(0.1, end - time.monotonic())):
            print("NO SERVICE", client.srv_name, flush=True)
            print("RESULT 0", flush=True)
            return
    replies = 0
    for i in range(count):
        for client, request, name in (
            (set_bool, SetBool.Request(data=(i % 2 == 0)), "/motor_power"),
            (trigger, Trigger.Request(), "/trigger"),
        ):
            future = client.call_async(request)
            rclpy.spin_until_future_complete(node, future, timeout_sec=max(0.1, end - time.monotonic()))
            if future.done() and future.result() is not None:
                r = future.result()
                replies += 1
                print("REPLY", name, r.success, r.message, flush=True)
            else:
                print("TIMEOUT", name, flush=True)
    names = sorted(f"{name} {','.join(types)}" for name, types in node.get_service_names_and_types())
    print("SERVICES", "; ".join(names), flush=True)
    print("RESULT", replies, flush=True)


def main():
    mode, seconds, count = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    rclpy.init()
    node = rclpy.create_node("py_service_" + mode)
    if mode == "serve":
        serve(node, seconds, count, float(sys.argv[4]) if len(sys.argv) > 4 else 0.5)
    else:
        call(node, seconds, count)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
