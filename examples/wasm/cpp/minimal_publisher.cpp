// An rclcpp-style publisher as a WebAssembly node: "Hello, world! N" on /topic every 500 ms,
// the source of examples/cpp/minimal_publisher unchanged in what it uses of rclcpp. With an
// argument N it stops after N messages. Built by roslite_wasm::guest_build against roslite's
// rclcpp headers, whose single-threaded path (no std::thread in wasm32's libc++) it takes.
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "rclcpp/rclcpp.hpp"
#include "std_msgs/msg/string.hpp"

using namespace std::chrono_literals;

class MinimalPublisher : public rclcpp::Node
{
public:
  explicit MinimalPublisher(int limit)
  : Node("minimal_publisher"), count_(0), limit_(limit)
  {
    publisher_ = this->create_publisher<std_msgs::msg::String>("topic", 10);
    timer_ = this->create_wall_timer(500ms, std::bind(&MinimalPublisher::timer_callback, this));
  }

private:
  void timer_callback()
  {
    auto message = std_msgs::msg::String();
    message.data = "Hello, world! " + std::to_string(++count_);
    RCLCPP_INFO(this->get_logger(), "Publishing: '%s'", message.data.c_str());
    publisher_->publish(message);
    if (count_ == limit_) {
      rclcpp::shutdown();
    }
  }
  rclcpp::TimerBase::SharedPtr timer_;
  rclcpp::Publisher<std_msgs::msg::String>::SharedPtr publisher_;
  int count_;
  int limit_;
};

int main(int argc, char * argv[])
{
  rclcpp::init(argc, argv);
  int limit = argc > 1 ? std::atoi(argv[1]) : 0;
  rclcpp::spin(std::make_shared<MinimalPublisher>(limit));
  rclcpp::shutdown();
  return 0;
}
