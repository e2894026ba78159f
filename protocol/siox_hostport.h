/*
 * The HOST:PORT notation of every address SIOX is given (siox-server
 * --listen, siox-daemon --server lists, siox status --server, siox web
 * --listen): a name or IPv4 address, or an IPv6 address in brackets, a
 * colon, and a decimal port.
 */
#ifndef SIOX_HOSTPORT_H
#define SIOX_HOSTPORT_H

#include <stddef.h>

/* Parses the n bytes at s (not necessarily NUL-terminated: an entry of a
 * comma-separated list). Writes the host, brackets removed, NUL-terminated,
 * into host (cap bytes) and the port (0-65535) into *port. 0, or -EINVAL
 * when s is not HOST:PORT: no colon, an empty host, an IPv6 address
 * without brackets, a port that is empty, not all digits or above 65535,
 * or a host that does not fit in cap. Callers that need a port other than
 * 0 check it. */
int siox_hostport_parse(const char *s, size_t n, char *host, size_t cap, int *port);

#endif
