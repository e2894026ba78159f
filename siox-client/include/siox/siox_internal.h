/*
 * libsiox-client internals that instrumentation wrappers (LD_PRELOAD POSIX,
 * PMPI, ...) need, and nothing an application should call.
 */
#ifndef SIOX_SIOX_INTERNAL_H
#define SIOX_SIOX_INTERNAL_H

#include <stdint.h>

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

/* Returns 1 when fd is one of libsiox-client's own descriptors (its
 * connection to the daemon, its flusher's eventfd). They are close-on-exec
 * and live at high numbers, out of the way of the lowest-free numbers an
 * application expects; a wrapper of close(), dup2(), dup3(), close_range()
 * or closefrom() called by the application (not inside the library, see
 * siox_internal_in_library) must not close or replace them: a launcher that
 * closes every descriptor before exec would otherwise cut the library off
 * its daemon, or hand it one of the application's files. Two relaxed
 * atomic loads; no system call. */
int siox_internal_owns_fd(int fd);

/* The library's own descriptors, ascending, into fds (room for
 * SIOX_INTERNAL_OWN_FDS_MAX); returns how many (for close_range wrappers). */
#define SIOX_INTERNAL_OWN_FDS_MAX 4
int siox_internal_own_fds(int *fds);

/* exec() replaces the image without destructors: a wrapper of the exec
 * family calls siox_internal_before_exec first. It ships what the process
 * recorded (bounded by timeout_ms); what cannot be shipped goes into a loss
 * file for the daemon and is counted, exactly as at exit, so nothing made
 * is lost uncounted. Returns 0 when everything was delivered, else a
 * negative errno (the loss is accounted all the same). The process stays
 * usable: when exec fails, the wrapper calls siox_internal_exec_failed,
 * which starts the flusher again. */
int siox_internal_before_exec(unsigned timeout_ms);
void siox_internal_exec_failed(void);

/* ---- hint delivery (src/hints.c) -------------------------------------------
 * The MPI-IO layer asks the node daemon, at MPI_File_open, which hints the
 * knowledge base holds for this process's application (executable and
 * command line, as in its HELLO) and the file. */

/* What an answer is; the values are the wire's (siox_client_wire.h). */
enum siox_hint_status {
  SIOX_HINT_NONE = 0,        /* no hint set for this application and file */
  SIOX_HINT_FOUND = 1,       /* n hints of set hint_set_id */
  SIOX_HINT_SERVER_DOWN = 2, /* the daemon could not ask siox-server */
  SIOX_HINT_DISABLED = 3,    /* the daemon serves no hints (--hints off) */
  SIOX_HINT_ERROR = 4,       /* the lookup failed, or a malformed answer */
  SIOX_HINT_TIMEOUT = 5,     /* no answer within the timeout */
  SIOX_HINT_NO_DAEMON = 6,   /* nothing listens on the daemon socket */
};
#define SIOX_HINT_MAX 32

struct siox_hint_answer {
  int status; /* enum siox_hint_status */
  int64_t hint_set_id;
  char component[32]; /* the MPI-IO component the keys are meant for */
  unsigned n;
  struct {
    char key[64];
    char value[128];
  } hints[SIOX_HINT_MAX]; /* NUL-terminated */
};

/* Asks the daemon (a connection of its own, closed before returning) for
 * the hints for the absolute path opened through MPI-IO component
 * (e.g. "romio321"). Never blocks longer than timeout_ms in all; never
 * raises SIGPIPE. Fills *out (status says why when there are no hints) and
 * returns 0, or -EINVAL for a NULL or overlong argument. Safe to call
 * whether or not recording is enabled; makes no activity of its own. */
int siox_hints_query(const char *path, const char *component, unsigned timeout_ms, struct siox_hint_answer *out);

/* Short name of a status for records and logs: "none", "found",
 * "server-down", "disabled", "error", "timeout", "no-daemon". */
const char *siox_hint_status_name(int status);

#ifdef __cplusplus
}
#endif
#endif
