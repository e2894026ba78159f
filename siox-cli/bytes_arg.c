/* Byte-count arguments (bytes_arg.h). */
#include "bytes_arg.h"

#include <errno.h>
#include <stdlib.h>

int siox_bytes_arg(const char *s, uint64_t *out) {
  char *end;
  if (*s < '0' || *s > '9') return -EINVAL; /* strtoull would take "-1" and " 1" */
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno) return -EINVAL;
  unsigned shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
  if (shift) end++;
  if (*end || v > (UINT64_MAX >> shift)) return -EINVAL;
  *out = (uint64_t)v << shift;
  return 0;
}
