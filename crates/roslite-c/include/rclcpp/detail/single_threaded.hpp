// What rclcpp's API needs of <mutex> and <future> on a target without threads: WebAssembly
// nodes (wasm32-wasip1), whose libc++ has no std::thread, std::mutex or <future>. A guest runs
// on one thread and every callback runs inside an executor call on it, so
// - a mutex has nothing to exclude (Mutex and Lock do nothing);
// - a future is completed by a callback that only runs while an executor spins: waiting for
//   one spins the executor the future came with (its `pump`) until it is ready, where a
//   threaded program would block while another thread spins.
// Errors a future carries are a status and a text, re-thrown by get() as rclcpp's RCLError.
#ifndef ROSLITE_RCLCPP_DETAIL_SINGLE_THREADED_HPP
#define ROSLITE_RCLCPP_DETAIL_SINGLE_THREADED_HPP

#include <roslite/roslite.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <utility>

// rclcpp code compares wait_for's result with std::future_status, which wasm32's libc++
// declares only in <future> (unavailable without threads). In libc++'s own namespace, where
// <future> would have put it.
_LIBCPP_BEGIN_NAMESPACE_STD
enum class future_status { ready, timeout, deferred };
_LIBCPP_END_NAMESPACE_STD

namespace rclcpp {
namespace detail {

class Mutex {
 public:
  void lock() {}
  void unlock() {}
  bool try_lock() { return true; }
};

class Lock {
 public:
  explicit Lock(Mutex &) {}
  Lock(const Lock &) = delete;
  Lock &operator=(const Lock &) = delete;
};

// Throws what a future failed with (defined by rclcpp.hpp, where RCLError is).
[[noreturn]] inline void raise_error(roslite_status status, const std::string &message);

template <class T>
struct FutureState {
  bool ready = false;
  T value{};
  roslite_status error_status = ROSLITE_OK;
  std::string error_message;
  // Runs callbacks once, for at most the time given; set by whoever completes the future.
  std::function<void(std::chrono::nanoseconds)> pump;

  void wait() {
    while (!ready) {
      if (!pump) {
        std::fprintf(stderr,
                     "rclcpp: waiting for a future nothing can complete on this thread; spin "
                     "with rclcpp::spin_until_future_complete instead\n");
        std::abort();
      }
      pump(std::chrono::milliseconds(10));
    }
  }
  std::future_status wait_for(std::chrono::nanoseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    // A zero timeout only asks: rclcpp's spin_until_future_complete polls so, and runs the
    // executor itself in between.
    while (!ready && timeout > std::chrono::nanoseconds(0) && pump) {
      auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::nanoseconds(0)) break;
      pump(std::chrono::duration_cast<std::chrono::nanoseconds>(left));
    }
    return ready ? std::future_status::ready : std::future_status::timeout;
  }
  const T &get() {
    wait();
    if (error_status != ROSLITE_OK) raise_error(error_status, error_message);
    return value;
  }
};

template <class T>
class SharedFuture {
 public:
  SharedFuture() = default;
  explicit SharedFuture(std::shared_ptr<FutureState<T>> state) : state_(std::move(state)) {}
  const T &get() const { return state_->get(); }
  bool valid() const { return state_ != nullptr; }
  void wait() const { state_->wait(); }
  template <class Rep, class Period>
  std::future_status wait_for(const std::chrono::duration<Rep, Period> &d) const {
    return state_->wait_for(std::chrono::duration_cast<std::chrono::nanoseconds>(d));
  }

 private:
  std::shared_ptr<FutureState<T>> state_;
};

template <class T>
class Future {
 public:
  Future() = default;
  explicit Future(std::shared_ptr<FutureState<T>> state) : state_(std::move(state)) {}
  Future(Future &&) = default;
  Future &operator=(Future &&) = default;
  T get() {
    T value = state_->get();
    state_.reset();  // as std::future: get() once
    return value;
  }
  bool valid() const { return state_ != nullptr; }
  void wait() const { state_->wait(); }
  template <class Rep, class Period>
  std::future_status wait_for(const std::chrono::duration<Rep, Period> &d) const {
    return state_->wait_for(std::chrono::duration_cast<std::chrono::nanoseconds>(d));
  }
  SharedFuture<T> share() { return SharedFuture<T>(std::move(state_)); }

 private:
  std::shared_ptr<FutureState<T>> state_;
};

template <class T>
class Promise {
 public:
  Promise() : state_(std::make_shared<FutureState<T>>()) {}
  Future<T> get_future() { return Future<T>(state_); }
  void set_value(T value) {
    state_->value = std::move(value);
    state_->ready = true;
  }
  void set_error(roslite_status status, std::string message) {
    state_->error_status = status;
    state_->error_message = std::move(message);
    state_->ready = true;
  }
  void set_pump(std::function<void(std::chrono::nanoseconds)> pump) {
    state_->pump = std::move(pump);
  }

 private:
  std::shared_ptr<FutureState<T>> state_;
};

}  // namespace detail
}  // namespace rclcpp

#endif  // ROSLITE_RCLCPP_DETAIL_SINGLE_THREADED_HPP
