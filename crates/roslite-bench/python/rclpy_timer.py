"""rclpy timer wake-up latency, the ROS 2 reference for `roslite bench timer`.

Prints one line per callback: actual minus expected call time in nanoseconds, both on
STEADY_TIME (CLOCK_MONOTONIC), as rclpy's TimerInfo reports them.
"""
import sys
import time

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.timer import TimerInfo

period_s = float(sys.argv[1])
duration_s = float(sys.argv[2])

rclpy.init()
node = rclpy.create_node("roslite_bench_timer_reference")
latencies = []


def on_timer(info: TimerInfo) -> None:
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    latencies.append(start - info.expected_call_time.nanoseconds)


timer = node.create_timer(period_s, on_timer, clock=Clock(clock_type=ClockType.STEADY_TIME))
end = time.monotonic() + duration_s
while time.monotonic() < end:
    rclpy.spin_once(node, timeout_sec=0.1)
node.destroy_node()
rclpy.shutdown()
sys.stdout.write("".join(f"{ns}\n" for ns in latencies))
