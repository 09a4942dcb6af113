/*
 * rcutils' named-logger macros (RCUTILS_LOG_INFO_NAMED and friends, which rclcpp and
 * rclcpp_lifecycle code uses besides RCLCPP_INFO) over roslite_log: the message goes to the
 * console and /rosout under the logger `name`, subject to --log-level. C and C++ alike.
 */
#ifndef ROSLITE_RCUTILS_LOGGING_MACROS_H
#define ROSLITE_RCUTILS_LOGGING_MACROS_H

#include <roslite/roslite.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline void roslite_rcutils_log(int32_t severity, const char *name, const char *function,
                                       const char *format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int needed = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  char *text = needed >= 0 ? (char *)malloc((size_t)needed + 1) : NULL;
  if (text) {
    vsnprintf(text, (size_t)needed + 1, format, args);
    roslite_log(name, severity, function, text);
    free(text);
  }
  va_end(args);
}

#define RCUTILS_LOG_DEBUG_NAMED(name, ...) \
  roslite_rcutils_log(ROSLITE_LOG_DEBUG, (name), __func__, __VA_ARGS__)
#define RCUTILS_LOG_INFO_NAMED(name, ...) \
  roslite_rcutils_log(ROSLITE_LOG_INFO, (name), __func__, __VA_ARGS__)
#define RCUTILS_LOG_WARN_NAMED(name, ...) \
  roslite_rcutils_log(ROSLITE_LOG_WARN, (name), __func__, __VA_ARGS__)
#define RCUTILS_LOG_ERROR_NAMED(name, ...) \
  roslite_rcutils_log(ROSLITE_LOG_ERROR, (name), __func__, __VA_ARGS__)
#define RCUTILS_LOG_FATAL_NAMED(name, ...) \
  roslite_rcutils_log(ROSLITE_LOG_FATAL, (name), __func__, __VA_ARGS__)

#endif /* ROSLITE_RCUTILS_LOGGING_MACROS_H */
