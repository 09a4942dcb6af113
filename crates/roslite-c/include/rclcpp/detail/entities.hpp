// rclcpp over roslite: QoS, endpoints, parameters, services, the node and the executors.
// Included by rclcpp/rclcpp.hpp; not meant to be included on its own.
#ifndef ROSLITE_RCLCPP_DETAIL_ENTITIES_HPP
#define ROSLITE_RCLCPP_DETAIL_ENTITIES_HPP

namespace rclcpp {

// ---- QoS ------------------------------------------------------------------------------------

enum class ReliabilityPolicy { Reliable, BestEffort, SystemDefault };
enum class DurabilityPolicy { Volatile, TransientLocal, SystemDefault };
enum class HistoryPolicy { KeepLast, KeepAll, SystemDefault };
enum class LivelinessPolicy { Automatic, ManualByTopic, SystemDefault };

struct KeepLast {
  explicit KeepLast(size_t depth) : depth(depth) {}
  size_t depth;
};
struct KeepAll {};

class QoS {
 public:
  QoS(size_t depth) : QoS(KeepLast(depth)) {}  // NOLINT: rclcpp converts a depth implicitly
  QoS(const KeepLast &history) {                  // NOLINT
    roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos_);
    keep_last(history.depth);
  }
  QoS(const KeepAll &) {  // NOLINT
    roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &qos_);
    keep_all();
  }
  explicit QoS(const roslite_qos &qos) : qos_(qos) {}

  QoS &keep_last(size_t depth) {
    qos_.history = ROSLITE_HISTORY_KEEP_LAST;
    qos_.depth = uint32_t(depth);
    return *this;
  }
  QoS &keep_all() {
    qos_.history = ROSLITE_HISTORY_KEEP_ALL;
    return *this;
  }
  QoS &history(HistoryPolicy h) {
    if (h == HistoryPolicy::KeepAll) return keep_all();
    qos_.history = ROSLITE_HISTORY_KEEP_LAST;
    return *this;
  }
  QoS &reliable() { return reliability(ReliabilityPolicy::Reliable); }
  QoS &best_effort() { return reliability(ReliabilityPolicy::BestEffort); }
  QoS &reliability(ReliabilityPolicy r) {
    qos_.reliability = r == ReliabilityPolicy::BestEffort ? ROSLITE_RELIABILITY_BEST_EFFORT
                                                          : ROSLITE_RELIABILITY_RELIABLE;
    return *this;
  }
  QoS &durability_volatile() { return durability(DurabilityPolicy::Volatile); }
  QoS &transient_local() { return durability(DurabilityPolicy::TransientLocal); }
  QoS &durability(DurabilityPolicy d) {
    qos_.durability = d == DurabilityPolicy::TransientLocal ? ROSLITE_DURABILITY_TRANSIENT_LOCAL
                                                            : ROSLITE_DURABILITY_VOLATILE;
    return *this;
  }
  QoS &deadline(std::chrono::nanoseconds d) {
    qos_.deadline_ns = d.count();
    return *this;
  }
  QoS &lifespan(std::chrono::nanoseconds d) {
    qos_.lifespan_ns = d.count();
    return *this;
  }
  QoS &liveliness(LivelinessPolicy l) {
    qos_.liveliness = l == LivelinessPolicy::ManualByTopic ? ROSLITE_LIVELINESS_MANUAL_BY_TOPIC
                                                           : ROSLITE_LIVELINESS_AUTOMATIC;
    return *this;
  }
  QoS &liveliness_lease_duration(std::chrono::nanoseconds d) {
    qos_.liveliness_lease_ns = d.count();
    return *this;
  }
  size_t depth() const { return qos_.depth; }
  ReliabilityPolicy reliability() const {
    return qos_.reliability == ROSLITE_RELIABILITY_BEST_EFFORT ? ReliabilityPolicy::BestEffort
                                                               : ReliabilityPolicy::Reliable;
  }
  DurabilityPolicy durability() const {
    return qos_.durability == ROSLITE_DURABILITY_TRANSIENT_LOCAL ? DurabilityPolicy::TransientLocal
                                                                 : DurabilityPolicy::Volatile;
  }
  const roslite_qos &get_roslite_qos() const { return qos_; }

 protected:
  static roslite_qos profile(int32_t which) {
    roslite_qos q;
    roslite_qos_profile(which, &q);
    return q;
  }

 private:
  roslite_qos qos_{};
};

class SensorDataQoS : public QoS {
 public:
  SensorDataQoS() : QoS(profile(ROSLITE_QOS_PROFILE_SENSOR_DATA)) {}
};
class SystemDefaultsQoS : public QoS {
 public:
  SystemDefaultsQoS() : QoS(profile(ROSLITE_QOS_PROFILE_SYSTEM_DEFAULT)) {}
};
class ServicesQoS : public QoS {
 public:
  ServicesQoS() : QoS(profile(ROSLITE_QOS_PROFILE_SERVICES_DEFAULT)) {}
};
class ParametersQoS : public QoS {
 public:
  ParametersQoS() : QoS(profile(ROSLITE_QOS_PROFILE_PARAMETERS)) {}
};

// ---- callback groups ------------------------------------------------------------------------

enum class CallbackGroupType { MutuallyExclusive, Reentrant };

class CallbackGroup {
 public:
  using SharedPtr = std::shared_ptr<CallbackGroup>;
  CallbackGroup(roslite_handle handle, CallbackGroupType type) : handle_(handle), type_(type) {}
  CallbackGroupType type() const { return type_; }
  roslite_handle handle() const { return handle_.get(); }

 private:
  detail::Handle handle_;
  CallbackGroupType type_;
};

namespace detail {
inline roslite_handle group_handle(const CallbackGroup::SharedPtr &group) {
  return group ? group->handle() : 0;
}
}  // namespace detail

// rclcpp's ContentFilterOptions (rclcpp/subscription_content_filter_options.hpp): a filter
// expression over the message's fields and the values of its parameters %0, %1, ..., each
// written as a literal ("'text'", "42"); an empty expression is no filter.
struct ContentFilterOptions {
  std::string filter_expression;
  std::vector<std::string> expression_parameters;
};

struct SubscriptionOptions {
  CallbackGroup::SharedPtr callback_group;
  ContentFilterOptions content_filter_options;
};
struct PublisherOptions {
  CallbackGroup::SharedPtr callback_group;
};
template <class Allocator = void>
using SubscriptionOptionsWithAllocator = SubscriptionOptions;
template <class Allocator = void>
using PublisherOptionsWithAllocator = PublisherOptions;

// ---- publisher ------------------------------------------------------------------------------

template <class T>
class Publisher {
 public:
  using SharedPtr = std::shared_ptr<Publisher<T>>;
  Publisher(roslite_handle node, const std::string &topic, const QoS &qos) : topic_(topic) {
    roslite_type type = detail::type_of<T>();
    roslite_handle h = 0;
    detail::check(roslite_publisher_create(node, topic.c_str(), &type, &qos.get_roslite_qos(), &h),
                  "create_publisher");
    handle_ = detail::Handle(h);
  }
  void publish(const T &message) {
    std::vector<uint8_t> bytes = detail::encode(message);
    detail::check(roslite_publish(handle_.get(), bytes.data(), bytes.size()), "publish");
  }
  void publish(std::unique_ptr<T> message) { publish(*message); }
  size_t get_subscription_count() const {
    size_t n = 0;
    detail::check(roslite_publisher_subscription_count(handle_.get(), &n),
                  "get_subscription_count");
    return n;
  }
  const char *get_topic_name() const { return topic_.c_str(); }

 protected:
  // A publisher whose handle another call made (rclcpp_lifecycle's LifecyclePublisher).
  Publisher(detail::Handle handle, const std::string &topic)
      : topic_(topic), handle_(std::move(handle)) {}
  roslite_handle publisher_handle() const { return handle_.get(); }

 private:
  std::string topic_;
  detail::Handle handle_;
};

// ---- subscription ---------------------------------------------------------------------------

class MessageInfo {
 public:
  MessageInfo() = default;
  explicit MessageInfo(const roslite_message_info &info) : info_(info) {}
  const roslite_message_info &get_roslite_message_info() const { return info_; }
  int64_t source_timestamp() const { return info_.source_timestamp_ns; }
  int64_t received_timestamp() const { return info_.received_timestamp_ns; }
  uint64_t publication_sequence_number() const { return info_.publication_sequence_number; }
  bool from_intra_process() const { return info_.from_intra_process; }

 private:
  roslite_message_info info_{};
};

namespace detail {
#if !defined(__wasi__)
// The C strings of `texts`, valid while `texts` is.
inline std::vector<const char *> c_strings(const std::vector<std::string> &texts) {
  std::vector<const char *> pointers;
  pointers.reserve(texts.size());
  for (const std::string &text : texts) pointers.push_back(text.c_str());
  return pointers;
}

// Text a roslite call copies out (`call(buffer, capacity, &length)`): asked for its length
// first, then copied.
template <class Call>
std::string read_text(Call call, const char *what) {
  size_t length = 0;
  call(nullptr, 0, &length);
  std::string text(length + 1, '\0');
  check(call(&text[0], text.size(), &length), what);
  text.resize(length);
  return text;
}
#endif

// Calls `f` with the message in the shape its signature asks for, as rclcpp's
// AnySubscriptionCallback does.
template <class T, class F>
std::function<void(std::unique_ptr<T>, const MessageInfo &)> adapt_subscription(F f) {
  using Unique = std::unique_ptr<T>;
  using Shared = std::shared_ptr<T>;
  using ConstShared = std::shared_ptr<const T>;
  if constexpr (std::is_invocable_v<F &, const T &, const MessageInfo &>) {
    return [f](Unique m, const MessageInfo &i) mutable { f(*m, i); };
  } else if constexpr (std::is_invocable_v<F &, Unique, const MessageInfo &>) {
    return [f](Unique m, const MessageInfo &i) mutable { f(std::move(m), i); };
  } else if constexpr (std::is_invocable_v<F &, Shared, const MessageInfo &>) {
    return [f](Unique m, const MessageInfo &i) mutable { f(Shared(std::move(m)), i); };
  } else if constexpr (std::is_invocable_v<F &, ConstShared, const MessageInfo &>) {
    return [f](Unique m, const MessageInfo &i) mutable { f(ConstShared(std::move(m)), i); };
  } else if constexpr (std::is_invocable_v<F &, const T &>) {
    return [f](Unique m, const MessageInfo &) mutable { f(*m); };
  } else if constexpr (std::is_invocable_v<F &, Unique>) {
    return [f](Unique m, const MessageInfo &) mutable { f(std::move(m)); };
  } else if constexpr (std::is_invocable_v<F &, Shared>) {
    return [f](Unique m, const MessageInfo &) mutable { f(Shared(std::move(m))); };
  } else if constexpr (std::is_invocable_v<F &, ConstShared>) {
    return [f](Unique m, const MessageInfo &) mutable { f(ConstShared(std::move(m))); };
  } else {
    static_assert(std::is_invocable_v<F &, const T &>,
                  "a subscription callback takes const T &, T::UniquePtr, T::SharedPtr or "
                  "T::ConstSharedPtr, optionally followed by const rclcpp::MessageInfo &");
    return {};
  }
}
}  // namespace detail

class SubscriptionBase {
 public:
  virtual ~SubscriptionBase() = default;
};

template <class T>
class Subscription : public SubscriptionBase {
 public:
  using SharedPtr = std::shared_ptr<Subscription<T>>;
  using Callback = std::function<void(std::unique_ptr<T>, const MessageInfo &)>;

  Subscription(roslite_handle node, roslite_handle group, const std::string &topic, const QoS &qos,
               Callback callback, const ContentFilterOptions &filter = ContentFilterOptions())
      : topic_(topic), state_(std::make_unique<State>()) {
    state_->callback = std::move(callback);
    roslite_type type = detail::type_of<T>();
    roslite_handle h = 0;
    if (filter.filter_expression.empty()) {
      detail::check(roslite_subscription_create_in(node, group, topic.c_str(), &type,
                                                   &qos.get_roslite_qos(), &Subscription::deliver,
                                                   state_.get(), &h),
                    "create_subscription");
    } else {
#if defined(__wasi__)
      detail::raise_error(ROSLITE_ERROR,
                          "create_subscription: content filters are not available to "
                          "WebAssembly nodes (the host does not import them)");
#else
      std::vector<const char *> parameters = detail::c_strings(filter.expression_parameters);
      detail::check(roslite_subscription_create_filtered(
                        node, group, topic.c_str(), &type, &qos.get_roslite_qos(),
                        filter.filter_expression.c_str(), parameters.data(), parameters.size(),
                        &Subscription::deliver, state_.get(), &h),
                    "create_subscription");
#endif
    }
    handle_ = detail::Handle(h);
  }
  ~Subscription() override { handle_ = detail::Handle(); }  // unsubscribe before the state goes
  const char *get_topic_name() const { return topic_.c_str(); }

  // Content filters, as rclcpp's SubscriptionBase has them: whether one is set, replacing it
  // (an empty expression removes it; an expression that does not compile throws RCLError and
  // leaves the old one), and reading it back (throws RCLError without one). WebAssembly nodes
  // have none: their host does not import these calls.
#if defined(__wasi__)
  bool is_cft_enabled() const { return false; }
  void set_content_filter(const std::string &filter_expression,
                          const std::vector<std::string> & = {}) {
    if (!filter_expression.empty())
      detail::raise_error(ROSLITE_ERROR,
                          "set_content_filter: content filters are not available to "
                          "WebAssembly nodes");
  }
  ContentFilterOptions get_content_filter() const {
    detail::raise_error(ROSLITE_ERROR, "get_content_filter: the subscription has no content "
                                       "filter (WebAssembly nodes have none)");
  }
#else
  bool is_cft_enabled() const {
    bool enabled = false;
    detail::check(roslite_subscription_is_cft_enabled(handle_.get(), &enabled), "is_cft_enabled");
    return enabled;
  }
  void set_content_filter(const std::string &filter_expression,
                          const std::vector<std::string> &expression_parameters = {}) {
    std::vector<const char *> parameters = detail::c_strings(expression_parameters);
    detail::check(roslite_subscription_set_content_filter(handle_.get(), filter_expression.c_str(),
                                                          parameters.data(), parameters.size()),
                  "set_content_filter");
  }
  ContentFilterOptions get_content_filter() const {
    ContentFilterOptions options;
    roslite_handle h = handle_.get();
    options.filter_expression = detail::read_text(
        [h](char *buffer, size_t capacity, size_t *length) {
          return roslite_subscription_content_filter_expression(h, buffer, capacity, length);
        },
        "get_content_filter");
    size_t count = 0;
    detail::check(roslite_subscription_content_filter_parameter_count(h, &count),
                  "get_content_filter");
    for (size_t i = 0; i < count; ++i) {
      options.expression_parameters.push_back(detail::read_text(
          [h, i](char *buffer, size_t capacity, size_t *length) {
            return roslite_subscription_content_filter_parameter(h, i, buffer, capacity, length);
          },
          "get_content_filter"));
    }
    return options;
  }
#endif
  // Messages that did not decode as T (dropped).
  uint64_t malformed_count() const { return state_->malformed.load(); }

 private:
  struct State {
    Callback callback;
    std::atomic<uint64_t> malformed{0};
  };
  static void deliver(void *user, const uint8_t *cdr, size_t length,
                      const roslite_message_info *info) {
    State *state = static_cast<State *>(user);
    auto message = std::make_unique<T>();
    if (!roslite::decode(cdr, length, *message)) {
      state->malformed++;
      return;
    }
    state->callback(std::move(message), MessageInfo(*info));
  }
  std::string topic_;
  std::unique_ptr<State> state_;
  detail::Handle handle_;
};

// ---- timers ---------------------------------------------------------------------------------

class TimerBase {
 public:
  using SharedPtr = std::shared_ptr<TimerBase>;
  TimerBase(roslite_handle node, roslite_handle group, std::chrono::nanoseconds period,
            std::function<void()> callback, bool wall)
      : callback_(std::make_unique<std::function<void()>>(std::move(callback))) {
    roslite_handle h = 0;
    auto create = wall ? roslite_wall_timer_create_in : roslite_timer_create_in;
    detail::check(create(node, group, period.count(), &TimerBase::tick, callback_.get(), &h),
                  "create_timer");
    handle_ = detail::Handle(h);
  }
  virtual ~TimerBase() { handle_ = detail::Handle(); }
  void cancel() { detail::check(roslite_timer_cancel(handle_.get()), "cancel"); }
  void reset() { detail::check(roslite_timer_reset(handle_.get()), "reset"); }

 private:
  static void tick(void *user) { (*static_cast<std::function<void()> *>(user))(); }
  std::unique_ptr<std::function<void()>> callback_;
  detail::Handle handle_;
};
using WallTimer = TimerBase;

namespace detail {
inline void sleep_for(std::chrono::nanoseconds duration) {
#if defined(__wasi__)
  timespec span{time_t(duration.count() / kNsPerSecond), long(duration.count() % kNsPerSecond)};
  nanosleep(&span, nullptr);
#else
  std::this_thread::sleep_for(duration);
#endif
}
}  // namespace detail

// rclcpp::sleep_for: sleeps the calling thread for `duration` (it is not cut short by a
// shutdown here); true, the full duration slept.
inline bool sleep_for(std::chrono::nanoseconds duration) {
  detail::sleep_for(duration);
  return true;
}

// A loop's pace on steady time, as rclcpp::WallRate (and rclcpp::Rate): sleep() waits out what
// is left of the period begun at the last sleep() (or at construction or reset()); a loop that
// overran it returns false at once and starts a new period from now.
class WallRate {
 public:
  explicit WallRate(double rate)
      : WallRate(std::chrono::nanoseconds(int64_t(double(detail::kNsPerSecond) / rate))) {}
  explicit WallRate(std::chrono::nanoseconds period)
      : period_(period), start_(std::chrono::steady_clock::now()) {}

  bool sleep() {
    auto end = start_ + period_;
    auto now = std::chrono::steady_clock::now();
    if (now >= end) {
      start_ = now;
      return false;
    }
    detail::sleep_for(end - now);
    start_ = end;
    return true;
  }
  void reset() { start_ = std::chrono::steady_clock::now(); }
  std::chrono::nanoseconds period() const { return period_; }

 private:
  std::chrono::nanoseconds period_;
  std::chrono::steady_clock::time_point start_;
};
using Rate = WallRate;
template <class F = std::function<void()>>
using GenericTimer = TimerBase;

// ---- parameters -----------------------------------------------------------------------------

enum ParameterType {
  PARAMETER_NOT_SET = ROSLITE_PARAMETER_NOT_SET,
  PARAMETER_BOOL = ROSLITE_PARAMETER_BOOL,
  PARAMETER_INTEGER = ROSLITE_PARAMETER_INTEGER,
  PARAMETER_DOUBLE = ROSLITE_PARAMETER_DOUBLE,
  PARAMETER_STRING = ROSLITE_PARAMETER_STRING,
  PARAMETER_BYTE_ARRAY = ROSLITE_PARAMETER_BYTE_ARRAY,
  PARAMETER_BOOL_ARRAY = ROSLITE_PARAMETER_BOOL_ARRAY,
  PARAMETER_INTEGER_ARRAY = ROSLITE_PARAMETER_INTEGER_ARRAY,
  PARAMETER_DOUBLE_ARRAY = ROSLITE_PARAMETER_DOUBLE_ARRAY,
  PARAMETER_STRING_ARRAY = ROSLITE_PARAMETER_STRING_ARRAY,
};

class ParameterValue {
 public:
  ParameterValue() = default;
  ParameterValue(bool v) : type_(PARAMETER_BOOL), bool_(v) {}                  // NOLINT
  ParameterValue(int v) : type_(PARAMETER_INTEGER), int_(v) {}                 // NOLINT
  ParameterValue(int64_t v) : type_(PARAMETER_INTEGER), int_(v) {}             // NOLINT
  ParameterValue(double v) : type_(PARAMETER_DOUBLE), double_(v) {}            // NOLINT
  ParameterValue(const char *v) : type_(PARAMETER_STRING), string_(v) {}       // NOLINT
  ParameterValue(std::string v) : type_(PARAMETER_STRING), string_(std::move(v)) {}  // NOLINT
  ParameterValue(std::vector<uint8_t> v) : type_(PARAMETER_BYTE_ARRAY), bytes_(std::move(v)) {}  // NOLINT
  ParameterValue(std::vector<bool> v) : type_(PARAMETER_BOOL_ARRAY), bools_(std::move(v)) {}  // NOLINT
  ParameterValue(std::vector<int64_t> v) : type_(PARAMETER_INTEGER_ARRAY), ints_(std::move(v)) {}  // NOLINT
  ParameterValue(const std::vector<int> &v)  // NOLINT
      : type_(PARAMETER_INTEGER_ARRAY), ints_(v.begin(), v.end()) {}
  ParameterValue(std::vector<double> v) : type_(PARAMETER_DOUBLE_ARRAY), doubles_(std::move(v)) {}  // NOLINT
  ParameterValue(std::vector<std::string> v)  // NOLINT
      : type_(PARAMETER_STRING_ARRAY), strings_(std::move(v)) {}

  ParameterType get_type() const { return type_; }

  template <class V>
  V get() const;

  // The C form; valid while this value and `keep` live.
  roslite_parameter_value to_c(std::vector<const char *> &keep) const {
    roslite_parameter_value v{};
    v.type = type_;
    v.bool_value = bool_;
    v.integer_value = int_;
    v.double_value = double_;
    v.string_value = string_.c_str();
    switch (type_) {
      case PARAMETER_BYTE_ARRAY: v.array_values = bytes_.data(); v.array_length = bytes_.size(); break;
      case PARAMETER_BOOL_ARRAY:
        bool_bytes_.assign(bools_.begin(), bools_.end());
        v.array_values = bool_bytes_.data();
        v.array_length = bool_bytes_.size();
        break;
      case PARAMETER_INTEGER_ARRAY: v.array_values = ints_.data(); v.array_length = ints_.size(); break;
      case PARAMETER_DOUBLE_ARRAY: v.array_values = doubles_.data(); v.array_length = doubles_.size(); break;
      case PARAMETER_STRING_ARRAY:
        keep.clear();
        for (const auto &s : strings_) keep.push_back(s.c_str());
        v.array_values = keep.data();
        v.array_length = keep.size();
        break;
      default: break;
    }
    return v;
  }

  static ParameterValue from_c(const roslite_parameter_value &v) {
    ParameterValue out;
    out.type_ = ParameterType(v.type);
    out.bool_ = v.bool_value;
    out.int_ = v.integer_value;
    out.double_ = v.double_value;
    if (v.string_value) out.string_ = v.string_value;
    switch (v.type) {
      case PARAMETER_BYTE_ARRAY: {
        auto p = static_cast<const uint8_t *>(v.array_values);
        out.bytes_.assign(p, p + v.array_length);
        break;
      }
      case PARAMETER_BOOL_ARRAY: {
        auto p = static_cast<const uint8_t *>(v.array_values);
        for (size_t i = 0; i < v.array_length; ++i) out.bools_.push_back(p[i] != 0);
        break;
      }
      case PARAMETER_INTEGER_ARRAY: {
        auto p = static_cast<const int64_t *>(v.array_values);
        out.ints_.assign(p, p + v.array_length);
        break;
      }
      case PARAMETER_DOUBLE_ARRAY: {
        auto p = static_cast<const double *>(v.array_values);
        out.doubles_.assign(p, p + v.array_length);
        break;
      }
      case PARAMETER_STRING_ARRAY: {
        auto p = static_cast<const char *const *>(v.array_values);
        for (size_t i = 0; i < v.array_length; ++i) out.strings_.emplace_back(p[i]);
        break;
      }
      default: break;
    }
    return out;
  }

 private:
  void expect(ParameterType t) const {
    if (type_ == t) return;
    std::string message = "parameter value is of type " + std::to_string(int(type_)) + ", not " +
                          std::to_string(int(t));
    detail::report(message);
    throw exceptions::InvalidParameterTypeException(ROSLITE_TYPE_MISMATCH, message);
  }
  ParameterType type_ = PARAMETER_NOT_SET;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<uint8_t> bytes_;
  std::vector<bool> bools_;
  mutable std::vector<uint8_t> bool_bytes_;
  std::vector<int64_t> ints_;
  std::vector<double> doubles_;
  std::vector<std::string> strings_;

  template <class V>
  friend struct ParameterGet;
};

template <class V>
struct ParameterGet;
template <>
struct ParameterGet<bool> {
  static bool get(const ParameterValue &v) { v.expect(PARAMETER_BOOL); return v.bool_; }
};
template <>
struct ParameterGet<int64_t> {
  static int64_t get(const ParameterValue &v) { v.expect(PARAMETER_INTEGER); return v.int_; }
};
template <>
struct ParameterGet<int> {
  static int get(const ParameterValue &v) { v.expect(PARAMETER_INTEGER); return int(v.int_); }
};
template <>
struct ParameterGet<double> {
  static double get(const ParameterValue &v) { v.expect(PARAMETER_DOUBLE); return v.double_; }
};
template <>
struct ParameterGet<std::string> {
  static std::string get(const ParameterValue &v) { v.expect(PARAMETER_STRING); return v.string_; }
};
template <>
struct ParameterGet<std::vector<uint8_t>> {
  static std::vector<uint8_t> get(const ParameterValue &v) {
    v.expect(PARAMETER_BYTE_ARRAY);
    return v.bytes_;
  }
};
template <>
struct ParameterGet<std::vector<bool>> {
  static std::vector<bool> get(const ParameterValue &v) {
    v.expect(PARAMETER_BOOL_ARRAY);
    return v.bools_;
  }
};
template <>
struct ParameterGet<std::vector<int64_t>> {
  static std::vector<int64_t> get(const ParameterValue &v) {
    v.expect(PARAMETER_INTEGER_ARRAY);
    return v.ints_;
  }
};
template <>
struct ParameterGet<std::vector<double>> {
  static std::vector<double> get(const ParameterValue &v) {
    v.expect(PARAMETER_DOUBLE_ARRAY);
    return v.doubles_;
  }
};
template <>
struct ParameterGet<std::vector<std::string>> {
  static std::vector<std::string> get(const ParameterValue &v) {
    v.expect(PARAMETER_STRING_ARRAY);
    return v.strings_;
  }
};
template <class V>
V ParameterValue::get() const {
  return ParameterGet<V>::get(*this);
}

class Parameter {
 public:
  Parameter() = default;
  Parameter(std::string name, ParameterValue value)
      : name_(std::move(name)), value_(std::move(value)) {}
  template <class V>
  Parameter(std::string name, V value) : name_(std::move(name)), value_(ParameterValue(value)) {}
  const std::string &get_name() const { return name_; }
  ParameterType get_type() const { return value_.get_type(); }
  const ParameterValue &get_parameter_value() const { return value_; }
  template <class V>
  V get_value() const { return value_.get<V>(); }
  bool as_bool() const { return value_.get<bool>(); }
  int64_t as_int() const { return value_.get<int64_t>(); }
  double as_double() const { return value_.get<double>(); }
  std::string as_string() const { return value_.get<std::string>(); }
  std::vector<uint8_t> as_byte_array() const { return value_.get<std::vector<uint8_t>>(); }
  std::vector<bool> as_bool_array() const { return value_.get<std::vector<bool>>(); }
  std::vector<int64_t> as_integer_array() const { return value_.get<std::vector<int64_t>>(); }
  std::vector<double> as_double_array() const { return value_.get<std::vector<double>>(); }
  std::vector<std::string> as_string_array() const {
    return value_.get<std::vector<std::string>>();
  }

 private:
  std::string name_;
  ParameterValue value_;
};

namespace rcl_interfaces_shim {
struct SetParametersResult {
  bool successful = true;
  std::string reason;
};
}  // namespace rcl_interfaces_shim

class OnSetParametersCallbackHandle {
 public:
  using SharedPtr = std::shared_ptr<OnSetParametersCallbackHandle>;
  using Callback =
      std::function<rcl_interfaces_shim::SetParametersResult(const std::vector<Parameter> &)>;
  OnSetParametersCallbackHandle(roslite_handle node, Callback callback)
      : callback_(std::make_unique<Callback>(std::move(callback))) {
    roslite_handle h = 0;
    detail::check(roslite_parameter_add_on_set_callback(node, &OnSetParametersCallbackHandle::call,
                                                        callback_.get(), &h),
                  "add_on_set_parameters_callback");
    handle_ = detail::Handle(h);
  }
  ~OnSetParametersCallbackHandle() { handle_ = detail::Handle(); }

 private:
  static bool call(void *user, const char *const *names, const roslite_parameter_value *values,
                   size_t count, char *reason, size_t capacity) {
    std::vector<Parameter> parameters;
    for (size_t i = 0; i < count; ++i)
      parameters.emplace_back(names[i], ParameterValue::from_c(values[i]));
    auto result = (*static_cast<Callback *>(user))(parameters);
    if (!result.successful) std::snprintf(reason, capacity + 1, "%s", result.reason.c_str());
    return result.successful;
  }
  std::unique_ptr<Callback> callback_;
  detail::Handle handle_;
};

// ---- services -------------------------------------------------------------------------------

// rmw's request id, as the three-argument service callback receives it.
struct rmw_request_id_shim {
  int64_t sequence_number = 0;
};

enum class FutureReturnCode { SUCCESS, INTERRUPTED, TIMEOUT };

class ServiceBase {
 public:
  virtual ~ServiceBase() = default;
};

template <class S>
class Service : public ServiceBase {
 public:
  using SharedPtr = std::shared_ptr<Service<S>>;
  using Request = typename S::Request;
  using Response = typename S::Response;
  using Callback = std::function<void(std::shared_ptr<Request>, std::shared_ptr<Response>)>;

  Service(roslite_handle node, roslite_handle group, const std::string &name, const QoS &qos,
          Callback callback)
      : name_(name), state_(std::make_unique<State>()) {
    state_->callback = std::move(callback);
    detail::register_type<S>();
    roslite_service_type type{roslite::service_traits<S>::type_name(),
                              roslite::message_traits<Request>::type_hash(),
                              roslite::message_traits<Response>::type_hash()};
    roslite_handle h = 0;
    detail::check(roslite_service_create_in(node, group, name.c_str(), &type,
                                            &qos.get_roslite_qos(), &Service::serve, state_.get(),
                                            &h),
                  "create_service");
    handle_ = detail::Handle(h);
  }
  ~Service() override { handle_ = detail::Handle(); }
  const char *get_service_name() const { return name_.c_str(); }

  // Publishes this server's calls on `<service>/_service_event` (rclcpp's
  // configure_introspection). The events are stamped by the node's clock, the one rclcpp
  // users pass (`this->get_clock()`); `qos` is the event publisher's.
  template <class ClockPtr>
  void configure_introspection(ClockPtr /*clock*/, const QoS &qos,
                               rcl_service_introspection_state_t state) {
    detail::check(roslite_service_configure_introspection(handle_.get(), &qos.get_roslite_qos(),
                                                          static_cast<int32_t>(state)),
                  "configure_introspection");
  }

 private:
  struct State {
    Callback callback;
  };
  static void serve(void *user, const uint8_t *cdr, size_t length, roslite_handle responder) {
    State *state = static_cast<State *>(user);
    auto request = std::make_shared<Request>();
    if (!roslite::decode(cdr, length, *request)) {
      roslite_release(responder);
      return;
    }
    auto response = std::make_shared<Response>();
    state->callback(request, response);
    std::vector<uint8_t> bytes = detail::encode(*response);
    roslite_service_send_response(responder, bytes.data(), bytes.size());
  }
  std::string name_;
  std::unique_ptr<State> state_;
  detail::Handle handle_;
};

class ClientBase {
 public:
  virtual ~ClientBase() = default;
};

template <class S>
class Client : public ClientBase {
 public:
  using SharedPtr = std::shared_ptr<Client<S>>;
  using Request = typename S::Request;
  using Response = typename S::Response;
  using SharedRequest = std::shared_ptr<Request>;
  using SharedResponse = std::shared_ptr<Response>;
  using Promise = detail::Promise<SharedResponse>;
  using SharedFuture = detail::SharedFuture<SharedResponse>;
  using CallbackType = std::function<void(SharedFuture)>;

  // What async_send_request returns: a future for the response and the request's id.
  struct FutureAndRequestId {
    detail::Future<SharedResponse> future;
    int64_t request_id;
    SharedResponse get() { return future.get(); }
    bool valid() const { return future.valid(); }
    void wait() const { future.wait(); }
    template <class Rep, class Period>
    std::future_status wait_for(const std::chrono::duration<Rep, Period> &d) const {
      return future.wait_for(d);
    }
    SharedFuture share() { return future.share(); }
  };
  struct SharedFutureAndRequestId {
    SharedFuture future;
    int64_t request_id;
    SharedResponse get() const { return future.get(); }
    template <class Rep, class Period>
    std::future_status wait_for(const std::chrono::duration<Rep, Period> &d) const {
      return future.wait_for(d);
    }
  };

  Client(roslite_handle node, const std::string &name) : node_(node), name_(name) {
    detail::register_type<S>();
    roslite_service_type type{roslite::service_traits<S>::type_name(),
                              roslite::message_traits<Request>::type_hash(),
                              roslite::message_traits<Response>::type_hash()};
    roslite_handle h = 0;
    detail::check(roslite_client_create(node, name.c_str(), &type, &h), "create_client");
    handle_ = detail::Handle(h);
  }
  ~Client() override { handle_ = detail::Handle(); }

  const char *get_service_name() const { return name_.c_str(); }

  // Publishes this client's calls on `<service>/_service_event` (rclcpp's
  // configure_introspection), stamped by the node's clock.
  template <class ClockPtr>
  void configure_introspection(ClockPtr /*clock*/, const QoS &qos,
                               rcl_service_introspection_state_t state) {
    detail::check(roslite_client_configure_introspection(handle_.get(), &qos.get_roslite_qos(),
                                                         static_cast<int32_t>(state)),
                  "configure_introspection");
  }

  template <class Rep = int64_t, class Period = std::milli>
  bool wait_for_service(std::chrono::duration<Rep, Period> timeout =
                            std::chrono::duration<Rep, Period>(-1)) {
    int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
    roslite_status s = roslite_client_wait_for_service(handle_.get(), ns);
    if (s == ROSLITE_TIMEOUT) return false;
    detail::check(s, "wait_for_service");
    return true;
  }
  bool service_is_ready() { return wait_for_service(std::chrono::nanoseconds(0)); }

  FutureAndRequestId async_send_request(SharedRequest request) {
    auto call = std::make_unique<Call>();
    detail::Future<SharedResponse> future = call->promise.get_future();
    int64_t id = send(*request, std::move(call));
    return FutureAndRequestId{std::move(future), id};
  }

  template <class F>
  SharedFutureAndRequestId async_send_request(SharedRequest request, F &&callback) {
    auto call = std::make_unique<Call>();
    SharedFuture future = call->promise.get_future().share();
    call->shared = future;
    call->callback = CallbackType(std::forward<F>(callback));
    int64_t id = send(*request, std::move(call));
    return SharedFutureAndRequestId{future, id};
  }

  bool remove_pending_request(int64_t request_id) {
    if (roslite_client_remove_pending_request(handle_.get(), request_id) != ROSLITE_OK)
      return false;
    detail::Lock lock(mutex_);
    calls_.erase(request_id);
    return true;
  }
  bool remove_pending_request(const FutureAndRequestId &f) {
    return remove_pending_request(f.request_id);
  }
  size_t prune_pending_requests() {
    detail::Lock lock(mutex_);
    size_t n = calls_.size();
    for (auto &entry : calls_) roslite_client_remove_pending_request(handle_.get(), entry.first);
    calls_.clear();
    return n;
  }

 private:
  struct Call {
    Promise promise;
    SharedFuture shared;
    CallbackType callback;
  };
  struct Pending {
    Client *client;
    int64_t id;
  };

  int64_t send(const Request &request, std::unique_ptr<Call> call) {
    std::vector<uint8_t> bytes = detail::encode(request);
#if defined(__wasi__)
    call->promise.set_pump(pump());
#endif
    auto pending = new Pending{this, 0};
    detail::Lock lock(mutex_);
    int64_t id = 0;
    roslite_status s = roslite_client_send_request(handle_.get(), bytes.data(), bytes.size(),
                                                   &Client::reply, pending, &id);
    if (s != ROSLITE_OK) {
      delete pending;
      detail::check(s, "async_send_request");
    }
    pending->id = id;
    calls_[id] = std::move(call);
    return id;
  }

  static void reply(void *user, roslite_status status, const uint8_t *cdr, size_t length) {
    std::unique_ptr<Pending> pending(static_cast<Pending *>(user));
    Client *self = pending->client;
    std::unique_ptr<Call> call;
    {
      detail::Lock lock(self->mutex_);  // waits until send() noted the call
      auto it = self->calls_.find(pending->id);
      if (it == self->calls_.end()) return;
      call = std::move(it->second);
      self->calls_.erase(it);
    }
    auto response = std::make_shared<Response>();
    if (status != ROSLITE_OK) {
      fail(call->promise, status, "service call to " + self->name_ + " failed");
    } else if (!roslite::decode(cdr, length, *response)) {
      fail(call->promise, ROSLITE_BAD_MESSAGE, "malformed response from " + self->name_);
    } else {
      call->promise.set_value(response);
    }
    if (call->callback) call->callback(call->shared);
  }

  static void fail(Promise &promise, roslite_status status, const std::string &message) {
#if defined(__wasi__)
    promise.set_error(status, message);
#else
    promise.set_exception(std::make_exception_ptr(exceptions::RCLError(status, message)));
#endif
  }

#if defined(__wasi__)
  // What waiting for a response runs on the guest's one thread: the client's node on an
  // executor of its own (a node may be in several), made at the first wait.
  std::function<void(std::chrono::nanoseconds)> pump() {
    std::shared_ptr<detail::Handle> executor = pump_executor_;
    if (!executor) executor = pump_executor_ = std::make_shared<detail::Handle>();
    roslite_handle node = node_;
    return [executor, node](std::chrono::nanoseconds most) {
      if (!*executor) {
        roslite_handle h = 0;
        detail::check(roslite_executor_create(detail::context_or_init(), &h),
                      "creating the executor a future waits on");
        *executor = detail::Handle(h);
        detail::check(roslite_executor_add_node(h, node), "creating the executor a future waits on");
      }
      bool running = false;
      if (roslite_context_ok(detail::context_or_init(), &running) != ROSLITE_OK || !running)
        detail::raise_error(ROSLITE_SHUTDOWN, "the context was shut down while waiting for a "
                                              "response");
      roslite_executor_spin_once(executor->get(), most.count(), nullptr);
    };
  }
  std::shared_ptr<detail::Handle> pump_executor_;
#endif

  roslite_handle node_;
  std::string name_;
  detail::Mutex mutex_;
  std::map<int64_t, std::unique_ptr<Call>> calls_;
  detail::Handle handle_;
};

namespace detail {
template <class S, class F>
typename Service<S>::Callback adapt_service(F f) {
  using Req = std::shared_ptr<typename S::Request>;
  using Res = std::shared_ptr<typename S::Response>;
  if constexpr (std::is_invocable_v<F &, Req, Res>) {
    return [f](Req req, Res res) mutable { f(req, res); };
  } else if constexpr (std::is_invocable_v<F &, std::shared_ptr<rmw_request_id_shim>, Req, Res>) {
    return [f](Req req, Res res) mutable {
      f(std::make_shared<rmw_request_id_shim>(), req, res);
    };
  } else {
    static_assert(std::is_invocable_v<F &, Req, Res>,
                  "a service callback takes (std::shared_ptr<Request>, std::shared_ptr<Response>)"
                  " or (std::shared_ptr<rmw_request_id_t>, request, response)");
    return {};
  }
}
}  // namespace detail

// ---- node -----------------------------------------------------------------------------------

class NodeOptions {
 public:
  NodeOptions() = default;
  NodeOptions &allow_undeclared_parameters(bool) { return *this; }
  NodeOptions &automatically_declare_parameters_from_overrides(bool) { return *this; }
  // roslite delivers within a process without being asked to.
  NodeOptions &use_intra_process_comms(bool) { return *this; }
};

class Node;
namespace node_interfaces {
// What get_node_base_interface() gives and executors take: here the node itself.
using NodeBaseInterface = ::rclcpp::Node;
}  // namespace node_interfaces

class Node : public std::enable_shared_from_this<Node> {
 public:
  using SharedPtr = std::shared_ptr<Node>;
  using OnSetParametersCallbackType = OnSetParametersCallbackHandle::Callback;

  template <class... Args>
  static SharedPtr make_shared(Args &&...args) {
    return std::make_shared<Node>(std::forward<Args>(args)...);
  }

  explicit Node(const std::string &name, const NodeOptions &options = NodeOptions())
      : Node(name, "", options) {}
  Node(const std::string &name, const std::string &namespace_,
       const NodeOptions & = NodeOptions()) {
    roslite_handle h = 0;
    detail::check(roslite_node_create(detail::context_or_init(), name.c_str(), namespace_.c_str(),
                                      &h),
                  "creating node");
    handle_ = detail::Handle(h);
    logger_ = Logger(text(roslite_node_logger_name));
    name_ = name;
    clock_ = std::make_shared<Clock>(handle_);
  }
  virtual ~Node() = default;

  const char *get_name() const { return name_.c_str(); }
  std::string get_fully_qualified_name() const { return text(roslite_node_fully_qualified_name); }
  Logger get_logger() const { return logger_; }
  Clock::SharedPtr get_clock() const { return clock_; }
  Time now() const { return clock_->now(); }
  roslite_handle get_roslite_handle() const { return handle_.get(); }
  // For `rclcpp::spin(node->get_node_base_interface())` and `executor.add_node(...)`, the way
  // lifecycle nodes are spun.
  SharedPtr get_node_base_interface() { return shared_from_this(); }

  template <class T>
  typename Publisher<T>::SharedPtr create_publisher(const std::string &topic, const QoS &qos,
                                                    const PublisherOptions & = PublisherOptions()) {
    return std::make_shared<Publisher<T>>(handle_.get(), topic, qos);
  }

  template <class T, class F>
  typename Subscription<T>::SharedPtr create_subscription(
      const std::string &topic, const QoS &qos, F &&callback,
      const SubscriptionOptions &options = SubscriptionOptions()) {
    return std::make_shared<Subscription<T>>(
        handle_.get(), detail::group_handle(options.callback_group), topic, qos,
        detail::adapt_subscription<T>(std::forward<F>(callback)), options.content_filter_options);
  }

  template <class Rep, class Period, class F>
  TimerBase::SharedPtr create_wall_timer(std::chrono::duration<Rep, Period> period, F &&callback,
                                         CallbackGroup::SharedPtr group = nullptr) {
    return make_timer(period, std::forward<F>(callback), group, true);
  }
  template <class Rep, class Period, class F>
  TimerBase::SharedPtr create_timer(std::chrono::duration<Rep, Period> period, F &&callback,
                                    CallbackGroup::SharedPtr group = nullptr) {
    return make_timer(period, std::forward<F>(callback), group, false);
  }

  CallbackGroup::SharedPtr create_callback_group(CallbackGroupType type,
                                                 bool = true) {
    roslite_handle h = 0;
    detail::check(roslite_callback_group_create(
                      handle_.get(),
                      type == CallbackGroupType::Reentrant ? ROSLITE_CALLBACK_GROUP_REENTRANT
                                                           : ROSLITE_CALLBACK_GROUP_MUTUALLY_EXCLUSIVE,
                      &h),
                  "create_callback_group");
    return std::make_shared<CallbackGroup>(h, type);
  }

  template <class S, class F>
  typename Service<S>::SharedPtr create_service(const std::string &name, F &&callback,
                                                const QoS &qos = ServicesQoS(),
                                                CallbackGroup::SharedPtr group = nullptr) {
    return std::make_shared<Service<S>>(handle_.get(), detail::group_handle(group), name, qos,
                                        detail::adapt_service<S>(std::forward<F>(callback)));
  }

  template <class S>
  typename Client<S>::SharedPtr create_client(const std::string &name,
                                              const QoS & = ServicesQoS(),
                                              CallbackGroup::SharedPtr = nullptr) {
    return std::make_shared<Client<S>>(handle_.get(), name);
  }

  // Parameters.
  const ParameterValue &declare_parameter(const std::string &name,
                                          const ParameterValue &default_value) {
    std::vector<const char *> keep;
    roslite_parameter_value in = default_value.to_c(keep), out{};
    detail::check(roslite_parameter_declare(handle_.get(), name.c_str(), &in, &out),
                  "declare_parameter");
    declared_[name] = ParameterValue::from_c(out);
    roslite_parameter_value_fini(&out);
    return declared_[name];
  }
  template <class V>
  V declare_parameter(const std::string &name, const V &default_value) {
    return declare_parameter(name, ParameterValue(default_value)).template get<V>();
  }
  Parameter get_parameter(const std::string &name) const {
    roslite_parameter_value out{};
    detail::check(roslite_parameter_get(handle_.get(), name.c_str(), &out), "get_parameter");
    Parameter p(name, ParameterValue::from_c(out));
    roslite_parameter_value_fini(&out);
    return p;
  }
  template <class V>
  bool get_parameter(const std::string &name, V &value) const {
    roslite_parameter_value out{};
    if (roslite_parameter_get(handle_.get(), name.c_str(), &out) != ROSLITE_OK) return false;
    ParameterValue v = ParameterValue::from_c(out);
    roslite_parameter_value_fini(&out);
#if defined(__wasi__)
    // No catch on Wasm (a throw ends the node): the type is compared before get throws.
    if (v.get_type() != ParameterValue(V{}).get_type()) return false;
    value = v.get<V>();
    return true;
#else
    try {
      value = v.get<V>();
      return true;
    } catch (const exceptions::RCLError &) {
      return false;
    }
#endif
  }
  bool has_parameter(const std::string &name) const {
    roslite_parameter_value out{};
    bool found = roslite_parameter_get(handle_.get(), name.c_str(), &out) == ROSLITE_OK;
    roslite_parameter_value_fini(&out);
    return found;
  }
  rcl_interfaces_shim::SetParametersResult set_parameter(const Parameter &parameter) {
    std::vector<const char *> keep;
    roslite_parameter_value v = parameter.get_parameter_value().to_c(keep);
    rcl_interfaces_shim::SetParametersResult result;
    if (roslite_parameter_set(handle_.get(), parameter.get_name().c_str(), &v) != ROSLITE_OK) {
      result.successful = false;
      result.reason = roslite_last_error();
    }
    return result;
  }
  std::vector<rcl_interfaces_shim::SetParametersResult> set_parameters(
      const std::vector<Parameter> &parameters) {
    std::vector<rcl_interfaces_shim::SetParametersResult> results;
    for (const auto &p : parameters) results.push_back(set_parameter(p));
    return results;
  }
  OnSetParametersCallbackHandle::SharedPtr add_on_set_parameters_callback(
      OnSetParametersCallbackType callback) {
    return std::make_shared<OnSetParametersCallbackHandle>(handle_.get(), std::move(callback));
  }

  size_t count_publishers(const std::string &topic) const {
    size_t n = 0;
    detail::check(roslite_node_count_publishers(handle_.get(), topic.c_str(), &n),
                  "count_publishers");
    return n;
  }
  size_t count_subscribers(const std::string &topic) const {
    size_t n = 0;
    detail::check(roslite_node_count_subscribers(handle_.get(), topic.c_str(), &n),
                  "count_subscribers");
    return n;
  }

 private:
  template <class Rep, class Period, class F>
  TimerBase::SharedPtr make_timer(std::chrono::duration<Rep, Period> period, F &&callback,
                                  const CallbackGroup::SharedPtr &group, bool wall) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(period);
    std::function<void()> call;
    if constexpr (std::is_invocable_v<F &>) {
      call = std::forward<F>(callback);
      return std::make_shared<TimerBase>(handle_.get(), detail::group_handle(group), ns,
                                         std::move(call), wall);
    } else {
      // A callback taking the timer: it gets the timer once it exists.
      auto slot = std::make_shared<std::weak_ptr<TimerBase>>();
      auto f = std::forward<F>(callback);
      call = [f, slot]() mutable {
        if (auto timer = slot->lock()) f(*timer);
      };
      auto timer = std::make_shared<TimerBase>(handle_.get(), detail::group_handle(group), ns,
                                               std::move(call), wall);
      *slot = timer;
      return timer;
    }
  }

  std::string text(roslite_status (*get)(roslite_handle, char *, size_t, size_t *)) const {
    size_t length = 0;
    get(handle_.get(), nullptr, 0, &length);
    std::string out(length + 1, '\0');
    detail::check(get(handle_.get(), &out[0], out.size(), &length), "reading the node's name");
    out.resize(length);
    return out;
  }

  detail::Handle handle_;
  std::string name_;
  Logger logger_;
  Clock::SharedPtr clock_;
  std::map<std::string, ParameterValue> declared_;
};

// ---- executors ------------------------------------------------------------------------------

class Executor {
 public:
  using SharedPtr = std::shared_ptr<Executor>;
  explicit Executor(size_t threads = 1) : threads_(threads) {
    roslite_handle h = 0;
    detail::check(roslite_executor_create(detail::context_or_init(), &h), "creating an executor");
    handle_ = detail::Handle(h);
  }
  virtual ~Executor() = default;
  void add_node(const Node::SharedPtr &node, bool = true) {
    detail::check(roslite_executor_add_node(handle_.get(), node->get_roslite_handle()), "add_node");
    nodes_.push_back(node);
  }
  void remove_node(const Node::SharedPtr &, bool = true) {}
  void spin() {
    if (threads_ > 1)
      detail::check(roslite_executor_spin_threads(handle_.get(), threads_), "spin");
    else
      detail::check(roslite_executor_spin(handle_.get()), "spin");
  }
  void spin_some(std::chrono::nanoseconds = std::chrono::nanoseconds(0)) {
    detail::check(roslite_executor_spin_some(handle_.get()), "spin_some");
  }
  void spin_all(std::chrono::nanoseconds) { spin_some(); }
  void spin_once(std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) {
    detail::check(roslite_executor_spin_once(handle_.get(), timeout.count(), nullptr), "spin_once");
  }
  void cancel() { shutdown(); }

  template <class Future, class Rep = int64_t, class Period = std::milli>
  FutureReturnCode spin_until_future_complete(
      const Future &future,
      std::chrono::duration<Rep, Period> timeout = std::chrono::duration<Rep, Period>(-1)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    bool forever = timeout < std::chrono::duration<Rep, Period>(0);
    while (ok()) {
      if (future.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
        return FutureReturnCode::SUCCESS;
      auto left = forever ? std::chrono::milliseconds(10)
                          : std::min<std::chrono::nanoseconds>(
                                std::chrono::milliseconds(10),
                                deadline - std::chrono::steady_clock::now());
      if (!forever && left <= std::chrono::nanoseconds(0)) return FutureReturnCode::TIMEOUT;
      roslite_executor_spin_once(handle_.get(), left.count(), nullptr);
    }
    return FutureReturnCode::INTERRUPTED;
  }

 private:
  detail::Handle handle_;
  size_t threads_;
  std::vector<Node::SharedPtr> nodes_;
};

struct ExecutorOptions {};

namespace executors {
class SingleThreadedExecutor : public Executor {
 public:
  using SharedPtr = std::shared_ptr<SingleThreadedExecutor>;
  explicit SingleThreadedExecutor(const ExecutorOptions & = ExecutorOptions()) : Executor(1) {}
};
class MultiThreadedExecutor : public Executor {
 public:
  using SharedPtr = std::shared_ptr<MultiThreadedExecutor>;
  explicit MultiThreadedExecutor(const ExecutorOptions & = ExecutorOptions(),
                                 size_t number_of_threads = 0, bool = false,
                                 std::chrono::nanoseconds = std::chrono::nanoseconds(-1))
      : Executor(number_of_threads ? number_of_threads : default_threads()) {}

 private:
  static size_t default_threads() {
#if defined(__wasi__)
    return 2;  // a guest has one thread; the host runs the executor's work on it
#else
    return std::max<size_t>(2, std::thread::hardware_concurrency());
#endif
  }
};
}  // namespace executors

inline void spin(const Node::SharedPtr &node) {
  executors::SingleThreadedExecutor executor;
  executor.add_node(node);
  executor.spin();
}
inline void spin_some(const Node::SharedPtr &node) {
  executors::SingleThreadedExecutor executor;
  executor.add_node(node);
  executor.spin_some();
}
template <class Future, class Rep = int64_t, class Period = std::milli>
FutureReturnCode spin_until_future_complete(
    const Node::SharedPtr &node, const Future &future,
    std::chrono::duration<Rep, Period> timeout = std::chrono::duration<Rep, Period>(-1)) {
  executors::SingleThreadedExecutor executor;
  executor.add_node(node);
  return executor.spin_until_future_complete(future, timeout);
}

}  // namespace rclcpp

// rclcpp sources name rcl_interfaces' result and rmw's request id; these stand in for them.
namespace rcl_interfaces {
namespace msg {
using SetParametersResult = ::rclcpp::rcl_interfaces_shim::SetParametersResult;
}  // namespace msg
}  // namespace rcl_interfaces
using rmw_request_id_t = ::rclcpp::rmw_request_id_shim;

#endif  // ROSLITE_RCLCPP_DETAIL_ENTITIES_HPP
