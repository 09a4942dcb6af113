// An rclcpp content-filtering subscriber as ROS 2's demos write one (demo_nodes_cpp's
// content_filtering_subscriber: SubscriptionOptions::content_filter_options, is_cft_enabled),
// built against roslite's rclcpp headers by ../content_filter.rs.
//
// Subscribes to /temperature (std_msgs/msg/Float32) keeping emergencies: below -20 or above
// 100. Prints `CFT <0|1>` and `FILTER <expression>|<parameter>...` (get_content_filter), then
// `HEARD <value>` per message (one decimal). At a message of 1000 it narrows the filter with
// set_content_filter to 55.5 and 1000 (`SET`); at the next 1000 it ends.
#include <rclcpp/rclcpp.hpp>

#include "std_msgs/msg/float32.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

static const float EMERGENCY_TEMPERATURE[] = {-20.0f, 100.0f};

class ContentFilteringSubscriber : public rclcpp::Node {
 public:
  ContentFilteringSubscriber() : Node("content_filtering_subscriber") {
    auto callback = [this](const std_msgs::msg::Float32 &msg) -> void {
      std::printf("HEARD %.1f\n", msg.data);
      std::fflush(stdout);
      if (msg.data != 1000.0f) return;
      if (++markers_ == 1) {
        sub_->set_content_filter("data = %0 OR data = %1", {"55.5", "1000"});
        std::printf("SET\n");
        std::fflush(stdout);
      } else {
        rclcpp::shutdown();
      }
    };
    rclcpp::SubscriptionOptions sub_options;
    sub_options.content_filter_options.filter_expression = "data < %0 OR data > %1";
    sub_options.content_filter_options.expression_parameters = {
        std::to_string(EMERGENCY_TEMPERATURE[0]), std::to_string(EMERGENCY_TEMPERATURE[1])};
    // Deeper than the demo's 10: the test sends its temperatures in one burst, and a path's
    // queue holds messages before the filter drops them.
    sub_ = create_subscription<std_msgs::msg::Float32>("temperature", 100, callback, sub_options);
    if (!sub_->is_cft_enabled()) {
      RCLCPP_WARN(this->get_logger(), "Content filter is not enabled since it's not supported");
    }
    std::printf("CFT %d\n", sub_->is_cft_enabled() ? 1 : 0);
    rclcpp::ContentFilterOptions current = sub_->get_content_filter();
    std::string line = "FILTER " + current.filter_expression;
    for (const std::string &parameter : current.expression_parameters) line += "|" + parameter;
    std::printf("%s\n", line.c_str());

    // What rclcpp throws for: an expression that does not compile (the filter in place
    // stays), and asking an unfiltered subscription for its filter.
    try {
      sub_->set_content_filter("data < %0 OR", {"1"});
      std::printf("NOT REFUSED\n");
    } catch (const rclcpp::exceptions::RCLError &e) {
      std::string what = e.what();
      std::printf("REFUSED %s\n", what.substr(0, what.find('\n')).c_str());
    }
    std::printf("STILL %d %s\n", sub_->is_cft_enabled() ? 1 : 0,
                sub_->get_content_filter().filter_expression.c_str());
    plain_ = create_subscription<std_msgs::msg::Float32>(
        "temperature", 10, [](const std_msgs::msg::Float32 &) {});
    try {
      plain_->get_content_filter();
      std::printf("NOT REFUSED\n");
    } catch (const rclcpp::exceptions::RCLError &) {
      std::printf("PLAIN %d\n", plain_->is_cft_enabled() ? 1 : 0);
    }
    std::printf("READY\n");
    std::fflush(stdout);
  }

 private:
  rclcpp::Subscription<std_msgs::msg::Float32>::SharedPtr sub_, plain_;
  int markers_ = 0;
};

int main(int argc, char *argv[]) {
  rclcpp::init(argc, argv);
  rclcpp::spin(std::make_shared<ContentFilteringSubscriber>());
  rclcpp::shutdown();
  return 0;
}
