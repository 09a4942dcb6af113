// What roslite's C++ API needs of a message type: its ROS name, its RIHS01 hash, and its CDR
// encoding (the bytes with their 4-byte encapsulation header). The generated C++ types
// (`roslite interface generate --lang cpp`) specialise these templates; a hand-written type
// can too.
#ifndef ROSLITE_MESSAGE_TRAITS_HPP
#define ROSLITE_MESSAGE_TRAITS_HPP

#include <cstddef>
#include <cstdint>
#include <vector>

namespace roslite {

// Specialised for each message type T:
//   static const char *type_name();   // "std_msgs/msg/String"
//   static const char *type_hash();   // "RIHS01_..."
//   static void encode(const T &message, std::vector<uint8_t> &out);   // header + CDR body
//   static bool decode(const uint8_t *data, size_t length, T &message); // false: malformed
template <class T>
struct message_traits;

// Specialised for each service type S (with S::Request and S::Response message types):
//   static const char *type_name();   // "example_interfaces/srv/AddTwoInts"
template <class S>
struct service_traits;

}  // namespace roslite

#endif  // ROSLITE_MESSAGE_TRAITS_HPP
