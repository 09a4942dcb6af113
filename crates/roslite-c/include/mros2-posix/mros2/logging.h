// mROS 2's logging macros over roslite's logging (logger "mros2"): printf-style, with the
// trailing "\r\n" mROS 2 applications often add left out.
#ifndef ROSLITE_MROS2_LOGGING_H
#define ROSLITE_MROS2_LOGGING_H

#include <roslite/roslite.h>

#include <cstdarg>
#include <cstdio>
#include <string>

namespace mros2 {
namespace detail {
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
inline void log(int32_t severity, const char *format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  std::string message(text);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
  roslite_log("mros2", severity, nullptr, message.c_str());
}
}  // namespace detail
}  // namespace mros2

#define MROS2_DEBUG(...) ::mros2::detail::log(ROSLITE_LOG_DEBUG, __VA_ARGS__)
#define MROS2_INFO(...) ::mros2::detail::log(ROSLITE_LOG_INFO, __VA_ARGS__)
#define MROS2_WARN(...) ::mros2::detail::log(ROSLITE_LOG_WARN, __VA_ARGS__)
#define MROS2_ERROR(...) ::mros2::detail::log(ROSLITE_LOG_ERROR, __VA_ARGS__)
#define MROS2_FATAL(...) ::mros2::detail::log(ROSLITE_LOG_FATAL, __VA_ARGS__)

#endif  // ROSLITE_MROS2_LOGGING_H
