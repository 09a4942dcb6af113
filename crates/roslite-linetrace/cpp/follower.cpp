// The line follower of the line-following demo as a C++ node on the mROS 2 API: the shape of an
// mROS 2 line-trace application (mros2::init, mros2::Node::create_node, create_publisher and
// create_subscription with pointer-taking callbacks, and a loop in main that does the follower's
// 50 ms work), running against roslite's mROS 2 headers (crates/roslite-c/include/mros2-posix).
//
// The logic is src/follower.rs ported line for line (upstream's line follower of rt-net
// raspimouse_ros2_examples, as the crate's docs and docs/experiments.md describe it), quirks
// kept: the 11th sample does the averaging, thresholds are the truncated midpoint, the line's
// polarity is decided from RIGHT alone, a switch press is consumed once per tick, and beeps
// block the follower (its mutex is held while it sleeps, as the Rust node's single-threaded
// executor is). The node side matches src/nodes.rs: the same topics, types and depths, the
// same trace lines (`sub light_sensors SEQ NS`, `pub cmd_vel SEQ NS`, `mark following NS`,
// `count ...`) and the command line of src/process.rs, so the launcher runs it in place of the
// Rust follower (`roslite bench linetrace`: "roslite C++ follower <-> roslite robot").
//
// mROS 2 has no services; `/motor_power` is called through roslite's documented extension,
// `mros2::Node::create_client<S>` (see mros2.h), asynchronously and without waiting for the
// reply, as upstream does. The subscription's message info (the publication sequence number
// the trace joins on) comes from the other extension, a callback taking
// `(T *, const roslite_message_info *)`.
//
// The same source builds as a WebAssembly node (wasm32-wasip1, `__wasi__`; src/wasm_build.rs,
// run by roslite's Wasm host: "roslite Wasm follower"). There the node has one thread and the
// host decides the sandbox, so, and only there: the host's environment decides discovery (no
// setenv; no prctl, signal or mallopt either), the mutexes do nothing, the follower stops when
// the host shuts its context down (`roslite-wasm-host --stop-on-stdin` does when the launcher
// writes `stop`) instead of a thread reading standard input, and its 50 ms loop runs the
// mROS 2 executor until each deadline (mros2::spin_until, a roslite extension) instead of
// sleeping, so that the callbacks run while it waits. The trace is written through WASI into
// the directory the launcher grants.
#include "mros2.h"

#include "cmsis_os.h"
#include "geometry_msgs/msg/twist.hpp"
#include "geometry_msgs/msg/twist_stamped.hpp"
#include "raspimouse_msgs/msg/leds.hpp"
#include "raspimouse_msgs/msg/light_sensors.hpp"
#include "raspimouse_msgs/msg/switches.hpp"
#include "std_msgs/msg/int16.hpp"
#include "std_srvs/srv/set_bool.hpp"

#if !defined(__wasi__)
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#endif
#include <time.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#if !defined(__wasi__)
#include <mutex>
#include <thread>
#endif

using raspimouse_msgs::msg::LightSensors;
using raspimouse_msgs::msg::Switches;

// ---- The follower's logic (src/follower.rs) ------------------------------------------------

namespace follower {

constexpr int NUM_OF_SAMPLES = 10;
constexpr double TIMER_PERIOD_S = 0.050;
constexpr double VEL_LINEAR_X = 0.08;
constexpr double VEL_ANGULAR_Z = 0.8;
constexpr double LOW_VEL_ANGULAR_Z = 0.5;

// Sensor indices in `present`.
constexpr int LEFT = 0;
constexpr int MID_LEFT = 1;
constexpr int MID_RIGHT = 2;
constexpr int RIGHT = 3;

// The follower's view of a LightSensors message: [forward_r, right, left, forward_l].
std::array<int, 4> present_of(const LightSensors &m) {
  return {m.forward_r, m.right, m.left, m.forward_l};
}

enum class Beep { Start, Success, Failure };

struct Step {
  int16_t hz;
  unsigned ms;
};

// (frequency to publish, milliseconds to sleep after it) in order.
std::vector<Step> steps(Beep beep) {
  switch (beep) {
    case Beep::Start:
      return {{1000, 500}, {0, 0}};
    case Beep::Success:
      return {{1000, 100}, {0, 100}, {1000, 100}, {0, 0}};
    case Beep::Failure:
      break;
  }
  return {{500, 100}, {0, 100}, {500, 100}, {0, 100},
          {500, 100}, {0, 100}, {500, 100}, {0, 100}};
}

struct Action {
  enum Kind { MotorPower, BeepPattern, CmdVel, Leds } kind;
  bool on = false;
  Beep beep = Beep::Start;
  double linear = 0.0;
  double angular = 0.0;
  std::array<bool, 4> leds{};
};

class Follower {
 public:
  bool is_following() const { return following_; }

  // /switches: the latest message replaces the previous one until a timer tick takes it.
  void handle_switches(const Switches &msg) { switches_ = msg; }

  // /light_sensors; true (with `beep` set) when this reading finished a sampling.
  bool handle_light_sensors(const LightSensors &msg, Action *beep) {
    present_ = present_of(msg);
    bool beeped = false;
    if (line_sampling_ || field_sampling_) beeped = multisampling(beep);
    if (line_sampled_ && field_sampled_) update_line_detection();
    return beeped;
  }

  // The 50 ms timer.
  std::vector<Action> handle_timer() {
    std::vector<Action> actions;
    if (line_sampling_ || field_sampling_) return actions;
    if (switches_.switch0) {
      if (line_sampled_ && field_sampled_ && !following_) {
        actions.push_back(motor_power(true));
        actions.push_back(beep(Beep::Success));
        following_ = true;
      } else {
        actions.push_back(motor_power(false));
        actions.push_back(beep(Beep::Failure));
        following_ = false;
      }
    } else if (switches_.switch1) {
      actions.push_back(beep(Beep::Start));
      line_sampling_ = true;
    } else if (switches_.switch2) {
      actions.push_back(beep(Beep::Start));
      field_sampling_ = true;
    }
    switches_ = Switches();
    if (following_) {
      Action a{Action::CmdVel};
      twist(&a.linear, &a.angular);
      actions.push_back(a);
    }
    Action leds{Action::Leds};
    const auto &d = detected_;
    leds.leds = {d[RIGHT], d[MID_RIGHT], d[MID_LEFT], d[LEFT]};
    actions.push_back(leds);
    return actions;
  }

 private:
  static Action motor_power(bool on) {
    Action a{Action::MotorPower};
    a.on = on;
    return a;
  }
  static Action beep(Beep b) {
    Action a{Action::BeepPattern};
    a.beep = b;
    return a;
  }

  bool multisampling(Action *beep_action) {
    if (count_ < NUM_OF_SAMPLES) {
      for (int i = 0; i < 4; i++) sum_[i] += present_[i];
      count_ += 1;
      return false;
    }
    std::array<int, 4> average{};
    for (int i = 0; i < 4; i++) average[i] = sum_[i] / NUM_OF_SAMPLES;
    if (line_sampling_) {
      line_values_ = average;
      line_sampled_ = true;
    } else {
      field_values_ = average;
      field_sampled_ = true;
    }
    sum_ = {};
    count_ = 0;
    line_sampling_ = false;
    field_sampling_ = false;
    set_line_thresholds();
    *beep_action = beep(Beep::Success);
    return true;
  }

  void set_line_thresholds() {
    if (!(line_sampled_ && field_sampled_)) return;
    for (int i = 0; i < 4; i++) {
      int line = line_values_[i], field = field_values_[i];
      // Upstream: min + |line - field| * 0.5, stored as an int (truncated).
      thresholds_[i] = std::min(line, field) + static_cast<int>(std::abs(line - field) * 0.5);
    }
  }

  bool line_is_bright() const { return line_values_[RIGHT] > field_values_[RIGHT]; }

  void update_line_detection() {
    bool bright = line_is_bright();
    for (int i = 0; i < 4; i++) detected_[i] = (present_[i] > thresholds_[i]) == bright;
  }

  // Forward with steering while the line is under some but not all sensors, stop otherwise.
  void twist(double *linear, double *angular) const {
    const auto &d = detected_;
    bool any = d[0] || d[1] || d[2] || d[3];
    bool all = d[0] && d[1] && d[2] && d[3];
    *linear = 0.0;
    *angular = 0.0;
    if (!any || all) return;
    if (d[LEFT]) *angular += VEL_ANGULAR_Z;
    if (d[RIGHT]) *angular -= VEL_ANGULAR_Z;
    if (d[MID_LEFT]) *angular += LOW_VEL_ANGULAR_Z;
    if (d[MID_RIGHT]) *angular -= LOW_VEL_ANGULAR_Z;
    *linear = VEL_LINEAR_X;
  }

  std::array<int, 4> present_{}, sum_{}, line_values_{}, field_values_{}, thresholds_{};
  std::array<bool, 4> detected_{};
  int count_ = 0;
  bool line_sampling_ = false, field_sampling_ = false;
  bool line_sampled_ = false, field_sampled_ = false;
  Switches switches_{};
  bool following_ = false;
};

}  // namespace follower

// ---- The node (src/nodes.rs's FollowerNode) ----------------------------------------------

#if defined(__wasi__)
// One thread: nothing to exclude.
struct Mutex {};
struct Lock {
  explicit Lock(Mutex &) {}
};
#else
using Mutex = std::mutex;
using Lock = std::lock_guard<std::mutex>;
#endif

static uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

struct Options {
  std::string trace;
  std::string domain;
  double speed = 1.0;
  bool twist_stamped = false;
};

struct Core {
  Mutex mutex;
  follower::Follower follower;
  Options options;
  FILE *trace = nullptr;
  // Guards `trace` being closed (stdio locks each write itself).
  Mutex trace_mutex;
  mros2::Publisher cmd_vel, leds, buzzer;
  mros2::Client<std_srvs::srv::SetBool> motor_power;
  uint64_t cmd_vel_seq = 0;
  uint64_t light_sensors = 0, switches = 0;
  std::atomic<uint64_t> motor_power_responses{0};
  bool following_marked = false;

  void sleep_scaled_ms(unsigned ms) const {
#if defined(__wasi__)
    int64_t ns = int64_t(ms * 1e6 / options.speed);
    timespec span{time_t(ns / 1000000000), long(ns % 1000000000)};
    nanosleep(&span, nullptr);
#else
    std::this_thread::sleep_for(std::chrono::nanoseconds(int64_t(ms * 1e6 / options.speed)));
#endif
  }

  // FollowerCore::run; called with `mutex` held.
  void run(const std::vector<follower::Action> &actions) {
    for (const auto &action : actions) {
      switch (action.kind) {
        case follower::Action::MotorPower: {
          std_srvs::srv::SetBool::Request request;
          request.data = action.on;
          // Upstream's set_motor_power: an asynchronous call whose reply is not awaited (only
          // counted here).
          bool sent = motor_power.async_send_request(
              request, [this](std_srvs::srv::SetBool::Response *response) {
                if (response && response->success) motor_power_responses++;
              });
          if (!sent) std::fprintf(stderr, "[follower] motor_power call failed\n");
          break;
        }
        case follower::Action::BeepPattern:
          for (const auto &step : follower::steps(action.beep)) {
            std_msgs::msg::Int16 msg;
            msg.data = step.hz;
            buzzer.publish(msg);
            if (step.ms > 0) sleep_scaled_ms(step.ms);
          }
          break;
        case follower::Action::CmdVel: {
          geometry_msgs::msg::Twist twist;
          twist.linear.x = action.linear;
          twist.angular.z = action.angular;
          uint64_t seq = ++cmd_vel_seq;
          if (options.twist_stamped) {
            geometry_msgs::msg::TwistStamped msg;
            msg.twist = twist;
            timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            msg.header.stamp.sec = int32_t(now.tv_sec);
            msg.header.stamp.nanosec = uint32_t(now.tv_nsec);
            uint64_t at = monotonic_ns();
            cmd_vel.publish(msg);
            std::fprintf(trace, "pub cmd_vel %llu %llu\n", (unsigned long long)seq,
                         (unsigned long long)at);
          } else {
            uint64_t at = monotonic_ns();
            cmd_vel.publish(twist);
            std::fprintf(trace, "pub cmd_vel %llu %llu\n", (unsigned long long)seq,
                         (unsigned long long)at);
          }
          break;
        }
        case follower::Action::Leds: {
          raspimouse_msgs::msg::Leds msg;
          msg.led0 = action.leds[0];
          msg.led1 = action.leds[1];
          msg.led2 = action.leds[2];
          msg.led3 = action.leds[3];
          leds.publish(msg);
          break;
        }
      }
    }
    if (follower.is_following() && !following_marked) {
      following_marked = true;
      std::fprintf(trace, "mark following %llu\n", (unsigned long long)monotonic_ns());
    }
  }
};

static Core core;

void on_light_sensors(LightSensors *msg, const roslite_message_info *info) {
  uint64_t at = monotonic_ns();
  {
    Lock lock(core.mutex);
    core.light_sensors++;
    follower::Action beep{follower::Action::BeepPattern};
    if (core.follower.handle_light_sensors(*msg, &beep)) core.run({beep});
  }
  // After the reaction is published: the trace's writes stay out of the control path.
  Lock lock(core.trace_mutex);
  if (core.trace) {
    std::fprintf(core.trace, "sub light_sensors %llu %llu\n",
                 (unsigned long long)info->publication_sequence_number, (unsigned long long)at);
  }
}

void on_switches(Switches *msg) {
  Lock lock(core.mutex);
  core.switches++;
  core.follower.handle_switches(*msg);
}

static const char USAGE[] =
    "usage: follower --trace FILE|- [--domain D] [--speed K] [--seed S] [--twist-stamped]";

static bool parse(int argc, char **argv, Options *options) {
  if (argc < 2 || std::strcmp(argv[1], "follower") != 0) {
    std::fprintf(stderr, "this program plays the follower only; %s\n", USAGE);
    return false;
  }
  for (int i = 2; i < argc; i++) {
    std::string flag = argv[i];
    if (flag == "--twist-stamped") {
      options->twist_stamped = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s needs a value; %s\n", flag.c_str(), USAGE);
      return false;
    }
    std::string value = argv[++i];
    if (flag == "--trace") {
      options->trace = value;
    } else if (flag == "--domain") {
      options->domain = value;
    } else if (flag == "--speed") {
      char *end = nullptr;
      options->speed = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(options->speed > 0.0) || !std::isfinite(options->speed)) {
        std::fprintf(stderr, "--speed %s: expected a positive number; %s\n", value.c_str(), USAGE);
        return false;
      }
    } else if (flag == "--seed") {
      // The robot's noise seed; the follower has no randomness.
    } else {
      std::fprintf(stderr, "unknown option %s; %s\n", flag.c_str(), USAGE);
      return false;
    }
  }
  if (options->trace.empty()) {
    std::fprintf(stderr, "--trace is required; %s\n", USAGE);
    return false;
  }
  return true;
}

int main(int argc, char *argv[]) {
#if !defined(__wasi__)
  // As the Rust node executable: die with the launcher, EPIPE instead of SIGPIPE, one malloc
  // arena for all threads.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGPIPE, SIG_IGN);
  mallopt(M_ARENA_MAX, 1);
#endif
  if (!parse(argc, argv, &core.options)) return 2;
#if !defined(__wasi__)
  // Loopback only, whatever the environment says (src/process.rs's localhost_context).
  if (!core.options.domain.empty()) setenv("ROS_DOMAIN_ID", core.options.domain.c_str(), 1);
  setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST", 1);
  unsetenv("ROS_STATIC_PEERS");
#endif
  // (In a Wasm node the host's context, made from the host's environment, decides discovery:
  // `--domain` is accepted and left to it.)
  // `--trace -`: standard output, which a Wasm node does not open itself (a node with files it
  // opened cannot move to another host; docs/migration.md).
  core.trace =
      core.options.trace == "-" ? stdout : std::fopen(core.options.trace.c_str(), "w");
  if (!core.trace) {
    std::fprintf(stderr, "follower: cannot create %s\n", core.options.trace.c_str());
    return 2;
  }
  static char trace_buffer[8 * 1024];
  // A trace on standard output is written a line at a time: a node that moves between hosts
  // mid-line would leave the line's halves in two hosts' outputs.
  setvbuf(core.trace, trace_buffer, core.trace == stdout ? _IOLBF : _IOFBF, sizeof trace_buffer);

  mros2::init(0, NULL);
  mros2::Node node = mros2::Node::create_node("follower");
  if (core.options.twist_stamped) {
    core.cmd_vel = node.create_publisher<geometry_msgs::msg::TwistStamped>("cmd_vel", 1);
  } else {
    core.cmd_vel = node.create_publisher<geometry_msgs::msg::Twist>("cmd_vel", 1);
  }
  core.leds = node.create_publisher<raspimouse_msgs::msg::Leds>("leds", 1);
  core.buzzer = node.create_publisher<std_msgs::msg::Int16>("buzzer", 1);
  core.motor_power = node.create_client<std_srvs::srv::SetBool>("motor_power");
  mros2::Subscriber light_sensors =
      node.create_subscription<LightSensors>("light_sensors", 1, on_light_sensors);
  mros2::Subscriber switches = node.create_subscription<Switches>("switches", 1, on_switches);
  (void)light_sensors;
  (void)switches;
  // Upstream's on_configure fails if motor_power is not there within 5 s.
  if (!core.motor_power.wait_for_service(10000)) {
    std::fprintf(stderr, "follower: /motor_power is not available after 10 s\n");
    return 2;
  }

#if defined(__wasi__)
  // Runs until the host shuts the context down; meanwhile the callbacks run inside
  // mros2::spin_until, on this one thread.
  const uint64_t period = uint64_t(follower::TIMER_PERIOD_S * 1e9 / core.options.speed);
  uint64_t next = monotonic_ns() + period;
  while (mros2::spin_until(next)) {
    {
      Lock lock(core.mutex);
      core.run(core.follower.handle_timer());
    }
    uint64_t now = monotonic_ns();
    next += period;
    while (next <= now) next += period;
  }
#else
  // Runs until a line `stop` (or the end) arrives on standard input.
  static std::atomic<bool> stop{false};
  std::thread([] {
    char line[64];
    while (std::fgets(line, sizeof line, stdin)) {
      if (std::strncmp(line, "stop", 4) == 0) break;
    }
    stop = true;
  }).detach();

  // The follower's timer: every 50 ms (scaled), missed periods skipped.
  const uint64_t period = uint64_t(follower::TIMER_PERIOD_S * 1e9 / core.options.speed);
  uint64_t next = monotonic_ns() + period;
  while (!stop) {
    timespec deadline{time_t(next / 1000000000u), long(next % 1000000000u)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr);
    if (stop) break;
    {
      Lock lock(core.mutex);
      core.run(core.follower.handle_timer());
    }
    uint64_t now = monotonic_ns();
    next += period;
    while (next <= now) next += period;
  }
#endif

  Lock lock(core.mutex);
  std::fprintf(core.trace, "count light_sensors %llu\n", (unsigned long long)core.light_sensors);
  std::fprintf(core.trace, "count switches %llu\n", (unsigned long long)core.switches);
  std::fprintf(core.trace, "count motor_power_responses %llu\n",
               (unsigned long long)core.motor_power_responses.load());
  std::fprintf(core.trace, "count cmd_vel_published %llu\n", (unsigned long long)core.cmd_vel_seq);
  Lock trace_lock(core.trace_mutex);
  bool written = std::fflush(core.trace) == 0 && !std::ferror(core.trace);
  std::fclose(core.trace);
  core.trace = nullptr;
  if (!written) {
    std::fprintf(stderr, "follower: cannot write %s\n", core.options.trace.c_str());
  }
  std::fflush(stderr);
  // The callbacks' thread still runs: leave without running destructors under it.
  std::_Exit(written ? 0 : 2);
}
