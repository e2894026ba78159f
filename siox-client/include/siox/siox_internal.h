/*
 * libsiox-client internals that instrumentation wrappers (LD_PRELOAD POSIX,
 * PMPI, ...) need, and nothing an application should call.
 */
#ifndef SIOX_SIOX_INTERNAL_H
#define SIOX_SIOX_INTERNAL_H

#ifdef __cplusplus
extern "C" {
#endif

/* Returns 1 when the calling thread is inside libsiox-client: it is the
 * library's background flusher thread (always), or it is executing a
 * library call that may make system calls of its own (initialisation,
 * registration, flush, finalize, fork handlers). A wrapper of write(),
 * connect(), socket(), readlink(), ... must then pass the call straight to
 * the real function and record nothing, or SIOX would trace (and recurse
 * into) its own traffic to the daemon. The flag lives in initial-exec TLS;
 * the call makes no system call and takes no lock. */
int siox_internal_in_library(void);

#ifdef __cplusplus
}
#endif
#endif
