// What mROS 2-POSIX applications use of CMSIS-RTOS2, as it means on a POSIX host: the kernel
// is the process (osKernelStart does nothing), osDelay sleeps the calling thread for that
// many milliseconds (mROS 2-POSIX's tick), and threads are POSIX threads.
#ifndef ROSLITE_CMSIS_OS_H
#define ROSLITE_CMSIS_OS_H

#include <chrono>
#include <cstdint>
#include <thread>

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

inline osStatus_t osDelay(uint32_t ticks) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ticks));
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

#endif  // ROSLITE_CMSIS_OS_H
