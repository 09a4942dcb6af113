"""The line-following application on rclpy: the baseline for roslite's nodes.

The same simulated Raspberry Pi Mouse (node `raspimouse`) and the same upstream follower logic
(node `follower`, rt-net raspimouse_ros2_examples line_follower_component.cpp) as
crates/roslite-linetrace, with the same topics, types, QoS depths and measurement method:

    python linetrace.py robot|follower --trace FILE [--speed K] [--seed S] [--twist-stamped]

The robot model (course, sensor geometry and levels, SplitMix64 noise, kinematics, operator
script) mirrors crates/roslite-linetrace/src/{course,robot,rng}.rs step for step, so for a seed
and a pose both produce the same readings. Stops on `stop` or end of standard input and writes
its trace (`pub|sub <topic> <seq> <monotonic ns>` lines; see nodes.rs) to FILE.
"""

import argparse
import math
import sys
import threading
import time

# --------------------------------------------------------------------------------------------
# Model (no ROS imports: also used by the cross-check test)

LINE_WIDTH = 0.025
RADIUS = 0.25
LEFT_CENTRE = (0.50, 0.50)
RIGHT_CENTRE = (1.00, 0.50)
STRAIGHT = RIGHT_CENTRE[0] - LEFT_CENTRE[0]
PI = math.pi


def lap_length():
    return 2.0 * STRAIGHT + 2.0 * PI * RADIUS


def rem_euclid(a, b):
    r = math.fmod(a, b)
    return r + abs(b) if r < 0.0 else r


def project(x, y):
    lx, cy = LEFT_CENTRE
    rx = RIGHT_CENTRE[0]
    if lx <= x <= rx:
        lower, upper = cy - RADIUS, cy + RADIUS
        if abs(y - lower) <= abs(y - upper):
            return (x - lx, y - lower)
        return (STRAIGHT + PI * RADIUS + (rx - x), upper - y)
    if x > rx:
        centre, start, base = RIGHT_CENTRE, STRAIGHT, -PI / 2.0
    else:
        centre, start, base = LEFT_CENTRE, 2.0 * STRAIGHT + PI * RADIUS, PI / 2.0
    dx, dy = x - centre[0], y - centre[1]
    r = math.hypot(dx, dy)
    travelled = rem_euclid(math.atan2(dy, dx) - base, 2.0 * PI)
    if travelled > PI:
        travelled = 0.0 if travelled > 1.5 * PI else PI
    return (start + travelled * RADIUS, RADIUS - r)


def line_coverage(x, y, spot):
    d = abs(project(x, y)[1])
    return min(max((LINE_WIDTH / 2.0 + spot - d) / (2.0 * spot), 0.0), 1.0)


MASK = (1 << 64) - 1
SQRT_3 = 1.7320508075688772


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return float(self.next_u64() >> 11) * (1.0 / float(1 << 53))

    def normalish(self):
        s = self.uniform() + self.uniform() + self.uniform() + self.uniform()
        return (s - 2.0) * SQRT_3


WHEEL_DIAMETER = 0.048
WHEEL_TREAD = 0.0925
PULSES_PER_REVOLUTION = 400.0
LIGHT_SENSORS_PERIOD_S = 0.010
SWITCHES_PERIOD_S = 0.100
WATCHDOG_S = 60.0
SENSOR_AHEAD = 0.065
SPOT_RADIUS = 0.004
NOISE_SIGMA = 8.0
# (channel, lateral, floor level, line level), left to right.
SENSORS = [('forward_r', 0.025, 1010.0, 150.0), ('right', 0.007, 980.0, 135.0),
           ('left', -0.007, 1000.0, 160.0), ('forward_l', -0.025, 1030.0, 145.0)]
FIELD_POSE = (0.75, 0.50, 0.0)
LINE_SAMPLE_POSE = (0.60, 0.25 - SENSOR_AHEAD, PI / 2.0)
LINE_START_POSE = (0.55, 0.25, 0.0)


def round_half_away(x):
    return math.copysign(math.floor(abs(x) + 0.5), x) if x != 0.0 else 0.0


def wheel_pulse_rates(linear, angular):
    radius = WHEEL_DIAMETER / 2.0
    vel_l = (linear - angular * WHEEL_TREAD / 2.0) / radius
    vel_r = (linear + angular * WHEEL_TREAD / 2.0) / radius
    return tuple(round_half_away(v / (2.0 * PI) * PULSES_PER_REVOLUTION) for v in (vel_l, vel_r))


def body_velocity(pl, pr):
    radius = WHEEL_DIAMETER / 2.0
    wl = pl / PULSES_PER_REVOLUTION * 2.0 * PI * radius
    wr = pr / PULSES_PER_REVOLUTION * 2.0 * PI * radius
    return ((wl + wr) / 2.0, (wr - wl) / WHEEL_TREAD)


class Robot:
    def __init__(self, seed, pose):
        self.time = 0.0
        self.motor_power = False
        self.command = (0.0, 0.0)
        self.watchdog_deadline = None
        self.rng = SplitMix64(seed)
        self.leds = [False] * 4
        self.buzzer_hz = 0
        self.place(pose)

    def place(self, pose):
        self.pose = pose
        self.progress = 0.0
        self.last_s = project(pose[0], pose[1])[0]

    def set_motor_power(self, on):
        self.motor_power = on
        if on:
            self.watchdog_deadline = self.time + WATCHDOG_S
            return 'Motors are on'
        self.command = (0.0, 0.0)
        self.watchdog_deadline = None
        return 'Motors are off'

    def handle_cmd_vel(self, linear, angular):
        self.command = (linear, angular)
        if self.motor_power:
            self.watchdog_deadline = self.time + WATCHDOG_S

    def step(self, dt):
        if self.watchdog_deadline is not None and self.time >= self.watchdog_deadline:
            self.command = (0.0, 0.0)
            self.watchdog_deadline = None
        self.time += dt
        if not self.motor_power:
            return
        v, w = body_velocity(*wheel_pulse_rates(*self.command))
        x, y, theta = self.pose
        if abs(w) < 1e-12:
            nx, ny = x + v * math.cos(theta) * dt, y + v * math.sin(theta) * dt
        else:
            r = v / w
            t2 = theta + w * dt
            nx, ny = x + r * (math.sin(t2) - math.sin(theta)), y - r * (math.cos(t2) - math.cos(theta))
        self.pose = (nx, ny, rem_euclid(theta + w * dt, 2.0 * PI))
        s = project(nx, ny)[0]
        lap = lap_length()
        ds = s - self.last_s
        if ds > lap / 2.0:
            ds -= lap
        elif ds < -lap / 2.0:
            ds += lap
        self.progress += ds
        self.last_s = s

    def laps(self):
        return self.progress / lap_length()

    def cross_track(self):
        return project(self.pose[0], self.pose[1])[1]

    def read_light_sensors(self):
        x, y, theta = self.pose
        s, c = math.sin(theta), math.cos(theta)
        values = {}
        for channel, lateral, floor, line in SENSORS:
            px = x + SENSOR_AHEAD * c - lateral * s
            py = y + SENSOR_AHEAD * s + lateral * c
            cover = line_coverage(px, py, SPOT_RADIUS)
            clean = floor + (line - floor) * cover
            noisy = clean + NOISE_SIGMA * self.rng.normalish()
            values[channel] = int(min(max(math.floor(noisy + 0.5), 0.0), 4095.0))
        return values


REACTION_S = 1.5
SAMPLING_S = 1.5


class Operator:
    """Presses SW2 on the floor, SW1 on the line, SW0 to start; again if ignored."""

    def __init__(self):
        self.step = ('wait', None)
        self.beep_heard_at = None
        self.presses = 0

    def handle_beep(self, now, hz):
        if hz == 1000 and self.beep_heard_at is None:
            self.beep_heard_at = now

    def poll(self, now, robot, follower_alive):
        switches = [False, False, False]
        kind = self.step[0]
        if kind == 'wait':
            since = self.step[1]
            if since is None and follower_alive:
                self.step = ('wait', now)
            elif since is not None and now - since >= 0.5:
                robot.place(FIELD_POSE)
                self.step = ('press', 2, FIELD_POSE)
        elif kind == 'press':
            _, switch, pose = self.step
            robot.place(pose)
            switches[switch] = True
            self.presses += 1
            self.beep_heard_at = None
            self.step = ('power', now) if switch == 0 else ('beep', switch, pose, now)
        elif kind == 'beep':
            _, switch, pose, pressed = self.step
            if self.beep_heard_at is not None:
                self.step = ('sampling', switch, self.beep_heard_at + SAMPLING_S)
            elif now - pressed > REACTION_S:
                self.step = ('press', switch, pose)
        elif kind == 'sampling':
            _, switch, until = self.step
            if now >= until:
                if switch == 2:
                    robot.place(LINE_SAMPLE_POSE)
                    self.step = ('press', 1, LINE_SAMPLE_POSE)
                else:
                    robot.place(LINE_START_POSE)
                    self.step = ('press', 0, LINE_START_POSE)
        elif kind == 'power':
            if robot.motor_power:
                self.step = ('running',)
            elif now - self.step[1] > REACTION_S:
                self.step = ('press', 0, LINE_START_POSE)
        return switches


# The follower (upstream logic; see crates/roslite-linetrace/src/follower.rs).
NUM_OF_SAMPLES = 10
TIMER_PERIOD_S = 0.050
VEL_LINEAR_X = 0.08
VEL_ANGULAR_Z = 0.8
LOW_VEL_ANGULAR_Z = 0.5
LEFT, MID_LEFT, MID_RIGHT, RIGHT = 0, 1, 2, 3
BEEPS = {
    'start': [(1000, 500), (0, 0)],
    'success': [(1000, 100), (0, 100), (1000, 100), (0, 0)],
    'failure': [(500, 100), (0, 100)] * 4,
}


class Follower:
    def __init__(self):
        self.present = [0] * 4
        self.sum = [0] * 4
        self.count = 0
        self.line_sampling = self.field_sampling = False
        self.line_sampled = self.field_sampled = False
        self.line_values = [0] * 4
        self.field_values = [0] * 4
        self.thresholds = [0] * 4
        self.detected = [False] * 4
        self.switches = (False, False, False)
        self.following = False

    def handle_switches(self, s0, s1, s2):
        self.switches = (s0, s1, s2)

    def handle_light_sensors(self, forward_r, right, left, forward_l):
        self.present = [forward_r, right, left, forward_l]
        actions = []
        if self.line_sampling or self.field_sampling:
            actions = self.multisampling()
        if self.line_sampled and self.field_sampled:
            bright = self.line_values[RIGHT] > self.field_values[RIGHT]
            self.detected = [(self.present[i] > self.thresholds[i]) == bright for i in range(4)]
        return actions

    def multisampling(self):
        if self.count < NUM_OF_SAMPLES:
            self.sum = [s + p for s, p in zip(self.sum, self.present)]
            self.count += 1
            return []
        average = [int(s / NUM_OF_SAMPLES) for s in self.sum]  # C++ integer division
        if self.line_sampling:
            self.line_values, self.line_sampled = average, True
        else:
            self.field_values, self.field_sampled = average, True
        self.sum, self.count = [0] * 4, 0
        self.line_sampling = self.field_sampling = False
        if self.line_sampled and self.field_sampled:
            self.thresholds = [min(l, f) + int(abs(l - f) * 0.5)
                               for l, f in zip(self.line_values, self.field_values)]
        return [('beep', 'success')]

    def twist(self):
        d = self.detected
        if not (any(d) and not all(d)):
            return (0.0, 0.0)
        angular = 0.0
        if d[LEFT]:
            angular += VEL_ANGULAR_Z
        if d[RIGHT]:
            angular -= VEL_ANGULAR_Z
        if d[MID_LEFT]:
            angular += LOW_VEL_ANGULAR_Z
        if d[MID_RIGHT]:
            angular -= LOW_VEL_ANGULAR_Z
        return (VEL_LINEAR_X, angular)

    def handle_timer(self):
        actions = []
        if self.line_sampling or self.field_sampling:
            return actions
        s0, s1, s2 = self.switches
        if s0:
            if self.line_sampled and self.field_sampled and not self.following:
                actions += [('motor_power', True), ('beep', 'success')]
                self.following = True
            else:
                actions += [('motor_power', False), ('beep', 'failure')]
                self.following = False
        elif s1:
            actions.append(('beep', 'start'))
            self.line_sampling = True
        elif s2:
            actions.append(('beep', 'start'))
            self.field_sampling = True
        self.switches = (False, False, False)
        if self.following:
            actions.append(('cmd_vel', self.twist()))
        d = self.detected
        actions.append(('leds', [d[RIGHT], d[MID_RIGHT], d[MID_LEFT], d[LEFT]]))
        return actions


# --------------------------------------------------------------------------------------------
# Nodes


class Trace:
    def __init__(self):
        self.stamps = []
        self.lines = []
        self.lock = threading.Lock()

    def published(self, topic, seq, ns):
        self.stamps.append(('pub', topic, seq, ns))

    def received(self, topic, seq, ns):
        self.stamps.append(('sub', topic, seq, ns))

    def line(self, text):
        self.lines.append(text)

    def write(self, path):
        with open(path, 'w') as f:
            for kind, topic, seq, ns in self.stamps:
                f.write(f'{kind} {topic} {seq} {ns}\n')
            for line in self.lines:
                f.write(line + '\n')


def make_nodes(role, args, trace):
    import rclpy
    from geometry_msgs.msg import Twist, TwistStamped
    from raspimouse_msgs.msg import Leds, LightSensors, Switches
    from std_msgs.msg import Int16
    from std_srvs.srv import SetBool

    twist_type = TwistStamped if args.twist_stamped else Twist
    speed = args.speed

    def emit(text):
        print(text, flush=True)

    class RobotNode:
        def __init__(self):
            self.node = node = rclpy.create_node('raspimouse')
            self.robot = Robot(args.seed, FIELD_POSE)
            self.operator = Operator()
            self.tick = 0
            self.follower_alive = False
            self.seq = 0
            self.counts = {'cmd_vel': 0, 'leds': 0, 'buzzer': 0, 'motor_power_requests': 0}
            self.cmd_vel_since_power = 0
            self.laps_reported = 0
            self.max_cross_track = 0.0
            self.light_sensors = node.create_publisher(LightSensors, 'light_sensors', 10)
            self.switches = node.create_publisher(Switches, 'switches', 10)
            node.create_subscription(twist_type, 'cmd_vel', self.on_cmd_vel, 10)
            node.create_subscription(Leds, 'leds', self.on_leds, 10)
            node.create_subscription(Int16, 'buzzer', self.on_buzzer, 10)
            node.create_service(SetBool, 'motor_power', self.on_motor_power)
            node.create_timer(LIGHT_SENSORS_PERIOD_S / speed, self.on_timer)

        def on_cmd_vel(self, msg, info):
            at = time.monotonic_ns()
            trace.received('cmd_vel', info['publication_sequence_number'], at)
            twist = msg.twist if args.twist_stamped else msg
            self.counts['cmd_vel'] += 1
            self.robot.handle_cmd_vel(twist.linear.x, twist.angular.z)
            if self.robot.motor_power:
                self.cmd_vel_since_power += 1
                if self.cmd_vel_since_power % 100 == 0:
                    emit(f'event cmd_vel {self.cmd_vel_since_power}')

        def on_leds(self, msg):
            self.counts['leds'] += 1
            self.follower_alive = True
            self.robot.leds = [msg.led0, msg.led1, msg.led2, msg.led3]

        def on_buzzer(self, msg):
            self.counts['buzzer'] += 1
            self.robot.buzzer_hz = msg.data
            self.operator.handle_beep(self.robot.time, msg.data)

        def on_motor_power(self, request, response):
            self.counts['motor_power_requests'] += 1
            response.message = self.robot.set_motor_power(request.data)
            response.success = True
            self.cmd_vel_since_power = 0
            emit(f'event motor_power {"on" if request.data else "off"}')
            return response

        def on_timer(self):
            robot = self.robot
            robot.step(LIGHT_SENSORS_PERIOD_S)
            values = robot.read_light_sensors()
            self.seq += 1
            tick = self.tick
            self.tick += 1
            switch_msg = None
            if tick % 10 == 0:
                s = self.operator.poll(robot.time, robot, self.follower_alive)
                switch_msg = Switches(switch0=s[0], switch1=s[1], switch2=s[2])
            if robot.motor_power:
                self.max_cross_track = max(self.max_cross_track, abs(robot.cross_track()))
                if tick % 10 == 0:
                    x, y, theta = robot.pose
                    trace.line(f'pose {robot.time:.2f} {x:.5f} {y:.5f} {theta:.4f}')
                laps = int(math.floor(max(robot.laps(), 0.0)))
                if laps > self.laps_reported:
                    self.laps_reported = laps
                    emit(f'event lap {laps}')
            msg = LightSensors(**values)
            trace.published('light_sensors', self.seq, time.monotonic_ns())
            self.light_sensors.publish(msg)
            if switch_msg is not None:
                self.switches.publish(switch_msg)

        def finish(self):
            for name, n in self.counts.items():
                trace.line(f'count {name} {n}')
            trace.line(f'count light_sensors_published {self.seq}')
            trace.line(f'count switch_presses {self.operator.presses}')
            trace.line(f'summary laps {max(self.robot.laps(), 0.0):.3f}')
            trace.line(f'summary max_cross_track_m {self.max_cross_track:.5f}')

    class FollowerNode:
        def __init__(self):
            self.node = node = rclpy.create_node('follower')
            self.follower = Follower()
            self.cmd_vel = node.create_publisher(twist_type, 'cmd_vel', 1)
            self.leds = node.create_publisher(Leds, 'leds', 1)
            self.buzzer = node.create_publisher(Int16, 'buzzer', 1)
            self.client = node.create_client(SetBool, 'motor_power')
            self.pending = []
            self.seq = 0
            self.counts = {'light_sensors': 0, 'switches': 0, 'motor_power_responses': 0}
            self.marked = False
            node.create_subscription(LightSensors, 'light_sensors', self.on_light_sensors, 1)
            node.create_subscription(Switches, 'switches', self.on_switches, 1)
            node.create_timer(TIMER_PERIOD_S / speed, self.on_timer)

        def run(self, actions):
            for kind, value in actions:
                if kind == 'motor_power':
                    self.pending.append(self.client.call_async(SetBool.Request(data=value)))
                elif kind == 'beep':
                    for hz, ms in BEEPS[value]:
                        self.buzzer.publish(Int16(data=hz))
                        if ms:
                            time.sleep(ms / 1000.0 / speed)
                elif kind == 'cmd_vel':
                    linear, angular = value
                    twist = Twist()
                    twist.linear.x = linear
                    twist.angular.z = angular
                    if args.twist_stamped:
                        msg = TwistStamped(twist=twist)
                        msg.header.stamp = self.node.get_clock().now().to_msg()
                    else:
                        msg = twist
                    self.seq += 1
                    trace.published('cmd_vel', self.seq, time.monotonic_ns())
                    self.cmd_vel.publish(msg)
                elif kind == 'leds':
                    self.leds.publish(Leds(led0=value[0], led1=value[1], led2=value[2], led3=value[3]))
            if self.follower.following and not self.marked:
                self.marked = True
                trace.line(f'mark following {time.monotonic_ns()}')

        def on_light_sensors(self, msg, info):
            at = time.monotonic_ns()
            trace.received('light_sensors', info['publication_sequence_number'], at)
            self.counts['light_sensors'] += 1
            self.run(self.follower.handle_light_sensors(msg.forward_r, msg.right, msg.left, msg.forward_l))

        def on_switches(self, msg):
            self.counts['switches'] += 1
            self.follower.handle_switches(msg.switch0, msg.switch1, msg.switch2)

        def poll_replies(self):
            still = []
            for future in self.pending:
                if future.done():
                    result = future.result()
                    if result is not None and result.success:
                        self.counts['motor_power_responses'] += 1
                else:
                    still.append(future)
            self.pending = still

        def on_timer(self):
            self.poll_replies()
            self.run(self.follower.handle_timer())

        def finish(self):
            self.poll_replies()
            for name, n in self.counts.items():
                trace.line(f'count {name} {n}')
            trace.line(f'count cmd_vel_published {self.seq}')

    if role == 'robot':
        return [RobotNode()]
    follower = FollowerNode()
    if not follower.client.wait_for_service(timeout_sec=10.0):
        sys.exit('follower: /motor_power is not available after 10 s')
    return [follower]


def main():
    parser = argparse.ArgumentParser(description='rclpy line-follower nodes')
    parser.add_argument('role', choices=['robot', 'follower'])
    parser.add_argument('--trace', required=True)
    parser.add_argument('--speed', type=float, default=1.0)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--twist-stamped', action='store_true')
    args = parser.parse_args()
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    rclpy.init()
    trace = Trace()
    nodes = make_nodes(args.role, args, trace)
    executor = SingleThreadedExecutor()
    for n in nodes:
        executor.add_node(n.node)
    stop = threading.Event()

    def watch_stdin():
        for line in sys.stdin:
            if line.strip() == 'stop':
                break
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    while not stop.is_set():
        executor.spin_once(timeout_sec=0.05)
    for n in nodes:
        n.finish()
    trace.write(args.trace)
    executor.shutdown()
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
