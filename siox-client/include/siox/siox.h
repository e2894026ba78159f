/*
 * libsiox-client: the C API through which an instrumented layer reports nodes,
 * descriptors and activities. Records go into a per-thread buffer and a
 * background thread ships them to the node's siox-daemon over a unix socket.
 *
 * Conventions (as in libuv):
 *  - Functions returning int return 0 or a negative errno value.
 *  - The hot-path calls (activity start/attr/stop) return nothing: they never
 *    fail visibly, never block, never allocate and never make a system call.
 *    When a record cannot be kept (buffer full, stack too deep) it is counted
 *    in siox_stats.dropped and the application goes on.
 *  - Strings passed in are copied before the call returns; the caller keeps
 *    ownership of everything it passes.
 *  - Every function is thread-safe. After fork() the child starts with fresh,
 *    empty state (its own buffers, a new process identity, no pending records
 *    of the parent) and reconnects to the daemon on its own.
 *
 * Identifiers:
 *  - siox_unid names a node registered by this process (process-local handle).
 *  - siox_aid names an activity of this process (process-local, never 0).
 *    The server turns it into a global AID: (process id << 32) | aid.
 *  - Attribute ids come from the generated ontology header (SIOX_ATTR_*).
 *
 * Timestamps are nanoseconds since the Unix epoch (CLOCK_REALTIME) as seen by
 * the daemon. The hot path reads the TSC (rdtsc, ~11 ns on these machines,
 * against ~26 ns for clock_gettime); the buffer carries (tsc, realtime) pairs
 * taken by the background thread, and the daemon converts by interpolation.
 * On machines without an invariant TSC the client falls back to
 * clock_gettime(CLOCK_REALTIME).
 */
#ifndef SIOX_SIOX_H
#define SIOX_SIOX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <siox/siox_ontology.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t siox_unid;      /* 0 = no node */
typedef uint64_t siox_aid;       /* 0 = no activity */
typedef uint32_t siox_type_id;   /* activity type (a name on a node), 0 = invalid */
typedef uint32_t siox_target_id; /* a remote node named by HWID/SWID, 0 = any */

/* Environment variables read at initialisation. */
#define SIOX_ENV_SOCKET "SIOX_SOCKET"        /* daemon socket path */
#define SIOX_ENV_BUFFER "SIOX_BUFFER_KB"     /* per-thread buffer size */
#define SIOX_ENV_DISABLE "SIOX_DISABLE"      /* "1": record nothing */
#define SIOX_ENV_JOB "SIOX_JOB_ID"           /* job id, else SLURM_JOB_ID/PBS_JOBID */
#define SIOX_ENV_EXIT_TIMEOUT "SIOX_EXIT_TIMEOUT_MS" /* max wait to flush at exit */
#define SIOX_DEFAULT_SOCKET "/run/siox/daemon.sock"

/* ------------------------------------------------------------------------
 * Life cycle. Initialisation is lazy: the first call of any function below
 * initialises the library from the environment. siox_init() only lets a
 * caller pick options explicitly (tests, the launcher).
 * ------------------------------------------------------------------------ */
struct siox_options {
  const char *socket_path;   /* NULL: $SIOX_SOCKET or SIOX_DEFAULT_SOCKET */
  size_t buffer_bytes;       /* per-thread buffer; 0: $SIOX_BUFFER_KB or 4 MiB */
  unsigned flush_interval_ms;/* background flush period; 0: 20 ms */
  unsigned exit_timeout_ms;  /* how long exit may wait for the daemon; 0: 1000 */
};

/* Initialises with explicit options. Returns -EALREADY when already
 * initialised (options are then ignored), -EINVAL on bad options. */
int siox_init(const struct siox_options *opt);

/* Flushes every buffer to the daemon, waiting at most the exit timeout, and
 * stops the background thread. Called automatically at process exit. */
int siox_finalize(void);

/* Asks the background thread to ship everything buffered so far and waits
 * up to timeout_ms for it to be written to the daemon. Returns 0, or
 * -ETIMEDOUT, or -ENOTCONN when no daemon is reachable. */
int siox_flush(unsigned timeout_ms);

struct siox_stats {
  uint64_t activities;  /* activities recorded */
  uint64_t records;     /* records of any kind written to buffers */
  uint64_t dropped;     /* records lost: buffer full, stack overflow, no daemon */
  uint64_t bytes_sent;  /* bytes written to the daemon */
  int connected;        /* 1 while a daemon connection is up */
  uint64_t dropped_exit; /* activities finalize could not hand to a daemon
                            (counted, and left in <socket>.lost/ for it) */
};
/* Fills *out with this process's counters. */
int siox_stats_get(struct siox_stats *out);

/* ------------------------------------------------------------------------
 * Nodes: a layer on a piece of hardware. UNID = (HWID, SWID, IID).
 * ------------------------------------------------------------------------ */

/* Registers a node; iid may be NULL. Registering the same triple twice returns
 * the same handle. Returns -EINVAL for empty/oversized (>255 bytes) strings. */
int siox_node_register(const char *hwid, const char *swid, const char *iid, siox_unid *out);

/* Records that node `from` uses node `to`. */
int siox_edge_register(siox_unid from, siox_unid to);

/* Sets a node attribute. The attribute's ontology type must match the call,
 * else -EINVAL. */
int siox_node_attr_u64(siox_unid node, uint32_t attr, uint64_t v);
int siox_node_attr_f64(siox_unid node, uint32_t attr, double v);
int siox_node_attr_str(siox_unid node, uint32_t attr, const char *v);

/* Registers an activity type (a name such as "write") on a node. Registering
 * the same (node, name) twice returns the same id. */
int siox_activity_type_register(siox_unid node, const char *name, siox_type_id *out);

/* Names a node of another process or host, by HWID and SWID, as the target
 * of remote calls. Either may be NULL or "*" to match any. */
int siox_target_register(const char *hwid, const char *swid, siox_target_id *out);

/* ------------------------------------------------------------------------
 * Descriptors: what identifies the object an activity works on. The type is
 * an ontology attribute with a scope (SIOX_SCOPE_*); its value is an integer
 * (u64/i64 types), a string (str) or bytes (bytes, at most 64).
 * ------------------------------------------------------------------------ */
typedef struct {
  uint32_t type;       /* SIOX_ATTR_* of a descriptor type */
  uint32_t len;        /* bytes in v.ptr for str/bytes types; 0 for integers */
  union {
    uint64_t u64;
    int64_t i64;
    const void *ptr;
  } v;
} siox_desc;

static inline siox_desc siox_desc_int(uint32_t type, int64_t v) {
  siox_desc d;
  d.type = type;
  d.len = 0;
  d.v.i64 = v;
  return d;
}
static inline siox_desc siox_desc_str(uint32_t type, const char *s) {
  siox_desc d;
  d.type = type;
  d.len = (uint32_t)strlen(s);
  d.v.ptr = s;
  return d;
}
static inline siox_desc siox_desc_bytes(uint32_t type, const void *p, uint32_t len) {
  siox_desc d;
  d.type = type;
  d.len = len;
  d.v.ptr = p;
  return d;
}

/* The activity `aid` (may be 0) created descriptor d on node. */
int siox_descriptor_create(siox_unid node, siox_aid aid, const siox_desc *d);
/* `to` is derived from `from` on node (path -> fd, fd -> dup'ed fd, fd -> gfid). */
int siox_descriptor_map(siox_unid node, siox_aid aid, const siox_desc *from, const siox_desc *to);
/* Activity aid hands descriptor d, bytes [offset, offset+len), to the layer
 * below on another process or host (target may be 0: any node). This is the
 * sending side of an implicit cross-process link. */
int siox_descriptor_send(siox_aid aid, siox_target_id target, const siox_desc *d, uint64_t offset, uint64_t len);
/* Activity aid received descriptor d with bytes [offset, offset+len) from a
 * layer above in another process. The receiving side of an implicit link. */
int siox_descriptor_receive(siox_aid aid, const siox_desc *d, uint64_t offset, uint64_t len);
/* The descriptor is no longer valid on node (close). */
int siox_descriptor_release(siox_unid node, siox_aid aid, const siox_desc *d);

/* ------------------------------------------------------------------------
 * Activities (hot path). An activity is open between start and stop. The
 * activity on top of the calling thread's stack becomes the parent of an
 * activity started with siox_activity_start(); use _start_child() when the
 * layer knows the parent (another thread of this process).
 * Returns 0 when the activity could not be recorded (disabled, stack deeper
 * than 64, invalid type, or the calling thread is inside libsiox-client:
 * see siox_internal_in_library); every other call accepts 0 and does nothing.
 * ------------------------------------------------------------------------ */
siox_aid siox_activity_start(siox_type_id type);
siox_aid siox_activity_start_child(siox_type_id type, siox_aid parent);
void siox_activity_attr_u64(siox_aid aid, uint32_t attr, uint64_t v);
void siox_activity_attr_i64(siox_aid aid, uint32_t attr, int64_t v);
void siox_activity_attr_f64(siox_aid aid, uint32_t attr, double v);
/* String attributes are copied into the buffer at once (slower path). */
void siox_activity_attr_str(siox_aid aid, uint32_t attr, const char *v);
/* Records an error code (errno value, or a layer's own code) for aid. */
void siox_activity_error(siox_aid aid, int32_t err);
/* Ends aid. Stopping an activity that is not on top of the stack (nonblocking
 * I/O completed later) is allowed. Stopping an unknown aid is ignored. */
void siox_activity_stop(siox_aid aid);

/* One numeric attribute for siox_activity_stop_attrs. vtype is the
 * attribute's ontology type (SIOX_VT_U64, SIOX_VT_I64 or SIOX_VT_F64); the
 * layout is the wire's, so the record is written without conversion. */
struct siox_attr {
  uint32_t attr;
  uint32_t vtype;
  union {
    uint64_t u64;
    int64_t i64;
    double f64;
  } v;
};
/* Adds the n attributes (as n attr calls would; beyond the per-activity
 * limit they count as drops), records err when it is not 0, and ends aid:
 * one call on the hot path of a wrapper instead of n + 2. */
void siox_activity_stop_attrs(siox_aid aid, const struct siox_attr *attrs, unsigned n, int32_t err);

/* The activity on top of the calling thread's stack, or 0. */
siox_aid siox_activity_current(void);

/* ------------------------------------------------------------------------
 * Detached activities: started in one thread and stopped in any thread
 * (asynchronous completions: nonblocking MPI-IO, GlusterFS fops unwinding on
 * another thread). They never sit on a thread's stack, so they are not the
 * automatic parent of anything; give children their aid explicitly with
 * siox_activity_start_child(). Attributes, error and stop take the handle,
 * not the aid, and may be called from any thread but not concurrently for one
 * handle. Returns NULL when no slot is free (counted as a drop).
 * ------------------------------------------------------------------------ */
typedef struct siox_detached siox_detached;
siox_detached *siox_activity_start_detached(siox_type_id type, siox_aid parent);
siox_aid siox_detached_aid(const siox_detached *a);
void siox_detached_attr_u64(siox_detached *a, uint32_t attr, uint64_t v);
void siox_detached_attr_i64(siox_detached *a, uint32_t attr, int64_t v);
void siox_detached_error(siox_detached *a, int32_t err);
/* Ends the activity and frees the handle. */
void siox_detached_stop(siox_detached *a);

#ifdef __cplusplus
}
#endif
#endif
