/*
 * roslite/cdr.h: the runtime of the C message types `roslite interface generate --lang c`
 * writes. C11, header-only (every function is static inline), libc only.
 *
 * Strings and sequences have rosidl_runtime_c's shape under a roslite__ prefix:
 *   roslite__String { char *data; size_t size; size_t capacity; }   (data NUL-terminated)
 *   roslite__U16String { uint16_t *data; size_t size; size_t capacity; }
 *   roslite__<type>__Sequence { T *data; size_t size; size_t capacity; } for boolean, octet,
 *   uint8, int8, uint16, int16, uint32, int32, uint64, int64, float, double, String, U16String
 * with __init/__fini (and __assign/__assignn for strings). Define ROSLITE_ROSIDL_C_NAMES before
 * including this header to also get the rosidl_runtime_c__... names as aliases.
 *
 * Wire format: plain CDR (XCDR1) after the 4-byte encapsulation header, the bytes ROS 2 puts on
 * the wire and roslite's C ABI moves (see roslite/cdr.hpp for the rules). The writer produces
 * CDR_LE; the reader accepts CDR_LE and CDR_BE, checks every count against the bytes that
 * remain before allocating, and never reads out of bounds.
 *
 * Per message type pkg__msg__Name the generated header defines __init, __fini, __create,
 * __destroy, __are_equal, __Sequence__init/__fini, __encode (into a roslite_cdr_buffer) and
 * __decode (from bytes), and the macros __TYPE_NAME, __DDS_TYPE_NAME and __TYPE_HASH.
 */
#ifndef ROSLITE__CDR_H_
#define ROSLITE__CDR_H_

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROSLITE_CDR_UNBOUNDED SIZE_MAX
#define ROSLITE_CDR_HEADER_LENGTH 4

/* ---- Strings ------------------------------------------------------------------------------ */

typedef struct roslite__String
{
  char *data;
  size_t size;
  size_t capacity;
} roslite__String;

typedef struct roslite__U16String
{
  uint16_t *data;
  size_t size;
  size_t capacity;
} roslite__U16String;

/* An empty string (data is "", not NULL). False if out of memory. */
static inline bool roslite__String__init(roslite__String *s)
{
  if (s == NULL) {
    return false;
  }
  s->data = (char *)calloc(1, 1);
  s->size = 0;
  s->capacity = s->data != NULL ? 1 : 0;
  return s->data != NULL;
}

static inline void roslite__String__fini(roslite__String *s)
{
  if (s == NULL) {
    return;
  }
  free(s->data);
  s->data = NULL;
  s->size = 0;
  s->capacity = 0;
}

/* Copies `n` bytes and a NUL. False if out of memory (the string is then unchanged). */
static inline bool roslite__String__assignn(roslite__String *s, const char *value, size_t n)
{
  if (s == NULL || (value == NULL && n != 0) || n == SIZE_MAX) {
    return false;
  }
  if (s->data == NULL || s->capacity < n + 1) {
    char *data = (char *)realloc(s->data, n + 1);
    if (data == NULL) {
      return false;
    }
    s->data = data;
    s->capacity = n + 1;
  }
  if (n != 0) {
    memcpy(s->data, value, n);
  }
  s->data[n] = '\0';
  s->size = n;
  return true;
}

static inline bool roslite__String__assign(roslite__String *s, const char *value)
{
  return value != NULL && roslite__String__assignn(s, value, strlen(value));
}

static inline bool roslite__U16String__init(roslite__U16String *s)
{
  if (s == NULL) {
    return false;
  }
  s->data = (uint16_t *)calloc(1, sizeof(uint16_t));
  s->size = 0;
  s->capacity = s->data != NULL ? 1 : 0;
  return s->data != NULL;
}

static inline void roslite__U16String__fini(roslite__U16String *s)
{
  if (s == NULL) {
    return;
  }
  free(s->data);
  s->data = NULL;
  s->size = 0;
  s->capacity = 0;
}

/* Copies `n` UTF-16 units and a terminating 0. */
static inline bool roslite__U16String__assignn(
  roslite__U16String *s, const uint16_t *value, size_t n)
{
  if (s == NULL || (value == NULL && n != 0) || n >= SIZE_MAX / sizeof(uint16_t)) {
    return false;
  }
  if (s->data == NULL || s->capacity < n + 1) {
    uint16_t *data = (uint16_t *)realloc(s->data, (n + 1) * sizeof(uint16_t));
    if (data == NULL) {
      return false;
    }
    s->data = data;
    s->capacity = n + 1;
  }
  if (n != 0) {
    memcpy(s->data, value, n * sizeof(uint16_t));
  }
  s->data[n] = 0;
  s->size = n;
  return true;
}

static inline bool roslite__String__are_equal(const roslite__String *a, const roslite__String *b)
{
  return a != NULL && b != NULL && a->size == b->size &&
         (a->size == 0 || memcmp(a->data, b->data, a->size) == 0);
}

static inline bool roslite__U16String__are_equal(
  const roslite__U16String *a, const roslite__U16String *b)
{
  return a != NULL && b != NULL && a->size == b->size &&
         (a->size == 0 || memcmp(a->data, b->data, a->size * sizeof(uint16_t)) == 0);
}

/* ---- Sequences ---------------------------------------------------------------------------- */

/* `size` zeroed elements (none: data is NULL). False if out of memory. */
#define ROSLITE__PRIMITIVE_SEQUENCE(NAME, TYPE) \
  typedef struct roslite__##NAME##__Sequence \
  { \
    TYPE *data; \
    size_t size; \
    size_t capacity; \
  } roslite__##NAME##__Sequence; \
  static inline bool roslite__##NAME##__Sequence__init( \
    roslite__##NAME##__Sequence *seq, size_t size) \
  { \
    if (seq == NULL) { \
      return false; \
    } \
    seq->data = NULL; \
    seq->size = 0; \
    seq->capacity = 0; \
    if (size == 0) { \
      return true; \
    } \
    seq->data = (TYPE *)calloc(size, sizeof(TYPE)); \
    if (seq->data == NULL) { \
      return false; \
    } \
    seq->size = size; \
    seq->capacity = size; \
    return true; \
  } \
  static inline void roslite__##NAME##__Sequence__fini(roslite__##NAME##__Sequence *seq) \
  { \
    if (seq == NULL) { \
      return; \
    } \
    free(seq->data); \
    seq->data = NULL; \
    seq->size = 0; \
    seq->capacity = 0; \
  }

ROSLITE__PRIMITIVE_SEQUENCE(boolean, bool)
ROSLITE__PRIMITIVE_SEQUENCE(octet, uint8_t)
ROSLITE__PRIMITIVE_SEQUENCE(uint8, uint8_t)
ROSLITE__PRIMITIVE_SEQUENCE(int8, int8_t)
ROSLITE__PRIMITIVE_SEQUENCE(uint16, uint16_t)
ROSLITE__PRIMITIVE_SEQUENCE(int16, int16_t)
ROSLITE__PRIMITIVE_SEQUENCE(uint32, uint32_t)
ROSLITE__PRIMITIVE_SEQUENCE(int32, int32_t)
ROSLITE__PRIMITIVE_SEQUENCE(uint64, uint64_t)
ROSLITE__PRIMITIVE_SEQUENCE(int64, int64_t)
ROSLITE__PRIMITIVE_SEQUENCE(float, float)
ROSLITE__PRIMITIVE_SEQUENCE(double, double)

/* Sequences of elements that own memory: every element initialised, and finalised by fini. */
#define ROSLITE__OWNING_SEQUENCE(NAME, TYPE, INIT, FINI) \
  typedef struct NAME##__Sequence \
  { \
    TYPE *data; \
    size_t size; \
    size_t capacity; \
  } NAME##__Sequence; \
  static inline void NAME##__Sequence__fini(NAME##__Sequence *seq) \
  { \
    if (seq == NULL) { \
      return; \
    } \
    for (size_t i = 0; seq->data != NULL && i < seq->size; ++i) { \
      FINI(&seq->data[i]); \
    } \
    free(seq->data); \
    seq->data = NULL; \
    seq->size = 0; \
    seq->capacity = 0; \
  } \
  static inline bool NAME##__Sequence__init(NAME##__Sequence *seq, size_t size) \
  { \
    if (seq == NULL) { \
      return false; \
    } \
    seq->data = NULL; \
    seq->size = 0; \
    seq->capacity = 0; \
    if (size == 0) { \
      return true; \
    } \
    seq->data = (TYPE *)calloc(size, sizeof(TYPE)); \
    if (seq->data == NULL) { \
      return false; \
    } \
    seq->capacity = size; \
    for (size_t i = 0; i < size; ++i) { \
      if (!INIT(&seq->data[i])) { \
        NAME##__Sequence__fini(seq); \
        return false; \
      } \
      seq->size = i + 1; \
    } \
    return true; \
  }

ROSLITE__OWNING_SEQUENCE(roslite__String, roslite__String, roslite__String__init,
  roslite__String__fini)
ROSLITE__OWNING_SEQUENCE(roslite__U16String, roslite__U16String, roslite__U16String__init,
  roslite__U16String__fini)

#ifdef ROSLITE_ROSIDL_C_NAMES
#define rosidl_runtime_c__String roslite__String
#define rosidl_runtime_c__String__init roslite__String__init
#define rosidl_runtime_c__String__fini roslite__String__fini
#define rosidl_runtime_c__String__assign roslite__String__assign
#define rosidl_runtime_c__String__assignn roslite__String__assignn
#define rosidl_runtime_c__String__Sequence roslite__String__Sequence
#define rosidl_runtime_c__String__Sequence__init roslite__String__Sequence__init
#define rosidl_runtime_c__String__Sequence__fini roslite__String__Sequence__fini
#define rosidl_runtime_c__U16String roslite__U16String
#define rosidl_runtime_c__U16String__init roslite__U16String__init
#define rosidl_runtime_c__U16String__fini roslite__U16String__fini
#define rosidl_runtime_c__U16String__Sequence roslite__U16String__Sequence
#define rosidl_runtime_c__U16String__Sequence__init roslite__U16String__Sequence__init
#define rosidl_runtime_c__U16String__Sequence__fini roslite__U16String__Sequence__fini
#define ROSLITE__ROSIDL_SEQUENCE_NAMES(NAME) \
  typedef roslite__##NAME##__Sequence rosidl_runtime_c__##NAME##__Sequence;
ROSLITE__ROSIDL_SEQUENCE_NAMES(boolean)
ROSLITE__ROSIDL_SEQUENCE_NAMES(octet)
ROSLITE__ROSIDL_SEQUENCE_NAMES(uint8)
ROSLITE__ROSIDL_SEQUENCE_NAMES(int8)
ROSLITE__ROSIDL_SEQUENCE_NAMES(uint16)
ROSLITE__ROSIDL_SEQUENCE_NAMES(int16)
ROSLITE__ROSIDL_SEQUENCE_NAMES(uint32)
ROSLITE__ROSIDL_SEQUENCE_NAMES(int32)
ROSLITE__ROSIDL_SEQUENCE_NAMES(uint64)
ROSLITE__ROSIDL_SEQUENCE_NAMES(int64)
ROSLITE__ROSIDL_SEQUENCE_NAMES(float)
ROSLITE__ROSIDL_SEQUENCE_NAMES(double)
#undef ROSLITE__ROSIDL_SEQUENCE_NAMES
#endif

/* ---- Encoded bytes ------------------------------------------------------------------------ */

/* Bytes an encode function wrote: start zeroed ({0}), reuse across encodes, then fini. */
typedef struct roslite_cdr_buffer
{
  uint8_t *data;
  size_t length;
  size_t capacity;
} roslite_cdr_buffer;

static inline void roslite_cdr_buffer_fini(roslite_cdr_buffer *buf)
{
  if (buf == NULL) {
    return;
  }
  free(buf->data);
  buf->data = NULL;
  buf->length = 0;
  buf->capacity = 0;
}

/* ---- Validation --------------------------------------------------------------------------- */

/* Well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF). */
static inline bool roslite_cdr_valid_utf8(const unsigned char *s, size_t n)
{
  size_t i = 0;
  while (i < n) {
    unsigned char c = s[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
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
    for (size_t k = 1; k < len; ++k) {
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

/* Characters in well-formed UTF-8: the bytes that are not continuation bytes. */
static inline size_t roslite_cdr_utf8_chars(const unsigned char *s, size_t n)
{
  size_t chars = 0;
  for (size_t i = 0; i < n; ++i) {
    chars += (s[i] & 0xc0) != 0x80;
  }
  return chars;
}

/* Characters in well-formed UTF-16: the units that are not the second half of a pair. */
static inline size_t roslite_cdr_utf16_chars(const uint16_t *s, size_t n)
{
  size_t chars = 0;
  for (size_t i = 0; i < n; ++i) {
    chars += s[i] < 0xdc00 || s[i] > 0xdfff;
  }
  return chars;
}

/* Every surrogate paired. */
static inline bool roslite_cdr_valid_utf16(const uint16_t *s, size_t n)
{
  for (size_t i = 0; i < n; ++i) {
    if (s[i] >= 0xd800 && s[i] <= 0xdbff) {
      if (i + 1 >= n || s[i + 1] < 0xdc00 || s[i + 1] > 0xdfff) {
        return false;
      }
      ++i;
    } else if (s[i] >= 0xdc00 && s[i] <= 0xdfff) {
      return false;
    }
  }
  return true;
}

static inline bool roslite_cdr_host_is_little_endian(void)
{
  const uint16_t one = 1;
  uint8_t first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* ---- Writer ------------------------------------------------------------------------------- */

/* Appends CDR_LE to a buffer. Failures (out of memory, a bound exceeded, a string with a NUL or
 * not UTF-8, a count over 2^32 - 1) are sticky: `ok` turns false and stays false. */
typedef struct roslite_cdr_writer
{
  roslite_cdr_buffer *buf;
  bool ok;
} roslite_cdr_writer;

static inline bool roslite_cdr_reserve(roslite_cdr_writer *w, size_t more)
{
  roslite_cdr_buffer *b = w->buf;
  if (!w->ok) {
    return false;
  }
  if (more > SIZE_MAX - b->length) {
    w->ok = false;
    return false;
  }
  if (b->length + more <= b->capacity) {
    return true;
  }
  size_t capacity = b->capacity < 64 ? 64 : b->capacity;
  while (capacity < b->length + more) {
    capacity = capacity > SIZE_MAX / 2 ? b->length + more : capacity * 2;
  }
  uint8_t *data = (uint8_t *)realloc(b->data, capacity);
  if (data == NULL) {
    w->ok = false;
    return false;
  }
  b->data = data;
  b->capacity = capacity;
  return true;
}

static inline void roslite_cdr_put_bytes(roslite_cdr_writer *w, const void *bytes, size_t n)
{
  if (n == 0 || !roslite_cdr_reserve(w, n)) {
    return;
  }
  memcpy(w->buf->data + w->buf->length, bytes, n);
  w->buf->length += n;
}

static inline void roslite_cdr_writer_init(roslite_cdr_writer *w, roslite_cdr_buffer *buf)
{
  static const uint8_t header[ROSLITE_CDR_HEADER_LENGTH] = {0x00, 0x01, 0x00, 0x00};
  w->buf = buf;
  w->ok = buf != NULL;
  if (w->ok) {
    buf->length = 0;
    roslite_cdr_put_bytes(w, header, sizeof(header));
  }
}

static inline void roslite_cdr_align(roslite_cdr_writer *w, size_t alignment)
{
  size_t misalignment = (w->buf->length - ROSLITE_CDR_HEADER_LENGTH) & (alignment - 1);
  if (misalignment != 0 && roslite_cdr_reserve(w, alignment - misalignment)) {
    memset(w->buf->data + w->buf->length, 0, alignment - misalignment);
    w->buf->length += alignment - misalignment;
  }
}

/* `n` little-endian bytes of an unsigned value, aligned to `n`. */
static inline void roslite_cdr_put_le(roslite_cdr_writer *w, uint64_t bits, size_t n)
{
  uint8_t bytes[8];
  roslite_cdr_align(w, n);
  for (size_t i = 0; i < n; ++i) {
    bytes[i] = (uint8_t)(bits >> (8 * i));
  }
  roslite_cdr_put_bytes(w, bytes, n);
}

static inline void roslite_cdr_put_bool(roslite_cdr_writer *w, bool v)
{
  uint8_t b = v ? 1 : 0;
  roslite_cdr_put_bytes(w, &b, 1);
}
static inline void roslite_cdr_put_u8(roslite_cdr_writer *w, uint8_t v) {roslite_cdr_put_bytes(w, &v, 1);}
static inline void roslite_cdr_put_i8(roslite_cdr_writer *w, int8_t v) {roslite_cdr_put_bytes(w, &v, 1);}
static inline void roslite_cdr_put_u16(roslite_cdr_writer *w, uint16_t v) {roslite_cdr_put_le(w, v, 2);}
static inline void roslite_cdr_put_i16(roslite_cdr_writer *w, int16_t v) {roslite_cdr_put_le(w, (uint16_t)v, 2);}
static inline void roslite_cdr_put_u32(roslite_cdr_writer *w, uint32_t v) {roslite_cdr_put_le(w, v, 4);}
static inline void roslite_cdr_put_i32(roslite_cdr_writer *w, int32_t v) {roslite_cdr_put_le(w, (uint32_t)v, 4);}
static inline void roslite_cdr_put_u64(roslite_cdr_writer *w, uint64_t v) {roslite_cdr_put_le(w, v, 8);}
static inline void roslite_cdr_put_i64(roslite_cdr_writer *w, int64_t v) {roslite_cdr_put_le(w, (uint64_t)v, 8);}
static inline void roslite_cdr_put_f32(roslite_cdr_writer *w, float v)
{
  uint32_t bits;
  memcpy(&bits, &v, 4);
  roslite_cdr_put_le(w, bits, 4);
}
static inline void roslite_cdr_put_f64(roslite_cdr_writer *w, double v)
{
  uint64_t bits;
  memcpy(&bits, &v, 8);
  roslite_cdr_put_le(w, bits, 8);
}

static inline void roslite_cdr_put_bounded_len(roslite_cdr_writer *w, size_t n, size_t bound)
{
  if (n > bound || n > 0xffffffffu) {
    w->ok = false;
    return;
  }
  roslite_cdr_put_u32(w, (uint32_t)n);
}

static inline void roslite_cdr_put_string(
  roslite_cdr_writer *w, const roslite__String *s, size_t bound)
{
  const unsigned char *data = (const unsigned char *)s->data;
  if ((data == NULL && s->size != 0) || s->size > bound || s->size >= 0xffffffffu ||
    (s->size != 0 && memchr(data, 0, s->size) != NULL) ||
    (s->size != 0 && !roslite_cdr_valid_utf8(data, s->size)))
  {
    w->ok = false;
    return;
  }
  roslite_cdr_put_u32(w, (uint32_t)(s->size + 1));
  roslite_cdr_put_bytes(w, data, s->size);
  roslite_cdr_put_u8(w, 0);
}

static inline void roslite_cdr_put_wstring(
  roslite_cdr_writer *w, const roslite__U16String *s, size_t bound)
{
  if ((s->data == NULL && s->size != 0) || s->size > bound || s->size > 0xffffffffu ||
    (s->size != 0 && !roslite_cdr_valid_utf16(s->data, s->size)))
  {
    w->ok = false;
    return;
  }
  roslite_cdr_put_u32(w, (uint32_t)s->size);
  for (size_t i = 0; i < s->size; ++i) {
    roslite_cdr_put_u32(w, s->data[i]);
  }
}

/* The elements of a primitive array or sequence (`size`-byte numbers), aligned once; nothing
 * at all for none. */
static inline void roslite_cdr_put_array(
  roslite_cdr_writer *w, const void *values, size_t n, size_t size)
{
  if (n == 0) {
    return;
  }
  if (n > SIZE_MAX / size) {
    w->ok = false;
    return;
  }
  roslite_cdr_align(w, size);
  if (size == 1 || roslite_cdr_host_is_little_endian()) {
    roslite_cdr_put_bytes(w, values, n * size);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    uint8_t bytes[8];
    for (size_t k = 0; k < size; ++k) {
      bytes[k] = ((const uint8_t *)values)[i * size + size - 1 - k];
    }
    roslite_cdr_put_bytes(w, bytes, size);
  }
}

/* ---- Reader ------------------------------------------------------------------------------- */

typedef struct roslite_cdr_reader
{
  const uint8_t *data;
  size_t size;
  size_t pos;
  bool big_endian;
} roslite_cdr_reader;

/* False for anything but a CDR_LE or CDR_BE encapsulation header. */
static inline bool roslite_cdr_reader_init(
  roslite_cdr_reader *r, const uint8_t *data, size_t size)
{
  r->data = data;
  r->size = size;
  r->pos = size;
  r->big_endian = false;
  if (data == NULL || size < ROSLITE_CDR_HEADER_LENGTH || data[0] != 0x00 || data[1] > 0x01) {
    return false;
  }
  r->big_endian = data[1] == 0x00;
  r->pos = ROSLITE_CDR_HEADER_LENGTH;
  return true;
}

static inline size_t roslite_cdr_remaining(const roslite_cdr_reader *r)
{
  return r->size - r->pos;
}

static inline bool roslite_cdr_get_align(roslite_cdr_reader *r, size_t alignment)
{
  size_t misalignment = (r->pos - ROSLITE_CDR_HEADER_LENGTH) & (alignment - 1);
  if (misalignment == 0) {
    return true;
  }
  if (roslite_cdr_remaining(r) < alignment - misalignment) {
    return false;
  }
  r->pos += alignment - misalignment;
  return true;
}

static inline uint64_t roslite_cdr_load(const roslite_cdr_reader *r, const uint8_t *p, size_t n)
{
  uint64_t bits = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t shift = r->big_endian ? 8 * (n - 1 - i) : 8 * i;
    bits |= (uint64_t)p[i] << shift;
  }
  return bits;
}

/* An `n`-byte number, aligned to `n`. */
static inline bool roslite_cdr_get_le(roslite_cdr_reader *r, uint64_t *bits, size_t n)
{
  if (!roslite_cdr_get_align(r, n) || roslite_cdr_remaining(r) < n) {
    return false;
  }
  *bits = roslite_cdr_load(r, r->data + r->pos, n);
  r->pos += n;
  return true;
}

static inline bool roslite_cdr_get_bool(roslite_cdr_reader *r, bool *v)
{
  if (roslite_cdr_remaining(r) < 1 || r->data[r->pos] > 1) {
    return false;
  }
  *v = r->data[r->pos++] == 1;
  return true;
}

#define ROSLITE__CDR_GET(NAME, TYPE, BITS_TYPE, SIZE) \
  static inline bool roslite_cdr_get_##NAME(roslite_cdr_reader *r, TYPE *v) \
  { \
    uint64_t bits; \
    BITS_TYPE narrow; \
    if (!roslite_cdr_get_le(r, &bits, SIZE)) { \
      return false; \
    } \
    narrow = (BITS_TYPE)bits; \
    memcpy(v, &narrow, SIZE); \
    return true; \
  }

ROSLITE__CDR_GET(u8, uint8_t, uint8_t, 1)
ROSLITE__CDR_GET(i8, int8_t, uint8_t, 1)
ROSLITE__CDR_GET(u16, uint16_t, uint16_t, 2)
ROSLITE__CDR_GET(i16, int16_t, uint16_t, 2)
ROSLITE__CDR_GET(u32, uint32_t, uint32_t, 4)
ROSLITE__CDR_GET(i32, int32_t, uint32_t, 4)
ROSLITE__CDR_GET(u64, uint64_t, uint64_t, 8)
ROSLITE__CDR_GET(i64, int64_t, uint64_t, 8)
ROSLITE__CDR_GET(f32, float, uint32_t, 4)
ROSLITE__CDR_GET(f64, double, uint64_t, 8)
#undef ROSLITE__CDR_GET

/* A count whose `min_element_size`-byte elements fit in what remains, and at most `bound`. */
static inline bool roslite_cdr_get_len(
  roslite_cdr_reader *r, size_t *n, size_t min_element_size, size_t bound)
{
  uint32_t count;
  if (!roslite_cdr_get_u32(r, &count)) {
    return false;
  }
  if (min_element_size != 0 && count > roslite_cdr_remaining(r) / min_element_size) {
    return false;
  }
  if (count > bound) {
    return false;
  }
  *n = count;
  return true;
}

static inline bool roslite_cdr_get_string(
  roslite_cdr_reader *r, roslite__String *s, size_t bound)
{
  size_t n;
  if (!roslite_cdr_get_len(r, &n, 1, ROSLITE_CDR_UNBOUNDED) || n == 0 ||
    r->data[r->pos + n - 1] != 0)
  {
    return false;
  }
  /* A bound is read as leniently as any ROS 2 client library writes it: in characters
   * (rclpy), so `bound` characters are accepted even when their UTF-8 is longer. Sent
   * strings are held to bytes (roslite_cdr_put_string), as rclcpp counts them. */
  const uint8_t *text = r->data + r->pos;
  if (!roslite_cdr_valid_utf8(text, n - 1) ||
    (n - 1 > bound && roslite_cdr_utf8_chars(text, n - 1) > bound))
  {
    return false;
  }
  if (!roslite__String__assignn(s, (const char *)text, n - 1)) {
    return false;
  }
  r->pos += n;
  return true;
}

static inline bool roslite_cdr_get_wstring(
  roslite_cdr_reader *r, roslite__U16String *s, size_t bound)
{
  size_t n;
  /* Read in characters, as rclpy counts the bound (rclcpp counts UTF-16 units): at most two
   * units a character, refused before anything is allocated. */
  if (!roslite_cdr_get_len(r, &n, 4, ROSLITE_CDR_UNBOUNDED) || n - n / 2 > bound) {
    return false;
  }
  roslite__U16String out = {NULL, 0, 0};
  if (n != 0) {
    out.data = (uint16_t *)calloc(n, sizeof(uint16_t));
    if (out.data == NULL) {
      return false;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    uint32_t unit;
    if (!roslite_cdr_get_u32(r, &unit) || unit > 0xffff) {
      free(out.data);
      return false;
    }
    out.data[i] = (uint16_t)unit;
  }
  bool ok = roslite_cdr_valid_utf16(out.data, n) &&
    (n <= bound || roslite_cdr_utf16_chars(out.data, n) <= bound) &&
    roslite__U16String__assignn(s, out.data, n);
  free(out.data);
  return ok;
}

/* `n` numbers of `size` bytes (no count), aligned once unless there are none. */
static inline bool roslite_cdr_get_array(
  roslite_cdr_reader *r, void *values, size_t n, size_t size)
{
  if (n == 0) {
    return true;
  }
  if (!roslite_cdr_get_align(r, size) || roslite_cdr_remaining(r) / size < n) {
    return false;
  }
  const uint8_t *src = r->data + r->pos;
  if (size == 1 || r->big_endian != roslite_cdr_host_is_little_endian()) {
    memcpy(values, src, n * size);
  } else {
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < size; ++k) {
        ((uint8_t *)values)[i * size + k] = src[i * size + size - 1 - k];
      }
    }
  }
  r->pos += n * size;
  return true;
}

/* Bools (no count): each byte must be 0 or 1. */
static inline bool roslite_cdr_get_bools(roslite_cdr_reader *r, bool *values, size_t n)
{
  for (size_t i = 0; i < n; ++i) {
    if (!roslite_cdr_get_bool(r, &values[i])) {
      return false;
    }
  }
  return true;
}

#ifdef __cplusplus
}
#endif

#endif /* ROSLITE__CDR_H_ */
