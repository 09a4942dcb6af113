// What mROS 2-POSIX applications use of CMSIS-RTOS2, as it means on a POSIX host: the kernel
// is the process (osKernelStart does nothing), osDelay sleeps the calling thread for that
// many milliseconds (mROS 2-POSIX's tick), and threads are POSIX threads.
//
// In a WebAssembly node (__wasi__) there is one thread and no other to run the callbacks
// while main waits, so osDelay runs the mROS 2 executor for those milliseconds (after
// mros2::init; before it, and once the context is shut down, it only waits), which is what
// the application sees natively: its callbacks keep coming while it delays. osThreadNew
// cannot start a thread there and says so.
//
// An mROS 2 application has no shutdown: its main often loops on osDelay for ever. After
// SIGINT or SIGTERM (which mros2::init turns into a shutdown of its context) osDelay ends the
// process (exit status 0) instead of sleeping on, so that Ctrl-C stops such an application as
// it would without roslite; in a WebAssembly node the host ends the node at that wait.
#ifndef ROSLITE_CMSIS_OS_H
#define ROSLITE_CMSIS_OS_H

#include <chrono>
#include <cstdint>

#include <roslite/roslite.h>

#if defined(__wasi__)
#include <cstdio>
#include <time.h>

// The executor mros2::init made (0 before it): what osDelay runs on a Wasm node.
inline roslite_handle &roslite_mros2_executor() {
  static roslite_handle executor = 0;
  return executor;
}
#else
#include <cstdlib>
#include <thread>

// The context mros2::init made (0 before it): once it is shut down, osDelay ends the process.
inline roslite_handle &roslite_mros2_context() {
  static roslite_handle context = 0;
  return context;
}
#endif

typedef enum {
  osOK = 0,
  osError = -1,
  osErrorTimeout = -2,
  osErrorResource = -3,
  osErrorParameter = -4,
  osErrorNoMemory = -5,
  osErrorISR = -6,
} osStatus_t;

typedef void *osThreadId_t;
typedef void (*osThreadFunc_t)(void *argument);
typedef struct {
  const char *name;
  uint32_t attr_bits;
  void *cb_mem;
  uint32_t cb_size;
  void *stack_mem;
  uint32_t stack_size;
  int32_t priority;
  uint32_t tz_module;
  uint32_t reserved;
} osThreadAttr_t;

#define osWaitForever 0xFFFFFFFFU

inline osStatus_t osKernelInitialize(void) { return osOK; }
inline osStatus_t osKernelStart(void) { return osOK; }

inline uint32_t osKernelGetTickCount(void) {
  return uint32_t(std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}
inline uint32_t osKernelGetTickFreq(void) { return 1000; }

#if defined(__wasi__)
inline osStatus_t osDelay(uint32_t ticks) {
  using namespace std::chrono;
  auto until = steady_clock::now() + milliseconds(ticks);
  if (roslite_handle executor = roslite_mros2_executor())
    roslite_executor_spin_for(executor, duration_cast<nanoseconds>(milliseconds(ticks)).count());
  // spin_for returns early when the context is shut down: the rest is only waited, as a
  // native osDelay would.
  auto left = duration_cast<nanoseconds>(until - steady_clock::now()).count();
  if (left > 0) {
    struct timespec rest = {time_t(left / 1000000000), long(left % 1000000000)};
    nanosleep(&rest, nullptr);
  }
  return osOK;
}

inline osThreadId_t osThreadNew(osThreadFunc_t function, void *, const osThreadAttr_t *) {
  if (function)
    std::fprintf(stderr, "osThreadNew: a WebAssembly node has one thread; no thread started\n");
  return nullptr;
}
#else
inline osStatus_t osDelay(uint32_t ticks) {
  auto shut_down = [] {
    bool ok = true;
    roslite_handle context = roslite_mros2_context();
    return context && roslite_context_ok(context, &ok) == ROSLITE_OK && !ok;
  };
  if (shut_down()) std::exit(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(ticks));
  if (shut_down()) std::exit(0);
  return osOK;
}

inline osThreadId_t osThreadNew(osThreadFunc_t function, void *argument,
                                const osThreadAttr_t *) {
  if (!function) return nullptr;
  std::thread thread(function, argument);
  osThreadId_t id = reinterpret_cast<osThreadId_t>(thread.native_handle());
  thread.detach();
  return id;
}
#endif

#endif  // ROSLITE_CMSIS_OS_H
