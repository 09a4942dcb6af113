"""rclpy (real ROS 2) client for `roslite bench service`, the ROS 2 baseline (the service
round trips over local 5G, docs/experiments.md).

    bench_service_client.py <service> <period_s> <requests> <timer_slack_ns>

Protocol, shared with roslite's client helper:
- prints `READY` once the service is matched and a few warm-up calls have been answered;
- reads `START <ns>` from stdin: the first request is due at that CLOCK_MONOTONIC time, the
  following ones every period after it;
- sends one std_srvs/SetBool request per period from a timer on the steady clock (CLOCK_MONOTONIC)
  with call_async, recording send jitter (send time minus the timer's expected call time) and
  response time (send to the reply reaching the client's done callback);
- prints `SAMPLE <i> <jitter_ns> <response_ns or -1> <1 if the reply was right, else 0>` per
  request, then `DONE`.
"""
import ctypes
import sys
import time

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.timer import TimerInfo
from std_srvs.srv import SetBool

PR_SET_TIMERSLACK = 29
REPLY_TIMEOUT_S = 5.0
WARMUP_CALLS = 5


def now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def main() -> None:
    service, period_s, requests, slack_ns = (
        sys.argv[1],
        float(sys.argv[2]),
        int(sys.argv[3]),
        int(sys.argv[4]),
    )
    if slack_ns > 0:
        # Before rclpy starts its threads, so they inherit it (as the roslite client does).
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(slack_ns), 0, 0, 0)
    rclpy.init()
    node = rclpy.create_node("roslite_bench_service_client")
    client = node.create_client(SetBool, service)
    if not client.wait_for_service(timeout_sec=60.0):
        sys.exit("no server for " + service)
    for i in range(WARMUP_CALLS):
        future = client.call_async(SetBool.Request(data=i % 2 == 0))
        rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
        if not future.done():
            sys.exit("warm-up call to " + service + " timed out")
    print("READY", flush=True)
    words = sys.stdin.readline().split()
    if len(words) != 2 or words[0] != "START":
        sys.exit("expected START <ns> on stdin")
    start_ns = int(words[1])
    period_ns = int(round(period_s * 1e9))

    jitter = [None] * requests
    sent = [None] * requests
    response = [None] * requests
    correct = [False] * requests
    count = [0]

    def on_reply(i, expected, future):
        response[i] = now_ns() - sent[i]
        result = future.result()
        correct[i] = result is not None and result.success == expected

    def on_timer(info: TimerInfo) -> None:
        i = count[0]
        if i >= requests:
            return
        t = now_ns()
        jitter[i] = t - info.expected_call_time.nanoseconds
        sent[i] = t
        expected = i % 2 == 0
        future = client.call_async(SetBool.Request(data=expected))
        future.add_done_callback(lambda f, i=i, e=expected: on_reply(i, e, f))
        count[0] = i + 1

    # Created one period before the first deadline, so its first expiry falls on START.
    while now_ns() < start_ns - period_ns:
        time.sleep(min(0.05, (start_ns - period_ns - now_ns()) / 1e9))
    node.create_timer(period_s, on_timer, clock=Clock(clock_type=ClockType.STEADY_TIME))
    while count[0] < requests:
        rclpy.spin_once(node, timeout_sec=1.0)
    give_up = now_ns() + int(REPLY_TIMEOUT_S * 1e9)
    while any(r is None for r in response) and now_ns() < give_up:
        rclpy.spin_once(node, timeout_sec=0.1)
    lines = []
    for i in range(requests):
        r = response[i] if response[i] is not None else -1
        lines.append(f"SAMPLE {i} {jitter[i]} {r} {1 if correct[i] else 0}\n")
    sys.stdout.write("".join(lines) + "DONE\n")
    sys.stdout.flush()
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
