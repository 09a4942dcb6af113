// roslite/cdr.hpp: the runtime of the C++ message types `roslite interface generate --lang cpp`
// writes. Standard library only, header-only, C++17.
//
// Wire format: plain CDR (XCDR1) with the 4-byte encapsulation header in front, the bytes ROS 2
// puts on the wire and roslite's C ABI moves. The writer always produces CDR_LE (00 01 00 00);
// the reader accepts CDR_LE and CDR_BE. Alignment is measured from the first byte after the
// header. Strings are a u32 length counting the NUL, the bytes and the NUL; wstrings are a u32
// count of UTF-16 units, each widened to 4 bytes; sequences are a u32 count and the elements;
// the elements of an empty primitive sequence get no alignment padding.
//
// What is refused, as roslite's Rust decoder refuses it: a truncated buffer, a count whose
// elements cannot fit in the bytes that remain (checked before anything is allocated), a bool
// other than 0 or 1, a string without its NUL or not UTF-8, a wstring unit above 0xffff or an
// unpaired surrogate, a bounded string or sequence over its bound. Encoding refuses what a
// decoder would refuse: a string holding a NUL or invalid UTF-8, a bound exceeded, a count over
// 2^32 - 1.
//
// Per message type T the generated header specialises roslite::message_traits<T>:
//   type_name()      "std_msgs/msg/String"
//   dds_type_name()  "std_msgs::msg::dds_::String_"
//   type_hash()      "RIHS01_..." (REP-2011)
//   encode(Writer &, const T &) -> bool, decode(Reader &, T &) -> bool
// and the functions below (roslite::encode, roslite::decode) wrap them.
#ifndef ROSLITE__CDR_HPP_
#define ROSLITE__CDR_HPP_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace roslite
{

// rosidl_runtime_cpp::MessageInitialization's values. Generated constructors accept it for
// source compatibility; every value initialises like ALL (zeros and .msg defaults).
enum class MessageInitialization
{
  ALL,
  SKIP,
  ZERO,
  DEFAULTS_ONLY,
};

// Specialised by every generated message type; `is_message` tells them apart.
template<class T>
struct message_traits
{
  static constexpr bool is_message = false;
};

// Specialised by every generated service type (type_name, type_hash, Request, Response, Event).
template<class T>
struct service_traits
{
  static constexpr bool is_service = false;
};

// Specialised by every generated action type.
template<class T>
struct action_traits
{
  static constexpr bool is_action = false;
};

// Specialised by the generated types of interfaces roslite does not ship: their definition
// bundle, which the C++ APIs hand to roslite_type_register() so that the runtime knows the type.
// nullptr for every other type.
template<class T>
struct type_definition
{
  static constexpr const char * text() {return nullptr;}
};

template<class T>
struct is_message : std::integral_constant<bool, message_traits<T>::is_message> {};

template<class T>
struct is_service : std::integral_constant<bool, service_traits<T>::is_service> {};

template<class T>
struct is_action : std::integral_constant<bool, action_traits<T>::is_action> {};

namespace cdr
{

// No bound: what the generated code passes for unbounded strings and sequences.
constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();

// Length of the encapsulation header.
constexpr std::size_t kHeaderLength = 4;

// Whether `bytes` (without the NUL) is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF), as Rust's str::from_utf8 demands.
inline bool valid_utf8(const unsigned char * s, std::size_t n)
{
  std::size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    std::uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (n - i < len) {
      return false;
    }
    for (std::size_t k = 1; k < len; ++k) {
      unsigned char cc = s[i + k];
      if ((cc & 0xc0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (cc & 0x3fu);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    {
      return false;
    }
    i += len;
  }
  return true;
}

// Characters in well-formed UTF-8: the bytes that are not continuation bytes.
inline std::size_t utf8_chars(const unsigned char * s, std::size_t n)
{
  std::size_t chars = 0;
  for (std::size_t i = 0; i < n; ++i) {
    chars += (s[i] & 0xc0) != 0x80;
  }
  return chars;
}

// Characters in well-formed UTF-16: the units that are not the second half of a pair.
inline std::size_t utf16_chars(const char16_t * s, std::size_t n)
{
  std::size_t chars = 0;
  for (std::size_t i = 0; i < n; ++i) {
    chars += s[i] < 0xdc00 || s[i] > 0xdfff;
  }
  return chars;
}

// Whether UTF-16 units pair every surrogate, as Rust's String::from_utf16 demands.
inline bool valid_utf16(const char16_t * s, std::size_t n)
{
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u = s[i];
    if (u >= 0xd800 && u <= 0xdbff) {
      if (i + 1 >= n || s[i + 1] < 0xdc00 || s[i + 1] > 0xdfff) {
        return false;
      }
      ++i;
    } else if (u >= 0xdc00 && u <= 0xdfff) {
      return false;
    }
  }
  return true;
}

// Appends CDR_LE to a byte vector.
class Writer
{
public:
  Writer()
  : buf_{0x00, 0x01, 0x00, 0x00} {}

  // Reuses `storage`'s capacity; its contents are replaced.
  explicit Writer(std::vector<std::uint8_t> && storage)
  : buf_(std::move(storage))
  {
    buf_.clear();
    const std::uint8_t header[kHeaderLength] = {0x00, 0x01, 0x00, 0x00};
    buf_.insert(buf_.end(), header, header + kHeaderLength);
  }

  // Bytes written after the header.
  std::size_t position() const {return buf_.size() - kHeaderLength;}

  void align(std::size_t alignment)
  {
    std::size_t misalignment = position() & (alignment - 1);
    if (misalignment != 0) {
      buf_.resize(buf_.size() + (alignment - misalignment), 0);
    }
  }

  void put_bool(bool v) {buf_.push_back(v ? 1 : 0);}

  // Any arithmetic type of 1, 2, 4 or 8 bytes, aligned to its size.
  template<class T>
  void put(T v)
  {
    static_assert(std::is_arithmetic<T>::value && !std::is_same<T, bool>::value, "number");
    align(sizeof(T));
    std::uint8_t bytes[sizeof(T)];
    little_endian(v, bytes);
    buf_.insert(buf_.end(), bytes, bytes + sizeof(T));
  }

  // A sequence or string length; false if it does not fit in a u32.
  bool put_len(std::size_t n)
  {
    if (n > 0xffffffffu) {
      return false;
    }
    put<std::uint32_t>(static_cast<std::uint32_t>(n));
    return true;
  }

  bool put_bounded_len(std::size_t n, std::size_t bound)
  {
    return n <= bound && put_len(n);
  }

  bool put_string(const std::string & s, std::size_t bound = kUnbounded)
  {
    const unsigned char * data = reinterpret_cast<const unsigned char *>(s.data());
    if (s.size() > bound || std::memchr(data, 0, s.size()) != nullptr ||
      !valid_utf8(data, s.size()))
    {
      return false;
    }
    if (s.size() >= 0xffffffffu || !put_len(s.size() + 1)) {
      return false;
    }
    buf_.insert(buf_.end(), data, data + s.size());
    buf_.push_back(0);
    return true;
  }

  bool put_wstring(const std::u16string & s, std::size_t bound = kUnbounded)
  {
    if (s.size() > bound || !valid_utf16(s.data(), s.size()) || !put_len(s.size())) {
      return false;
    }
    for (char16_t unit : s) {
      put<std::uint32_t>(unit);
    }
    return true;
  }

  // The elements of a primitive array or sequence (no count), aligned once; nothing at all
  // for no elements.
  template<class T>
  void put_array(const T * values, std::size_t n)
  {
    static_assert(std::is_arithmetic<T>::value && !std::is_same<T, bool>::value, "number");
    if (n == 0) {
      return;
    }
    align(sizeof(T));
    if (host_is_little_endian() || sizeof(T) == 1) {
      const std::uint8_t * bytes = reinterpret_cast<const std::uint8_t *>(values);
      buf_.insert(buf_.end(), bytes, bytes + n * sizeof(T));
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        put(values[i]);
      }
    }
  }

  const std::vector<std::uint8_t> & bytes() const {return buf_;}
  std::vector<std::uint8_t> take() {return std::move(buf_);}

private:
  static bool host_is_little_endian()
  {
    const std::uint16_t one = 1;
    std::uint8_t first;
    std::memcpy(&first, &one, 1);
    return first == 1;
  }

  template<class T>
  static void little_endian(T v, std::uint8_t * out)
  {
    using U = typename std::conditional<sizeof(T) == 1, std::uint8_t,
        typename std::conditional<sizeof(T) == 2, std::uint16_t,
        typename std::conditional<sizeof(T) == 4, std::uint32_t, std::uint64_t>::type>::type>::type;
    U bits;
    std::memcpy(&bits, &v, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out[i] = static_cast<std::uint8_t>(bits >> (8 * i));
    }
  }

  std::vector<std::uint8_t> buf_;
};

// Reads CDR_LE or CDR_BE from a borrowed buffer. Every read checks the bytes that remain
// first; nothing reads out of bounds, whatever the input.
class Reader
{
public:
  // Parses the encapsulation header; ok() is false for anything but CDR_LE/CDR_BE.
  Reader(const std::uint8_t * data, std::size_t size)
  : data_(data), size_(size), pos_(kHeaderLength)
  {
    if (data == nullptr || size < kHeaderLength || data[0] != 0x00 || data[1] > 0x01) {
      ok_ = false;
      pos_ = size;
      return;
    }
    big_endian_ = data[1] == 0x00;
  }

  bool ok() const {return ok_;}
  std::size_t remaining() const {return size_ - pos_;}
  std::size_t position() const {return pos_ - kHeaderLength;}

  bool align(std::size_t alignment)
  {
    std::size_t misalignment = position() & (alignment - 1);
    return misalignment == 0 || skip(alignment - misalignment);
  }

  bool get_bool(bool & v)
  {
    if (remaining() < 1 || data_[pos_] > 1) {
      return false;
    }
    v = data_[pos_++] == 1;
    return true;
  }

  template<class T>
  bool get(T & v)
  {
    static_assert(std::is_arithmetic<T>::value && !std::is_same<T, bool>::value, "number");
    if (!align(sizeof(T)) || remaining() < sizeof(T)) {
      return false;
    }
    v = load<T>(data_ + pos_);
    pos_ += sizeof(T);
    return true;
  }

  // A count whose `min_element_size`-byte elements fit in what remains.
  bool get_len(std::size_t & n, std::size_t min_element_size)
  {
    std::uint32_t count;
    if (!get(count)) {
      return false;
    }
    if (min_element_size != 0 && count > remaining() / min_element_size) {
      return false;
    }
    n = count;
    return true;
  }

  bool get_bounded_len(std::size_t & n, std::size_t min_element_size, std::size_t bound)
  {
    return get_len(n, min_element_size) && n <= bound;
  }

  bool get_string(std::string & s, std::size_t bound = kUnbounded)
  {
    std::size_t n;
    if (!get_len(n, 1) || n == 0 || data_[pos_ + n - 1] != 0) {
      return false;
    }
    // A bound is read as leniently as any ROS 2 client library writes it: in characters
    // (rclpy), so `bound` characters are accepted even when their UTF-8 is longer. Sent
    // strings are held to bytes (put_string), as rclcpp counts them.
    const unsigned char * text = data_ + pos_;
    if (!valid_utf8(text, n - 1) || (n - 1 > bound && utf8_chars(text, n - 1) > bound)) {
      return false;
    }
    s.assign(reinterpret_cast<const char *>(text), n - 1);
    pos_ += n;
    return true;
  }

  bool get_wstring(std::u16string & s, std::size_t bound = kUnbounded)
  {
    std::size_t n;
    // Read in characters, as rclpy counts the bound (rclcpp counts UTF-16 units): at most two
    // units a character, refused before anything is allocated.
    if (!get_len(n, 4) || n - n / 2 > bound) {
      return false;
    }
    std::u16string out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t unit;
      if (!get(unit) || unit > 0xffff) {
        return false;
      }
      out.push_back(static_cast<char16_t>(unit));
    }
    if (!valid_utf16(out.data(), out.size()) ||
      (n > bound && utf16_chars(out.data(), out.size()) > bound))
    {
      return false;
    }
    s = std::move(out);
    return true;
  }

  // `n` primitives (no count), aligned once unless there are none.
  template<class T>
  bool get_array(T * values, std::size_t n)
  {
    static_assert(std::is_arithmetic<T>::value && !std::is_same<T, bool>::value, "number");
    if (n == 0) {
      return true;
    }
    if (!align(sizeof(T)) || remaining() / sizeof(T) < n) {
      return false;
    }
    for (std::size_t i = 0; i < n; ++i) {
      values[i] = load<T>(data_ + pos_ + i * sizeof(T));
    }
    pos_ += n * sizeof(T);
    return true;
  }

private:
  bool skip(std::size_t n)
  {
    if (remaining() < n) {
      return false;
    }
    pos_ += n;
    return true;
  }

  template<class T>
  T load(const std::uint8_t * p) const
  {
    using U = typename std::conditional<sizeof(T) == 1, std::uint8_t,
        typename std::conditional<sizeof(T) == 2, std::uint16_t,
        typename std::conditional<sizeof(T) == 4, std::uint32_t, std::uint64_t>::type>::type>::type;
    U bits = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      std::size_t shift = big_endian_ ? 8 * (sizeof(T) - 1 - i) : 8 * i;
      bits = static_cast<U>(bits | static_cast<U>(static_cast<U>(p[i]) << shift));
    }
    T v;
    std::memcpy(&v, &bits, sizeof(T));
    return v;
  }

  const std::uint8_t * data_;
  std::size_t size_;
  std::size_t pos_;
  bool big_endian_ = false;
  bool ok_ = true;
};

}  // namespace cdr

// Thrown by the encode overload that returns bytes.
class encode_error : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

// Serialises `msg` (encapsulation header first) into `out`, reusing its capacity. False when
// the message cannot be encoded (a bound exceeded, a string with a NUL or not UTF-8); `out`
// is then unspecified.
template<class T>
bool encode(const T & msg, std::vector<std::uint8_t> & out)
{
  static_assert(is_message<T>::value, "roslite::encode needs a generated message type");
  cdr::Writer w(std::move(out));
  bool ok = message_traits<T>::encode(w, msg);
  out = w.take();
  return ok;
}

// Serialises `msg`; throws roslite::encode_error naming the type when it cannot be encoded
// (without exceptions: returns an empty vector).
template<class T>
std::vector<std::uint8_t> encode(const T & msg)
{
  std::vector<std::uint8_t> out;
  if (!encode(msg, out)) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    throw encode_error(std::string("cannot encode ") + message_traits<T>::type_name() +
            ": a bounded string or sequence is over its bound, or a string holds a NUL or "
            "is not UTF-8");
#else
    out.clear();
#endif
  }
  return out;
}

// Deserialises `size` bytes (encapsulation header first) into `msg`. False for malformed
// input; `msg` then holds some valid but unspecified value. Bytes after the message are
// ignored (some writers pad the end).
template<class T>
bool decode(const std::uint8_t * data, std::size_t size, T & msg)
{
  static_assert(is_message<T>::value, "roslite::decode needs a generated message type");
  cdr::Reader r(data, size);
  return r.ok() && message_traits<T>::decode(r, msg);
}

template<class T>
bool decode(const std::vector<std::uint8_t> & bytes, T & msg)
{
  return decode(bytes.data(), bytes.size(), msg);
}

}  // namespace roslite

#endif  // ROSLITE__CDR_HPP_
