/*
 * Life cycle of the POSIX layer in a process: set up in the constructor,
 * register the POSIX and stdio nodes and each activity type
 * with libsiox-client on the first call of that type (a process pays only
 * for what it calls: a preloaded /bin/true registers nothing), and forget
 * file positions in a fork child. Also the MPI-IO hooks.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "posix.h"
#include "siox_posix_hooks.h"

SXP_TLS int sxp__guard;
SXP_TLS int sxp__mpiio_depth;
SXP_TLS uint64_t sxp__mpiio_lowest = SXP_POS_UNKNOWN;
SXP_TLS const char *sxp__mpiio_watch;
SXP_TLS uint32_t sxp__mpiio_watch_len;
struct sxp_reg sxp__reg;
_Atomic int sxp__state = SXP_STATE_NONE;
int sxp__pid;

#define SXP_TYPE_NAME(e, name, node) name,
static const char *const type_names[SXP_T_COUNT] = {SXP_TYPE_LIST(SXP_TYPE_NAME)};
#define SXP_TYPE_NODE(e, name, node) SXP_NODE_##node,
static const unsigned char type_nodes[SXP_T_COUNT] = {SXP_TYPE_LIST(SXP_TYPE_NODE)};

/* Serialises the first registration of each type (the rare path). */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static int nodes_done; /* under reg_lock */

/* Parent and child share every open file offset from now on, and either
 * may move it: both learn each one again (one lseek) on first use. */
static void fork_parent(void) {
  sxp_fd_forget_positions();
}

static void fork_child(void) {
  /* Another thread may have held it at fork; registration is idempotent in
   * the client, so a half-done one is simply done again. */
  pthread_mutex_init(&reg_lock, NULL);
  sxp__pid = getpid();
  sxp_fd_forget_positions();
}

/* The nodes, their edge and the GlusterFS target; reg_lock held. Returns 0
 * or a negative errno (a node id of 0: the client records nothing). */
static int register_nodes(void) {
  char host[256] = "localhost";
  if (gethostname(host, sizeof host - 1) < 0) strcpy(host, "localhost");
  int rc = siox_node_register(host, "POSIX", NULL, &sxp__reg.node[SXP_NODE_POSIX]);
  if (rc == 0) rc = siox_node_register(host, "stdio", NULL, &sxp__reg.node[SXP_NODE_STDIO]);
  if (rc == 0 && (!sxp__reg.node[SXP_NODE_POSIX] || !sxp__reg.node[SXP_NODE_STDIO])) rc = -ENODEV;
  if (rc == 0) rc = siox_edge_register(sxp__reg.node[SXP_NODE_STDIO], sxp__reg.node[SXP_NODE_POSIX]);
  if (rc == 0) rc = siox_target_register("*", "GlusterFS-client", &sxp__reg.gluster);
  return rc;
}

/* A type that cannot be registered turns the layer off: the client records
 * nothing (SIOX disabled, out of memory), and without this every later call
 * would take reg_lock and gethostname again only to fail the same way. */
siox_type_id sxp__type_slow(enum sxp_type t) {
  /* The client's own call (the flusher reading its eventfd, the exit
   * flush): recorded never, so registered not for it. It cost every
   * process a "read" type, and the exit flush a second send for it. */
  if (siox_internal_in_library()) return 0;
  sxp__guard++;
  pthread_mutex_lock(&reg_lock);
  siox_type_id id = sxp__reg.type[t];
  if (id == 0 && (nodes_done || (nodes_done = register_nodes() == 0)) &&
      siox_activity_type_register(sxp__reg.node[type_nodes[t]], type_names[t], &id) == 0 && id != 0)
    /* Release: whoever reads the type non-zero also sees the nodes. */
    __atomic_store_n(&sxp__reg.type[t], id, __ATOMIC_RELEASE);
  if (id == 0) atomic_store_explicit(&sxp__state, SXP_STATE_OFF, memory_order_release);
  pthread_mutex_unlock(&reg_lock);
  sxp__guard--;
  return id;
}

int sxp__setup(void) {
  int expect = SXP_STATE_NONE;
  if (!atomic_compare_exchange_strong(&sxp__state, &expect, SXP_STATE_BUSY))
    return expect == SXP_STATE_ON;
  sxp__guard++;
  const char *off = getenv(SIOX_ENV_DISABLE);
  int on = !(off && strcmp(off, "1") == 0);
  sxp__pid = getpid();
  if (on) pthread_atfork(NULL, fork_parent, fork_child);
  sxp__guard--;
  atomic_store_explicit(&sxp__state, on ? SXP_STATE_ON : SXP_STATE_OFF, memory_order_release);
  return on;
}

/* Set up before main, so that the first I/O call never does it inside a
 * signal handler. libc functions are resolved (real.c) and types registered
 * (sxp__type_slow) on their first call. */
__attribute__((constructor)) static void at_load(void) {
  sxp__setup();
}

SXP_EXPORT void siox_posix_mpiio_enter(void) {
  sxp__mpiio_depth++;
}

SXP_EXPORT void siox_posix_mpiio_watch(const char *path, uint32_t len) {
  sxp__mpiio_watch = path;
  sxp__mpiio_watch_len = len;
  sxp__mpiio_lowest = SXP_POS_UNKNOWN;
}

SXP_EXPORT int siox_posix_mpiio_lowest(uint64_t *offset) {
  int seen = sxp__mpiio_watch && sxp__mpiio_lowest != SXP_POS_UNKNOWN;
  if (seen) *offset = sxp__mpiio_lowest;
  sxp__mpiio_watch = NULL;
  return seen;
}

SXP_EXPORT void siox_posix_mpiio_leave(void) {
  if (sxp__mpiio_depth > 0) sxp__mpiio_depth--;
}
