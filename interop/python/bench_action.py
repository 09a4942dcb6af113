"""rclpy side of `roslite bench action` (test_msgs/action/Fibonacci on /bench_action).

    bench_action.py server
        accepts every goal; its execute callback publishes one feedback whose sequence is
        [hi, lo] of time.monotonic_ns() (CLOCK_MONOTONIC, as roslite's clock), then succeeds.
        Prints READY.
    bench_action.py client <goals>
        waits for the server, sends 10 warm-up goals, then <goals> goals one after the other;
        per goal prints `SAMPLE <accept_ns> <feedback_ns>`: send to acceptance, and the
        feedback's publish-to-callback time. Prints DONE.
"""
import sys
import time

import rclpy
from rclpy.action import ActionClient, ActionServer
from test_msgs.action import Fibonacci

NAME = "bench_action"


def stamp():
    now = time.monotonic_ns()
    hi, lo = now >> 32, now & 0xFFFFFFFF
    if lo >= 1 << 31:
        lo -= 1 << 32
    return [hi, lo]


def unstamp(sequence):
    return (sequence[0] << 32) | (sequence[1] & 0xFFFFFFFF)


def serve(node):
    def execute(goal_handle):
        goal_handle.publish_feedback(Fibonacci.Feedback(sequence=stamp()))
        goal_handle.succeed()
        return Fibonacci.Result()

    ActionServer(node, Fibonacci, NAME, execute_callback=execute)
    print("READY", flush=True)
    rclpy.spin(node)


def client(node, goals):
    action = ActionClient(node, Fibonacci, NAME)
    if not action.wait_for_server(timeout_sec=30):
        print("NO SERVER", flush=True)
        sys.exit(1)
    for i in range(10 + goals):
        feedback = []

        def on_feedback(msg):
            feedback.append(time.monotonic_ns() - unstamp(msg.feedback.sequence))

        start = time.monotonic_ns()
        future = action.send_goal_async(Fibonacci.Goal(order=1), feedback_callback=on_feedback)
        rclpy.spin_until_future_complete(node, future, timeout_sec=10)
        accepted = time.monotonic_ns()
        goal = future.result()
        # Feedback before the result: rclpy drops the callback once the result is in.
        end = time.monotonic() + 10
        while not feedback and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.1)
        result = goal.get_result_async()
        rclpy.spin_until_future_complete(node, result, timeout_sec=10)
        if i >= 10 and feedback:
            print("SAMPLE", accepted - start, feedback[0], flush=True)
    print("DONE", flush=True)


def main():
    rclpy.init()
    node = rclpy.create_node("bench_action_" + sys.argv[1])
    if sys.argv[1] == "server":
        serve(node)
    else:
        client(node, int(sys.argv[2]))
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
