"""rclpy (real ROS 2) action peer for the interop tests, on /fibonacci (test_msgs/action/Fibonacci).

    action_peer.py serve <seconds>
        serves /fibonacci until `seconds` pass: rejects negative orders; order 1000 publishes
        [0, 1] once and waits for a cancel request, then ends canceled; order 2000 publishes
        [0, 1] and holds the goal; any other order publishes the sequence after every step
        and succeeds. Prints READY, then `GOAL <order>` per accepted goal.
    action_peer.py client <seconds>
        waits for /fibonacci and drives it: a goal of order 10 (FEEDBACK_COUNT, RESULT), a
        goal of order -1 (REJECTED), a goal of order 1000 canceled after its first feedback
        (CANCEL, CANCELED_RESULT), then goals of order 1000 and 8 at once (PARALLEL_RESULT,
        then CANCEL_HELD for the held one and HELD_RESULT), and prints ACTIONS (rclpy's
        get_action_names_and_types) and DONE.
"""
import sys
import time

import rclpy
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.action.graph import get_action_names_and_types
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from action_msgs.msg import GoalStatus
from test_msgs.action import Fibonacci

UNTIL_CANCELED = 1000
HOLD = 2000


def fibonacci(order):
    sequence = [0, 1]
    for i in range(1, max(order, 1)):
        sequence.append(sequence[i] + sequence[i - 1])
    return sequence


def serve(node, seconds):
    def on_goal(request):
        return GoalResponse.REJECT if request.order < 0 else GoalResponse.ACCEPT

    def execute(goal_handle):
        order = goal_handle.request.order
        print("GOAL", order, flush=True)
        if order in (UNTIL_CANCELED, HOLD):
            goal_handle.publish_feedback(Fibonacci.Feedback(sequence=[0, 1]))
            while not (order == UNTIL_CANCELED and goal_handle.is_cancel_requested):
                time.sleep(0.001)
            goal_handle.canceled()
            return Fibonacci.Result(sequence=[0, 1])
        sequence = [0, 1]
        for i in range(1, order):
            sequence.append(sequence[i] + sequence[i - 1])
            goal_handle.publish_feedback(Fibonacci.Feedback(sequence=sequence))
        goal_handle.succeed()
        return Fibonacci.Result(sequence=sequence)

    ActionServer(
        node,
        Fibonacci,
        "fibonacci",
        execute_callback=execute,
        goal_callback=on_goal,
        cancel_callback=lambda _goal: CancelResponse.ACCEPT,
        callback_group=ReentrantCallbackGroup(),
    )
    executor = MultiThreadedExecutor(num_threads=4)
    executor.add_node(node)
    print("READY", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.1)


class Driver:
    def __init__(self, node, seconds):
        self.node = node
        self.end = time.monotonic() + seconds
        self.client = ActionClient(node, Fibonacci, "fibonacci")

    def left(self):
        return max(0.1, self.end - time.monotonic())

    def wait(self, future):
        rclpy.spin_until_future_complete(self.node, future, timeout_sec=self.left())
        if not future.done():
            print("TIMEOUT", flush=True)
            sys.exit(1)
        return future.result()

    def spin_until(self, done):
        while not done() and time.monotonic() < self.end:
            rclpy.spin_once(self.node, timeout_sec=0.05)

    def send(self, order):
        feedback = []
        goal = self.wait(self.client.send_goal_async(
            Fibonacci.Goal(order=order),
            feedback_callback=lambda msg: feedback.append(list(msg.feedback.sequence)),
        ))
        return goal, feedback

    def run(self):
        if not self.client.wait_for_server(timeout_sec=self.left()):
            print("NO SERVER", flush=True)
            sys.exit(1)
        # To completion, with every feedback. rclpy drops a goal's feedback callback once its
        # result arrives, and feedback may trail the result: the result is asked for after.
        goal, feedback = self.send(10)
        self.spin_until(lambda: len(feedback) >= 9)
        result = self.wait(goal.get_result_async())
        expected = [fibonacci(n) for n in range(2, 11)]
        print("FEEDBACK_COUNT", len(feedback), "OK" if feedback == expected else feedback, flush=True)
        print("RESULT", result.status, list(result.result.sequence), flush=True)
        # Rejected.
        goal, _ = self.send(-1)
        print("REJECTED" if not goal.accepted else "ACCEPTED?", flush=True)
        # Canceled after its first feedback.
        goal, feedback = self.send(UNTIL_CANCELED)
        self.spin_until(lambda: feedback)
        answer = self.wait(goal.cancel_goal_async())
        print("CANCEL", answer.return_code, len(answer.goals_canceling), flush=True)
        result = self.wait(goal.get_result_async())
        print("CANCELED_RESULT", result.status, list(result.result.sequence), flush=True)
        # Two at once: the held one is still executing when the other ends.
        held, _ = self.send(UNTIL_CANCELED)
        quick, feedback = self.send(8)
        self.spin_until(lambda: len(feedback) >= 7)
        result = self.wait(quick.get_result_async())
        print("PARALLEL_RESULT", result.status, list(result.result.sequence), len(feedback), flush=True)
        held_status = held.status
        answer = self.wait(held.cancel_goal_async())
        print("CANCEL_HELD", held_status, answer.return_code, flush=True)
        result = self.wait(held.get_result_async())
        print("HELD_RESULT", result.status, flush=True)
        names = sorted(f"{name} {','.join(types)}" for name, types in get_action_names_and_types(self.node))
        print("ACTIONS", "; ".join(names), flush=True)
        print("DONE", flush=True)


def main():
    mode, seconds = sys.argv[1], float(sys.argv[2])
    rclpy.init()
    node = rclpy.create_node("py_action_" + mode)
    if mode == "serve":
        serve(node, seconds)
    else:
        Driver(node, seconds).run()
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
