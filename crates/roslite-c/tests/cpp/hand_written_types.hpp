// std_msgs/msg/String and example_interfaces/srv/AddTwoInts written by hand, with the
// roslite::message_traits the C++ API needs, for the C++ API's tests. Generated types
// (`roslite interface generate --lang cpp`) have the same shape.
#pragma once

#include <roslite/message_traits.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace std_msgs {
namespace msg {
struct String {
  using SharedPtr = std::shared_ptr<String>;
  using ConstSharedPtr = std::shared_ptr<const String>;
  using UniquePtr = std::unique_ptr<String>;
  std::string data;
};
}  // namespace msg
}  // namespace std_msgs

namespace example_interfaces {
namespace srv {
struct AddTwoInts_Request {
  using SharedPtr = std::shared_ptr<AddTwoInts_Request>;
  int64_t a = 0;
  int64_t b = 0;
};
struct AddTwoInts_Response {
  using SharedPtr = std::shared_ptr<AddTwoInts_Response>;
  int64_t sum = 0;
};
struct AddTwoInts {
  using Request = AddTwoInts_Request;
  using Response = AddTwoInts_Response;
};
}  // namespace srv
}  // namespace example_interfaces

namespace roslite {
namespace test_detail {
inline void header(std::vector<uint8_t> &out) { out.assign({0, 1, 0, 0}); }
inline bool little_cdr(const uint8_t *d, size_t n) { return n >= 4 && d[0] == 0 && d[1] == 1; }
inline void put_i64(std::vector<uint8_t> &out, int64_t v) {
  while ((out.size() - 4) % 8) out.push_back(0);
  uint8_t b[8];
  std::memcpy(b, &v, 8);
  out.insert(out.end(), b, b + 8);
}
inline bool get_i64(const uint8_t *d, size_t n, size_t &at, int64_t &v) {
  while ((at - 4) % 8) at++;
  if (at + 8 > n) return false;
  std::memcpy(&v, d + at, 8);
  at += 8;
  return true;
}
}  // namespace test_detail

template <>
struct message_traits<std_msgs::msg::String> {
  static const char *type_name() { return "std_msgs/msg/String"; }
  static const char *type_hash() { return ROSLITE_TEST_STRING_HASH; }
  static void encode(const std_msgs::msg::String &m, std::vector<uint8_t> &out) {
    test_detail::header(out);
    uint32_t n = uint32_t(m.data.size() + 1);
    uint8_t b[4];
    std::memcpy(b, &n, 4);
    out.insert(out.end(), b, b + 4);
    out.insert(out.end(), m.data.begin(), m.data.end());
    out.push_back(0);
  }
  static bool decode(const uint8_t *d, size_t n, std_msgs::msg::String &m) {
    if (!test_detail::little_cdr(d, n) || n < 8) return false;
    uint32_t len;
    std::memcpy(&len, d + 4, 4);
    if (len == 0 || len > n - 8) return false;
    m.data.assign(reinterpret_cast<const char *>(d + 8), len - 1);
    return true;
  }
};

template <>
struct message_traits<example_interfaces::srv::AddTwoInts_Request> {
  static const char *type_name() { return "example_interfaces/srv/AddTwoInts_Request"; }
  static const char *type_hash() { return ROSLITE_TEST_REQUEST_HASH; }
  static void encode(const example_interfaces::srv::AddTwoInts_Request &m,
                     std::vector<uint8_t> &out) {
    test_detail::header(out);
    test_detail::put_i64(out, m.a);
    test_detail::put_i64(out, m.b);
  }
  static bool decode(const uint8_t *d, size_t n, example_interfaces::srv::AddTwoInts_Request &m) {
    size_t at = 4;
    return test_detail::little_cdr(d, n) && test_detail::get_i64(d, n, at, m.a) &&
           test_detail::get_i64(d, n, at, m.b);
  }
};

template <>
struct message_traits<example_interfaces::srv::AddTwoInts_Response> {
  static const char *type_name() { return "example_interfaces/srv/AddTwoInts_Response"; }
  static const char *type_hash() { return ROSLITE_TEST_RESPONSE_HASH; }
  static void encode(const example_interfaces::srv::AddTwoInts_Response &m,
                     std::vector<uint8_t> &out) {
    test_detail::header(out);
    test_detail::put_i64(out, m.sum);
  }
  static bool decode(const uint8_t *d, size_t n, example_interfaces::srv::AddTwoInts_Response &m) {
    size_t at = 4;
    return test_detail::little_cdr(d, n) && test_detail::get_i64(d, n, at, m.sum);
  }
};

template <>
struct service_traits<example_interfaces::srv::AddTwoInts> {
  static const char *type_name() { return "example_interfaces/srv/AddTwoInts"; }
};
}  // namespace roslite
