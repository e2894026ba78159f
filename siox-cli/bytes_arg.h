/*
 * Byte-count arguments ("0", "65536", "512K", "64M", "2G": K, M, G are
 * powers of 1024), e.g. capacity's --client-cache.
 */
#ifndef SIOX_CLI_BYTES_ARG_H
#define SIOX_CLI_BYTES_ARG_H

#include <stdint.h>

/* Parses s into *out. 0, or -EINVAL (not a count, a sign, another suffix,
 * beyond 2^64 - 1); *out untouched then. */
int siox_bytes_arg(const char *s, uint64_t *out);

#endif
