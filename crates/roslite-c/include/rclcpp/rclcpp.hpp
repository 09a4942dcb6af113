// rclcpp's API over roslite's C ABI (roslite/roslite.h), header-only: the node sources that
// rclcpp users write (ros2/examples' minimal publisher, subscriber, service, client, timer,
// multithreaded executor and their like) compile unchanged against it and run on roslite.
//
// Message types come from `roslite interface generate --lang cpp`, which also writes the CDR
// runtime (roslite/cdr.hpp) this header uses; put its output directory on the include path.
//
// Errors from roslite throw rclcpp::exceptions::RCLError (a std::runtime_error) with roslite's
// message, as rclcpp throws on rcl errors.
//
// Compiled for WebAssembly (__wasi__: a guest of roslite-wasm, docs/wasm.md) it takes a
// single-threaded path, since wasm32's libc++ has no threads: no locks, futures completed by
// spinning (detail/single_threaded.hpp), executors on the guest's one thread. Wasm guests have
// no exception support either: an error prints its message and ends the node.
#ifndef ROSLITE_RCLCPP_RCLCPP_HPP
#define ROSLITE_RCLCPP_RCLCPP_HPP

#include <rcutils/logging_macros.h>
#include <roslite/cdr.hpp>
#include <roslite/roslite.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__wasi__)
#include <rclcpp/detail/single_threaded.hpp>

#include <ctime>
#else
#include <future>
#include <mutex>
#include <thread>
#endif

namespace rclcpp {

namespace exceptions {
// What a failed roslite call throws.
class RCLError : public std::runtime_error {
 public:
  RCLError(roslite_status status, const std::string &what)
      : std::runtime_error(what), status(status) {}
  roslite_status status;
};
class ParameterNotDeclaredException : public RCLError {
 public:
  using RCLError::RCLError;
};
class InvalidParameterTypeException : public RCLError {
 public:
  using RCLError::RCLError;
};
}  // namespace exceptions

namespace detail {
#if defined(__wasi__)
// A throw ends a Wasm node (no exception support), so its text is printed first.
inline void report(const std::string &message) {
  std::fprintf(stderr, "rclcpp: %s\n", message.c_str());
  std::fflush(stderr);
}
[[noreturn]] inline void raise_error(roslite_status status, const std::string &message) {
  report(message);
  throw exceptions::RCLError(status, message);
}
#else
inline void report(const std::string &) {}
using Mutex = std::mutex;
using Lock = std::lock_guard<std::mutex>;
template <class T>
using Promise = std::promise<T>;
template <class T>
using Future = std::future<T>;
template <class T>
using SharedFuture = std::shared_future<T>;
#endif

inline void check(roslite_status status, const char *what) {
  if (status == ROSLITE_OK) return;
  std::string message = std::string(what) + ": " + roslite_last_error();
  report(message);
  if (status == ROSLITE_NOT_FOUND) throw exceptions::ParameterNotDeclaredException(status, message);
  if (status == ROSLITE_TYPE_MISMATCH)
    throw exceptions::InvalidParameterTypeException(status, message);
  throw exceptions::RCLError(status, message);
}

// A handle released when the last owner goes.
class Handle {
 public:
  Handle() = default;
  explicit Handle(roslite_handle h) : h_(std::make_shared<Owned>(h)) {}
  roslite_handle get() const { return h_ ? h_->h : 0; }
  explicit operator bool() const { return get() != 0; }

 private:
  struct Owned {
    explicit Owned(roslite_handle h) : h(h) {}
    ~Owned() {
      if (h) roslite_release(h);
    }
    Owned(const Owned &) = delete;
    Owned &operator=(const Owned &) = delete;
    roslite_handle h;
  };
  std::shared_ptr<Owned> h_;
};

inline int64_t to_ns(std::chrono::nanoseconds d) { return d.count(); }

// The process's context, made by rclcpp::init.
struct Global {
  Mutex mutex;
  Handle context;
};
inline Global &global() {
  static Global g;
  return g;
}
inline roslite_handle context_or_init() {
  Global &g = global();
  Lock lock(g.mutex);
  if (!g.context) {
    roslite_handle h = 0;
    check(roslite_context_init(0, nullptr, &h), "initialising roslite");
    g.context = Handle(h);
  }
  return g.context.get();
}

template <class T>
std::vector<uint8_t> encode(const T &message) {
  std::vector<uint8_t> bytes;
  if (!roslite::encode(message, bytes)) {
    std::string text = std::string("cannot encode a ") + roslite::message_traits<T>::type_name() +
                       ": a bounded string or sequence is over its bound, or a string holds a "
                       "NUL or is not UTF-8";
    report(text);
    throw exceptions::RCLError(ROSLITE_BAD_MESSAGE, text);
  }
  return bytes;
}

// Hands roslite the definition of a generated type it does not ship (nothing for the rest).
template <class T>
void register_type() {
  if (const char *definition = roslite::type_definition<T>::text())
    check(roslite_type_register(definition), "registering the definition of a message type");
}

template <class T>
roslite_type type_of() {
  register_type<T>();
  return roslite_type{roslite::message_traits<T>::type_name(),
                      roslite::message_traits<T>::type_hash()};
}
}  // namespace detail

// ---- init / shutdown ------------------------------------------------------------------------

class InitOptions {
 public:
  InitOptions() = default;
  bool shutdown_on_signal = true;
};

inline void init(int argc, char const *const *argv, const InitOptions &options = InitOptions()) {
  detail::Global &g = detail::global();
  detail::Lock lock(g.mutex);
  roslite_handle h = 0;
  detail::check(roslite_context_init(argc, argv, &h), "rclcpp::init");
  g.context = detail::Handle(h);
  if (options.shutdown_on_signal)
    detail::check(roslite_install_signal_handlers(), "installing signal handlers");
}

inline bool ok() {
  detail::Global &g = detail::global();
  detail::Lock lock(g.mutex);
  if (!g.context) return false;
  bool running = false;
  return roslite_context_ok(g.context.get(), &running) == ROSLITE_OK && running;
}

inline bool shutdown() {
  detail::Global &g = detail::global();
  detail::Lock lock(g.mutex);
  if (!g.context) return false;
  return roslite_context_shutdown(g.context.get()) == ROSLITE_OK;
}

// Strips the ROS arguments (--ros-args ... [--]) from argv, as rclcpp does.
inline std::vector<std::string> remove_ros_arguments(int argc, char const *const *argv) {
  std::vector<std::string> out;
  bool in_ros = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ros-args") { in_ros = true; continue; }
    if (in_ros && a == "--") { in_ros = false; continue; }
    if (!in_ros) out.push_back(a);
  }
  return out;
}

// ---- time -----------------------------------------------------------------------------------

}  // namespace rclcpp

#ifndef ROSLITE_RCL_CLOCK_TYPE
#define ROSLITE_RCL_CLOCK_TYPE
// rcl's clock types (rcl/time.h), for the rclcpp::Clock and rclcpp::Time constructors.
enum rcl_clock_type_t {
  RCL_CLOCK_UNINITIALIZED = 0,
  RCL_ROS_TIME,
  RCL_SYSTEM_TIME,
  RCL_STEADY_TIME,
};
#endif

#ifndef ROSLITE_RCL_SERVICE_INTROSPECTION_STATE
#define ROSLITE_RCL_SERVICE_INTROSPECTION_STATE
// rcl's service introspection states (rcl/service_introspection.h), for
// configure_introspection.
enum rcl_service_introspection_state_t {
  RCL_SERVICE_INTROSPECTION_OFF = ROSLITE_SERVICE_INTROSPECTION_OFF,
  RCL_SERVICE_INTROSPECTION_METADATA = ROSLITE_SERVICE_INTROSPECTION_METADATA,
  RCL_SERVICE_INTROSPECTION_CONTENTS = ROSLITE_SERVICE_INTROSPECTION_CONTENTS,
};
#endif

namespace rclcpp {

namespace detail {
constexpr bool same_text(const char *a, const char *b) {
  return *a == *b && (*a == '\0' || same_text(a + 1, b + 1));
}
// Whether M is the generated message `name` (builtin_interfaces' Time and Duration).
template <class M>
constexpr bool is_message_named(const char *name) {
  if constexpr (roslite::message_traits<M>::is_message)
    return same_text(roslite::message_traits<M>::type_name(), name);
  else
    return false;
}
template <class M>
using if_time_msg =
    std::enable_if_t<is_message_named<M>("builtin_interfaces/msg/Time"), int>;
template <class M>
using if_duration_msg =
    std::enable_if_t<is_message_named<M>("builtin_interfaces/msg/Duration"), int>;
constexpr int64_t kNsPerSecond = 1000000000LL;
}  // namespace detail

// A signed span of time in nanoseconds, as rclcpp::Duration: from (seconds, nanoseconds), any
// std::chrono duration or a builtin_interfaces/msg/Duration, and back.
class Duration {
 public:
  Duration() = default;
  Duration(int32_t seconds, uint32_t nanoseconds)
      : ns_(int64_t(seconds) * detail::kNsPerSecond + int64_t(nanoseconds)) {}
  template <class Rep, class Period>
  Duration(const std::chrono::duration<Rep, Period> &d)  // NOLINT: implicit, as rclcpp's
      : ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()) {}
  template <class M, detail::if_duration_msg<M> = 0>
  Duration(const M &msg)  // NOLINT: implicit, as rclcpp's
      : Duration(msg.sec, msg.nanosec) {}

  static Duration from_seconds(double seconds) {
    return Duration(std::chrono::nanoseconds(int64_t(seconds * 1e9)));
  }
  static Duration from_nanoseconds(int64_t nanoseconds) {
    return Duration(std::chrono::nanoseconds(nanoseconds));
  }
  static Duration max() { return Duration(std::numeric_limits<int32_t>::max(), 999999999u); }

  int64_t nanoseconds() const { return ns_; }
  double seconds() const { return double(ns_) / 1e9; }
  template <class D>
  D to_chrono() const {
    return std::chrono::duration_cast<D>(std::chrono::nanoseconds(ns_));
  }
  template <class M, detail::if_duration_msg<M> = 0>
  operator M() const {
    M msg;
    int64_t sec = ns_ >= 0 ? ns_ / detail::kNsPerSecond : -((-ns_ - 1) / detail::kNsPerSecond) - 1;
    msg.sec = int32_t(sec);
    msg.nanosec = uint32_t(ns_ - sec * detail::kNsPerSecond);
    return msg;
  }

  Duration operator+(const Duration &o) const { return from_nanoseconds(ns_ + o.ns_); }
  Duration operator-(const Duration &o) const { return from_nanoseconds(ns_ - o.ns_); }
  Duration operator-() const { return from_nanoseconds(-ns_); }
  Duration operator*(double scale) const { return from_nanoseconds(int64_t(double(ns_) * scale)); }
  Duration &operator+=(const Duration &o) { ns_ += o.ns_; return *this; }
  Duration &operator-=(const Duration &o) { ns_ -= o.ns_; return *this; }
  bool operator==(const Duration &o) const { return ns_ == o.ns_; }
  bool operator!=(const Duration &o) const { return ns_ != o.ns_; }
  bool operator<(const Duration &o) const { return ns_ < o.ns_; }
  bool operator<=(const Duration &o) const { return ns_ <= o.ns_; }
  bool operator>(const Duration &o) const { return ns_ > o.ns_; }
  bool operator>=(const Duration &o) const { return ns_ >= o.ns_; }

 private:
  int64_t ns_ = 0;
};

// A point in time, nanoseconds since the Unix epoch (steady time: since boot), as
// rclcpp::Time: converts to and from builtin_interfaces/msg/Time (`msg.header.stamp = now()`).
class Time {
 public:
  Time(int32_t seconds, uint32_t nanoseconds, rcl_clock_type_t clock_type = RCL_SYSTEM_TIME)
      : ns_(int64_t(seconds) * detail::kNsPerSecond + int64_t(nanoseconds)),
        clock_type_(clock_type) {}
  explicit Time(int64_t nanoseconds = 0, rcl_clock_type_t clock_type = RCL_SYSTEM_TIME)
      : ns_(nanoseconds), clock_type_(clock_type) {}
  template <class M, detail::if_time_msg<M> = 0>
  Time(const M &msg, rcl_clock_type_t clock_type = RCL_ROS_TIME)  // NOLINT: implicit
      : Time(msg.sec, msg.nanosec, clock_type) {}

  static Time max() { return Time(std::numeric_limits<int32_t>::max(), 999999999u); }

  int64_t nanoseconds() const { return ns_; }
  double seconds() const { return double(ns_) / 1e9; }
  rcl_clock_type_t get_clock_type() const { return clock_type_; }
  template <class M, detail::if_time_msg<M> = 0>
  operator M() const {
    M msg;
    int64_t sec = ns_ >= 0 ? ns_ / detail::kNsPerSecond : -((-ns_ - 1) / detail::kNsPerSecond) - 1;
    msg.sec = int32_t(sec);
    msg.nanosec = uint32_t(ns_ - sec * detail::kNsPerSecond);
    return msg;
  }

  Time operator+(const Duration &d) const { return Time(ns_ + d.nanoseconds(), clock_type_); }
  Time operator-(const Duration &d) const { return Time(ns_ - d.nanoseconds(), clock_type_); }
  Duration operator-(const Time &o) const { return Duration::from_nanoseconds(ns_ - o.ns_); }
  Time &operator+=(const Duration &d) { ns_ += d.nanoseconds(); return *this; }
  Time &operator-=(const Duration &d) { ns_ -= d.nanoseconds(); return *this; }
  bool operator==(const Time &o) const { return ns_ == o.ns_; }
  bool operator!=(const Time &o) const { return ns_ != o.ns_; }
  bool operator<(const Time &o) const { return ns_ < o.ns_; }
  bool operator<=(const Time &o) const { return ns_ <= o.ns_; }
  bool operator>(const Time &o) const { return ns_ > o.ns_; }
  bool operator>=(const Time &o) const { return ns_ >= o.ns_; }

 private:
  int64_t ns_ = 0;
  rcl_clock_type_t clock_type_ = RCL_SYSTEM_TIME;
};

inline Time operator+(const Duration &d, const Time &t) { return t + d; }

// A clock, as rclcpp::Clock. A node's clock (Node::get_clock()) is the node's ROS time: the
// system clock, or /clock under use_sim_time. A Clock made directly reads the system clock
// (RCL_SYSTEM_TIME, and RCL_ROS_TIME, which without a node has no /clock to follow) or the
// steady clock (RCL_STEADY_TIME).
class Clock {
 public:
  using SharedPtr = std::shared_ptr<Clock>;
  explicit Clock(rcl_clock_type_t clock_type = RCL_SYSTEM_TIME) : clock_type_(clock_type) {}
  // The clock of the node `node` (what Node::get_clock() gives).
  explicit Clock(const detail::Handle &node) : clock_type_(RCL_ROS_TIME), node_(node) {}

  Time now() const {
    if (node_) {
      int64_t ns = 0;
      detail::check(roslite_node_now(node_.get(), &ns), "reading the node's clock");
      return Time(ns, RCL_ROS_TIME);
    }
    if (clock_type_ == RCL_STEADY_TIME)
      return Time(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count(),
                  RCL_STEADY_TIME);
    return Time(std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count(),
                clock_type_);
  }
  rcl_clock_type_t get_clock_type() const { return clock_type_; }

 private:
  rcl_clock_type_t clock_type_;
  // Shares the node's handle, so the clock keeps working while someone holds it.
  detail::Handle node_;
};

// ---- logging --------------------------------------------------------------------------------

class Logger {
 public:
  Logger() : name_("") {}
  explicit Logger(std::string name) : name_(std::move(name)) {}
  const char *get_name() const { return name_.c_str(); }
  Logger get_child(const std::string &suffix) const {
    return Logger(name_.empty() ? suffix : name_ + "." + suffix);
  }

 private:
  std::string name_;
};

inline Logger get_logger(const std::string &name) { return Logger(name); }

namespace detail {
inline void log(const Logger &logger, int32_t severity, const char *function,
                const std::string &message) {
  roslite_log(logger.get_name(), severity, function, message.c_str());
}
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
inline void logf(const Logger &logger, int32_t severity, const char *function, const char *format,
                 ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int needed = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string text(needed > 0 ? size_t(needed) : 0, '\0');
  if (needed > 0) std::vsnprintf(&text[0], text.size() + 1, format, args);
  va_end(args);
  log(logger, severity, function, text);
}
// Whether a throttled log may print now: at most once per `period_ms` per call site.
inline bool throttle_allows(std::atomic<int64_t> &last_ns, const Clock &clock, double period_ms) {
  int64_t now = clock.now().nanoseconds();
  int64_t last = last_ns.load();
  if (last != 0 && double(now - last) < period_ms * 1e6) return false;
  return last_ns.compare_exchange_strong(last, now);
}
}  // namespace detail

}  // namespace rclcpp

#define ROSLITE_RCLCPP_LOG(severity, logger, ...) \
  ::rclcpp::detail::logf((logger), (severity), __func__, __VA_ARGS__)
#define ROSLITE_RCLCPP_LOG_STREAM(severity, logger, stream_arg)                 \
  do {                                                                          \
    std::stringstream roslite_ss_;                                              \
    roslite_ss_ << stream_arg;                                                  \
    ::rclcpp::detail::log((logger), (severity), __func__, roslite_ss_.str());   \
  } while (0)
#define ROSLITE_RCLCPP_LOG_ONCE(severity, logger, ...)                         \
  do {                                                                         \
    static std::atomic<bool> roslite_once_{false};                             \
    if (!roslite_once_.exchange(true)) ROSLITE_RCLCPP_LOG(severity, logger, __VA_ARGS__); \
  } while (0)
#define ROSLITE_RCLCPP_LOG_THROTTLE(severity, logger, clock, period_ms, ...)              \
  do {                                                                                   \
    static std::atomic<int64_t> roslite_last_{0};                                        \
    if (::rclcpp::detail::throttle_allows(roslite_last_, (clock), (period_ms)))          \
      ROSLITE_RCLCPP_LOG(severity, logger, __VA_ARGS__);                                 \
  } while (0)

#define RCLCPP_DEBUG(logger, ...) ROSLITE_RCLCPP_LOG(ROSLITE_LOG_DEBUG, logger, __VA_ARGS__)
#define RCLCPP_INFO(logger, ...) ROSLITE_RCLCPP_LOG(ROSLITE_LOG_INFO, logger, __VA_ARGS__)
#define RCLCPP_WARN(logger, ...) ROSLITE_RCLCPP_LOG(ROSLITE_LOG_WARN, logger, __VA_ARGS__)
#define RCLCPP_ERROR(logger, ...) ROSLITE_RCLCPP_LOG(ROSLITE_LOG_ERROR, logger, __VA_ARGS__)
#define RCLCPP_FATAL(logger, ...) ROSLITE_RCLCPP_LOG(ROSLITE_LOG_FATAL, logger, __VA_ARGS__)
#define RCLCPP_DEBUG_STREAM(logger, s) ROSLITE_RCLCPP_LOG_STREAM(ROSLITE_LOG_DEBUG, logger, s)
#define RCLCPP_INFO_STREAM(logger, s) ROSLITE_RCLCPP_LOG_STREAM(ROSLITE_LOG_INFO, logger, s)
#define RCLCPP_WARN_STREAM(logger, s) ROSLITE_RCLCPP_LOG_STREAM(ROSLITE_LOG_WARN, logger, s)
#define RCLCPP_ERROR_STREAM(logger, s) ROSLITE_RCLCPP_LOG_STREAM(ROSLITE_LOG_ERROR, logger, s)
#define RCLCPP_FATAL_STREAM(logger, s) ROSLITE_RCLCPP_LOG_STREAM(ROSLITE_LOG_FATAL, logger, s)
#define RCLCPP_DEBUG_ONCE(logger, ...) ROSLITE_RCLCPP_LOG_ONCE(ROSLITE_LOG_DEBUG, logger, __VA_ARGS__)
#define RCLCPP_INFO_ONCE(logger, ...) ROSLITE_RCLCPP_LOG_ONCE(ROSLITE_LOG_INFO, logger, __VA_ARGS__)
#define RCLCPP_WARN_ONCE(logger, ...) ROSLITE_RCLCPP_LOG_ONCE(ROSLITE_LOG_WARN, logger, __VA_ARGS__)
#define RCLCPP_ERROR_ONCE(logger, ...) ROSLITE_RCLCPP_LOG_ONCE(ROSLITE_LOG_ERROR, logger, __VA_ARGS__)
#define RCLCPP_DEBUG_THROTTLE(logger, clock, ms, ...) \
  ROSLITE_RCLCPP_LOG_THROTTLE(ROSLITE_LOG_DEBUG, logger, clock, ms, __VA_ARGS__)
#define RCLCPP_INFO_THROTTLE(logger, clock, ms, ...) \
  ROSLITE_RCLCPP_LOG_THROTTLE(ROSLITE_LOG_INFO, logger, clock, ms, __VA_ARGS__)
#define RCLCPP_WARN_THROTTLE(logger, clock, ms, ...) \
  ROSLITE_RCLCPP_LOG_THROTTLE(ROSLITE_LOG_WARN, logger, clock, ms, __VA_ARGS__)
#define RCLCPP_ERROR_THROTTLE(logger, clock, ms, ...) \
  ROSLITE_RCLCPP_LOG_THROTTLE(ROSLITE_LOG_ERROR, logger, clock, ms, __VA_ARGS__)

#include <rclcpp/detail/entities.hpp>

#endif  // ROSLITE_RCLCPP_RCLCPP_HPP
