// The mROS 2 API (mros2::init, mros2::Node::create_node, create_publisher/create_subscription,
// mros2::spin) over roslite's C ABI, header-only, so that applications written for mROS 2 (on
// POSIX: mROS 2-POSIX's workspace applications) build unchanged and run on roslite.
//
// As in mROS 2, subscription callbacks run without the application spinning (here on a
// thread roslite starts at init), take a pointer to the message, and publishers and
// subscribers live for the whole program. Unlike mROS 2: any number of them, any message
// size, and the QoS depth honoured (reliable, volatile, keep last that many).
//
// Message types come from `roslite interface generate --lang cpp` (std_msgs/msg/string.hpp
// and so on, with the CDR runtime roslite/cdr.hpp).
//
// roslite extensions (mROS 2 has neither; an application that uses them does not build on
// mROS 2):
// - services, client side: `mros2::Node::create_client<S>(service_name)` returns a
//   `mros2::Client<S>` with `wait_for_service(timeout_ms)` and `async_send_request(request)`,
//   which sends and returns at once (fire and forget, as rclcpp's async_send_request whose
//   future is dropped), or `async_send_request(request, callback)` whose callback takes a
//   `S::Response *` (null when no response came: the context shut down) and runs on the thread
//   that received the reply;
// - a subscription callback may take `(T *, const roslite_message_info *)`: the message's
//   publication sequence number and source/receive times (CLOCK_MONOTONIC nanoseconds).
//
// In a WebAssembly node (__wasi__) there is no thread for the callbacks: they run while the
// application is in osDelay, mros2::spin or (roslite extension) mros2::spin_until(deadline_ns)
// (see cmsis_os.h), on its one thread.
#ifndef ROSLITE_MROS2_H
#define ROSLITE_MROS2_H

#include <roslite/cdr.hpp>
#include <roslite/roslite.h>

#include "mros2/logging.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cmsis_os.h"

#if !defined(__wasi__)
#include <mutex>
#include <thread>
#endif

namespace mros2 {

namespace detail {
#if defined(__wasi__)
// One thread: nothing to exclude.
struct Mutex {
  void lock() {}
  void unlock() {}
};
struct Lock {
  explicit Lock(Mutex &) {}
};
#else
using Mutex = std::mutex;
using Lock = std::lock_guard<std::mutex>;
#endif

[[noreturn]] inline void fail(const char *what) {
  std::fprintf(stderr, "[MROS2LIB] ERROR : %s: %s\n", what, roslite_last_error());
  std::abort();
}
inline void check(roslite_status status, const char *what) {
  if (status != ROSLITE_OK) fail(what);
}
// Hands roslite the definition of a generated type it does not ship (nothing for the rest).
template <class T>
void register_type() {
  if (const char *definition = roslite::type_definition<T>::text())
    check(roslite_type_register(definition), "registering the definition of a message type");
}

// What mros2::init sets up: the context, and the thread that runs every callback.
struct Runtime {
  Mutex mutex;
  roslite_handle context = 0;
  roslite_handle executor = 0;
#if !defined(__wasi__)
  std::thread spinner;
#endif
  // Everything the application created, kept for the program's life as mROS 2 keeps it.
  std::vector<std::shared_ptr<void>> kept;
};
inline Runtime &runtime() {
  static Runtime r;
  return r;
}
inline roslite_handle context() {
  Runtime &r = runtime();
  if (!r.context) fail("mros2::init was not called");
  return r.context;
}
}  // namespace detail

inline void init(int argc, char **argv) {
  detail::Runtime &r = detail::runtime();
  detail::Lock lock(r.mutex);
  if (r.context) return;
  detail::check(roslite_context_init(argv ? argc : 0, argv, &r.context), "mros2::init");
  detail::check(roslite_install_signal_handlers(), "mros2::init");
  detail::check(roslite_executor_create(r.context, &r.executor), "mros2::init");
#if defined(__wasi__)
  roslite_mros2_executor() = r.executor;  // osDelay runs it
#else
  roslite_mros2_context() = r.context;  // osDelay ends the process once it is shut down
  roslite_handle executor = r.executor;
  r.spinner = std::thread([executor] { roslite_executor_spin(executor); });
  r.spinner.detach();
#endif
}

// Blocks until the program is interrupted (SIGINT, SIGTERM): callbacks run meanwhile.
inline void spin() {
  roslite_handle context = detail::context();
#if defined(__wasi__)
  // The callbacks run here, on the one thread, until the context is shut down.
  (void)context;
  detail::check(roslite_executor_spin(detail::runtime().executor), "mros2::spin");
#else
  bool running = true;
  while (roslite_context_ok(context, &running) == ROSLITE_OK && running) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
#endif
}

#if defined(__wasi__)
// roslite extension, WebAssembly nodes only: runs the callbacks (the mROS 2 executor) until
// CLOCK_MONOTONIC reads `deadline_ns`, to the nanosecond (osDelay counts whole milliseconds
// from its call), for a periodic loop in main that must keep its callbacks coming while it
// waits; with the deadline already past it runs what is ready and returns. True while the
// context runs; false, at once, once it is shut down (SIGINT, SIGTERM, or the host stopping
// its nodes).
inline bool spin_until(uint64_t deadline_ns) {
  roslite_handle context = detail::context();
  bool running = false;
  if (roslite_context_ok(context, &running) != ROSLITE_OK || !running) return false;
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  uint64_t now_ns = uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
  roslite_handle executor = detail::runtime().executor;
  roslite_status s = deadline_ns > now_ns
                         ? roslite_executor_spin_for(executor, int64_t(deadline_ns - now_ns))
                         : roslite_executor_spin_some(executor);
  if (s == ROSLITE_SHUTDOWN) return false;
  detail::check(s, "mros2::spin_until");
  return roslite_context_ok(context, &running) == ROSLITE_OK && running;
}
#endif

class Publisher {
 public:
  Publisher() = default;
  std::string topic_name;

  template <class T>
  void publish(const T &msg) {
    if (!handle_) detail::fail("publish on a publisher that was never created");
    std::vector<uint8_t> bytes;
    if (!roslite::encode(msg, bytes)) {
      MROS2_ERROR("cannot encode a %s (a bound exceeded, or a string that is not UTF-8)",
                  roslite::message_traits<T>::type_name());
      return;
    }
    detail::check(roslite_publish(*handle_, bytes.data(), bytes.size()), "publish");
  }

 private:
  friend class Node;
  std::shared_ptr<roslite_handle> handle_;
};

class Subscriber {
 public:
  Subscriber() = default;
  std::string topic_name;

 private:
  friend class Node;
  std::shared_ptr<void> state_;
};

// roslite extension: a service client (see the top of this file).
template <class S>
class Client {
 public:
  using Request = typename S::Request;
  using Response = typename S::Response;
  Client() = default;
  std::string service_name;

  // Waits up to `timeout_ms` (negative: for ever) for a server; false if none came.
  bool wait_for_service(int64_t timeout_ms) {
    if (!handle_) detail::fail("wait_for_service on a client that was never created");
    int64_t ns = timeout_ms < 0 ? -1 : timeout_ms * 1000000;
    roslite_status s = roslite_client_wait_for_service(*handle_, ns);
    if (s == ROSLITE_TIMEOUT || s == ROSLITE_SHUTDOWN) return false;
    detail::check(s, "wait_for_service");
    return true;
  }

  // Sends `request` and returns at once; the response is dropped. False (with an error
  // logged) if it could not be sent.
  bool async_send_request(const Request &request) {
    return async_send_request(request, [](Response *) {});
  }

  // Sends `request` and returns at once; `callback(Response *)` runs once on the thread that
  // received the reply (with nullptr when none will come: the context shut down).
  template <class F>
  bool async_send_request(const Request &request, F callback) {
    static_assert(std::is_invocable_v<F &, Response *>,
                  "a response callback takes a pointer to the response");
    if (!handle_) detail::fail("async_send_request on a client that was never created");
    std::vector<uint8_t> bytes;
    if (!roslite::encode(request, bytes)) {
      MROS2_ERROR("cannot encode a %s request", roslite::service_traits<S>::type_name());
      return false;
    }
    auto pending = new F(std::move(callback));
    auto reply = [](void *user, roslite_status status, const uint8_t *cdr, size_t length) {
      std::unique_ptr<F> f(static_cast<F *>(user));
      Response response{};
      if (status == ROSLITE_OK && roslite::decode(cdr, length, response)) {
        (*f)(&response);
      } else {
        (*f)(nullptr);
      }
    };
    roslite_status s =
        roslite_client_send_request(*handle_, bytes.data(), bytes.size(), reply, pending, nullptr);
    if (s != ROSLITE_OK) {
      delete pending;
      MROS2_ERROR("%s: cannot send a request: %s", service_name.c_str(), roslite_last_error());
      return false;
    }
    return true;
  }

 private:
  friend class Node;
  std::shared_ptr<roslite_handle> handle_;
};

class Node {
 public:
  std::string node_name;

  static Node create_node(std::string name = "mros2_node") {
    Node node;
    node.node_name = name;
    detail::check(roslite_node_create(detail::context(), name.c_str(), "", &node.handle_),
                  "create_node");
    detail::Runtime &r = detail::runtime();
    detail::check(roslite_executor_add_node(r.executor, node.handle_), "create_node");
    return node;
  }

  template <class T>
  Publisher create_publisher(std::string topic_name, int qos) {
    detail::register_type<T>();
    roslite_type type{roslite::message_traits<T>::type_name(),
                      roslite::message_traits<T>::type_hash()};
    roslite_qos profile = depth(qos);
    auto handle = std::make_shared<roslite_handle>(0);
    detail::check(roslite_publisher_create(handle_, topic_name.c_str(), &type, &profile,
                                           handle.get()),
                  "create_publisher");
    keep(handle);
    Publisher publisher;
    publisher.topic_name = topic_name;
    publisher.handle_ = handle;
    return publisher;
  }

  // `callback` takes a pointer to the message (mROS 2's `void (*)(T *)`), valid during the call;
  // or (roslite extension) the pointer and the message's info.
  template <class T, class F>
  Subscriber create_subscription(std::string topic_name, int qos, F callback) {
    constexpr bool with_info = std::is_invocable_v<F &, T *, const roslite_message_info *>;
    static_assert(std::is_invocable_v<F &, T *> || with_info,
                  "an mROS 2 subscription callback takes a pointer to the message");
    struct State {
      explicit State(F f) : callback(std::move(f)) {}
      F callback;
      roslite_handle handle = 0;
    };
    auto state = std::make_shared<State>(std::move(callback));
    detail::register_type<T>();
    roslite_type type{roslite::message_traits<T>::type_name(),
                      roslite::message_traits<T>::type_hash()};
    roslite_qos profile = depth(qos);
    auto deliver = [](void *user, const uint8_t *cdr, size_t length,
                      const roslite_message_info *info) {
      T message{};
      if (!roslite::decode(cdr, length, message)) {
        MROS2_WARN("dropped a message that is not a valid %s", roslite::message_traits<T>::type_name());
        return;
      }
      if constexpr (with_info) {
        static_cast<State *>(user)->callback(&message, info);
      } else {
        (void)info;
        static_cast<State *>(user)->callback(&message);
      }
    };
    detail::check(roslite_subscription_create(handle_, topic_name.c_str(), &type, &profile,
                                              deliver, state.get(), &state->handle),
                  "create_subscription");
    keep(state);
    Subscriber subscriber;
    subscriber.topic_name = topic_name;
    subscriber.state_ = state;
    return subscriber;
  }

  // roslite extension: a client of `service_name` (see the top of this file).
  template <class S>
  Client<S> create_client(std::string service_name) {
    detail::register_type<S>();
    roslite_service_type type{roslite::service_traits<S>::type_name(),
                              roslite::message_traits<typename S::Request>::type_hash(),
                              roslite::message_traits<typename S::Response>::type_hash()};
    auto handle = std::make_shared<roslite_handle>(0);
    detail::check(roslite_client_create(handle_, service_name.c_str(), &type, handle.get()),
                  "create_client");
    keep(handle);
    Client<S> client;
    client.service_name = service_name;
    client.handle_ = handle;
    return client;
  }

 private:
  static roslite_qos depth(int qos) {
    roslite_qos profile;
    detail::check(roslite_qos_profile(ROSLITE_QOS_PROFILE_DEFAULT, &profile), "qos");
    profile.depth = qos > 0 ? uint32_t(qos) : 1;
    return profile;
  }
  static void keep(std::shared_ptr<void> thing) {
    detail::Runtime &r = detail::runtime();
    detail::Lock lock(r.mutex);
    r.kept.push_back(std::move(thing));
  }
  roslite_handle handle_ = 0;
};

}  // namespace mros2

#endif  // ROSLITE_MROS2_H
