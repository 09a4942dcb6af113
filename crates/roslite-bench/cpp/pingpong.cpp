// The C++ pair of `roslite bench rtt --api cpp`, on roslite's rclcpp-shaped API: `pingpong
// pong` echoes every std_msgs/UInt8MultiArray from roslite_bench/rtt/ping to
// roslite_bench/rtt/pong; `pingpong ping --count N --warmup W --size B` measures round trips
// in the shape of the Rust pair it is compared with (crates/roslite-bench/src/bench/
// rtt_sweep/api.rs, back to back): reliable keep-last-1 endpoints, the first 8 bytes of the
// payload a little-endian sequence number, the ping node spun on a thread of its own, and each
// ping after the first published by the echo callback of the one before, the time taken first
// thing in that callback. A ping not echoed within 5 s is lost and the next one sent. The ping
// prints `lost N`, `stale N` and one `rtt_ns T` line per measured round trip, then exits.
// ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE and ROSLITE_TRANSPORTS come from the bench.
// `pingpong pong-raw` is the pong without the C++ layer (bytes echoed through the C ABI).
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rclcpp/rclcpp.hpp"
#include "std_msgs/msg/u_int8_multi_array.hpp"

using Msg = std_msgs::msg::UInt8MultiArray;

static const char PING_TOPIC[] = "roslite_bench/rtt/ping";
static const char PONG_TOPIC[] = "roslite_bench/rtt/pong";

static uint64_t now_ns()
{
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

static rclcpp::QoS qos() {return rclcpp::QoS(rclcpp::KeepLast(1)).reliable();}

static int pong()
{
  auto node = rclcpp::Node::make_shared("roslite_bench_rtt_cpp_pong");
  auto publisher = node->create_publisher<Msg>(PONG_TOPIC, qos());
  auto subscription = node->create_subscription<Msg>(
    PING_TOPIC, qos(), [publisher](const Msg & ping) {publisher->publish(ping);});
  rclcpp::spin(node);
  return 0;
}

// The floor of the C++ layer: the pong as bytes through the C ABI, no rclcpp, no decoding or
// encoding (`pingpong pong-raw`).
static int pong_raw(int argc, char * argv[])
{
  roslite_handle context = 0, node = 0, publisher = 0, subscription = 0, executor = 0;
  roslite_type type{roslite::message_traits<Msg>::type_name(),
    roslite::message_traits<Msg>::type_hash()};
  roslite_qos profile = qos().get_roslite_qos();
  if (roslite_context_init(argc, argv, &context) != ROSLITE_OK ||
    roslite_node_create(context, "roslite_bench_rtt_cpp_pong", "", &node) != ROSLITE_OK ||
    roslite_publisher_create(node, PONG_TOPIC, &type, &profile, &publisher) != ROSLITE_OK)
  {
    std::fprintf(stderr, "pong-raw: %s\n", roslite_last_error());
    return 2;
  }
  static roslite_handle echo_to = publisher;
  auto echo = [](void *, const uint8_t * cdr, size_t length, const roslite_message_info *) {
      roslite_publish(echo_to, cdr, length);
    };
  if (roslite_subscription_create(node, PING_TOPIC, &type, &profile, echo, nullptr,
    &subscription) != ROSLITE_OK ||
    roslite_executor_create(context, &executor) != ROSLITE_OK ||
    roslite_executor_add_node(executor, node) != ROSLITE_OK)
  {
    std::fprintf(stderr, "pong-raw: %s\n", roslite_last_error());
    return 2;
  }
  roslite_executor_spin(executor);
  return 0;
}

struct Chain
{
  std::mutex mutex;
  std::condition_variable ready;
  Msg message;
  uint64_t seq = 1;
  uint64_t sent_at = 0;
  bool probing = true;
  bool probe_echoed = false;
  size_t sent = 0;
  size_t total = 0;
  size_t warmup = 0;
  size_t lost = 0;
  size_t stale = 0;
  bool done = false;
  std::vector<uint64_t> rtts;
  rclcpp::Publisher<Msg>::SharedPtr publisher;

  // Stamps the next sequence number and publishes; called with `mutex` held.
  void send_next()
  {
    seq += 1;
    std::memcpy(message.data.data(), &seq, sizeof seq);  // little-endian hosts only
    sent += 1;
    sent_at = now_ns();
    publisher->publish(message);
  }

  void on_echo(const Msg & echo, uint64_t at)
  {
    uint64_t echoed = 0;
    if (echo.data.size() >= sizeof echoed) {std::memcpy(&echoed, echo.data.data(), sizeof echoed);}
    std::lock_guard<std::mutex> lock(mutex);
    if (echoed != seq || echo.data.size() != message.data.size()) {
      stale += 1;
      return;
    }
    if (probing) {
      probe_echoed = true;
      ready.notify_all();
      return;
    }
    if (sent > warmup) {rtts.push_back(at - sent_at);}
    if (sent + lost >= total) {
      done = true;
      ready.notify_all();
      return;
    }
    send_next();
  }
};

static int ping(size_t count, size_t warmup, size_t size)
{
  auto chain = std::make_shared<Chain>();
  chain->message.data.assign(size < 8 ? 8 : size, 0);
  for (size_t i = 8; i < chain->message.data.size(); i++) {chain->message.data[i] = uint8_t(i);}
  chain->total = warmup + count;
  chain->warmup = warmup;
  chain->rtts.reserve(count);
  auto node = rclcpp::Node::make_shared("roslite_bench_rtt_cpp_ping");
  chain->publisher = node->create_publisher<Msg>(PING_TOPIC, qos());
  auto subscription = node->create_subscription<Msg>(
    PONG_TOPIC, qos(), [chain](const Msg & echo) {chain->on_echo(echo, now_ns());});
  std::thread spinner([node] {rclcpp::spin(node);});

  std::unique_lock<std::mutex> lock(chain->mutex);
  // Probes until the pong side answers: discovery and matching of both topics.
  uint64_t give_up = now_ns() + 30000000000ull;
  while (!chain->probe_echoed) {
    if (now_ns() > give_up) {
      std::fprintf(stderr, "ping: no echo within 30 s\n");
      std::_Exit(2);
    }
    chain->send_next();
    chain->ready.wait_for(lock, std::chrono::milliseconds(200));
  }
  chain->probing = false;
  chain->sent = 0;
  chain->send_next();
  while (!chain->done) {
    if (now_ns() - chain->sent_at > 5000000000ull) {
      chain->lost += 1;
      if (chain->sent + chain->lost >= chain->total) {break;}
      chain->send_next();
    }
    chain->ready.wait_for(lock, std::chrono::milliseconds(50));
  }
  std::printf("lost %zu\nstale %zu\n", chain->lost, chain->stale);
  for (uint64_t rtt : chain->rtts) {std::printf("rtt_ns %llu\n", (unsigned long long)rtt);}
  std::fflush(stdout);
  // The spinner and the callbacks still run: leave without running destructors under them.
  std::_Exit(0);
}

int main(int argc, char * argv[])
{
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  rclcpp::init(argc, argv);
  std::string role = argc > 1 ? argv[1] : "";
  if (role == "pong") {return pong();}
  if (role == "pong-raw") {return pong_raw(argc, argv);}
  size_t count = 2000, warmup = 200, size = 64;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    size_t value = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--count") {
      count = value;
    } else if (flag == "--warmup") {
      warmup = value;
    } else if (flag == "--size") {
      size = value;
    }
  }
  if (role != "ping") {
    std::fprintf(stderr, "usage: pingpong pong | ping [--count N] [--warmup W] [--size B]\n");
    return 2;
  }
  return ping(count, warmup, size);
}
