/*
 * Completion of nonblocking MPI-IO: the table MPI_Request -> detached
 * activity, and the MPI_Wait/Test family, which end an operation's activity
 * when they find its request complete. Requests of other kinds (point to
 * point, collectives) pass through after one atomic load while no file
 * request is pending.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "mpi_layer.h"

/* A power of two. An operation that finds the table full ends at once
 * (its activity then covers only the post): counted nowhere else, so the
 * README names the limit. */
#define SLOTS 1024u
/* Handle arrays up to this size are copied on the stack, larger ones on
 * the heap (only MPI_Waitall-style calls over many requests). */
#define STACK_HANDLES 256

struct slot {
  MPI_Request req;
  siox_detached *d;
};
static struct slot table[SLOTS];
static atomic_uint pending;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint32_t slot_of(MPI_Request r) {
  uint64_t k = (uint64_t)(uintptr_t)r * 0x9e3779b97f4a7c15ULL;
  return (uint32_t)(k >> 40) & (SLOTS - 1);
}

void siox__mpi_request_add(MPI_Request r, siox_detached *d) {
  int added = 0;
  pthread_mutex_lock(&lock);
  uint32_t s = slot_of(r);
  for (uint32_t n = 0; n < SLOTS && !added; n++, s = (s + 1) & (SLOTS - 1)) {
    if (table[s].d != NULL) continue;
    table[s].req = r;
    table[s].d = d;
    atomic_fetch_add(&pending, 1);
    added = 1;
  }
  pthread_mutex_unlock(&lock);
  if (!added) siox_detached_stop(d);
}

/* The activity of request r, removed from the table when take is set. */
static siox_detached *lookup(MPI_Request r, int take) {
  siox_detached *d = NULL;
  if (r == MPI_REQUEST_NULL) return NULL;
  pthread_mutex_lock(&lock);
  uint32_t s = slot_of(r);
  for (uint32_t n = 0; n < SLOTS; n++, s = (s + 1) & (SLOTS - 1)) {
    if (table[s].d == NULL || table[s].req != r) continue;
    d = table[s].d;
    if (take) {
      table[s].d = NULL;
      atomic_fetch_sub(&pending, 1);
    }
    break;
  }
  pthread_mutex_unlock(&lock);
  return d;
}

static inline int none_pending(void) {
  return atomic_load_explicit(&pending, memory_order_relaxed) == 0;
}

/* Ends the activity of the completed request r, if it is a file request. */
static void finish(MPI_Request r, int rc) {
  siox_detached *d = lookup(r, 1);
  if (!d) return;
  if (rc != MPI_SUCCESS) siox_detached_error(d, rc);
  siox_detached_stop(d);
}

/* Starts the stacked "complete" activity (time spent completing a file
 * operation, child of it) when parent is a file operation. */
static siox_aid complete_start(siox_detached *parent) {
  if (!parent) return 0;
  siox__mpi_io_enter();
  return siox_activity_start_child(siox__mpi.type[CALL_COMPLETE], siox_detached_aid(parent));
}

static void complete_stop(siox_detached *parent, siox_aid aid, int rc) {
  if (parent) siox__mpi_stop(aid, rc);
}

/* ---- copies of handle arrays: completion sets them to MPI_REQUEST_NULL */

struct handles {
  MPI_Request *h;
  MPI_Request local[STACK_HANDLES];
  siox_detached *first; /* the first file operation among them */
};

/* Copies reqs when one of them is a file request; returns 1 then. The copy
 * is heap-allocated beyond STACK_HANDLES and freed by handles_done. */
static int handles_take(struct handles *c, int count, const MPI_Request *reqs) {
  c->first = NULL;
  c->h = NULL;
  for (int i = 0; i < count && !c->first; i++) c->first = lookup(reqs[i], 0);
  if (!c->first) return 0;
  c->h = count <= STACK_HANDLES ? c->local : malloc((size_t)count * sizeof *c->h);
  if (!c->h) return 0; /* out of memory: those activities end at close */
  for (int i = 0; i < count; i++) c->h[i] = reqs[i];
  return 1;
}

static void handles_done(struct handles *c) {
  if (c->h && c->h != c->local) free(c->h);
}

/* ---- the Wait/Test family ---- */

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
  if (none_pending()) return PMPI_Wait(req, status);
  MPI_Request r = *req;
  siox_detached *d = lookup(r, 0);
  siox_aid c = complete_start(d);
  int rc = PMPI_Wait(req, status);
  complete_stop(d, c, rc);
  if (d) finish(r, rc);
  return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
  if (none_pending()) return PMPI_Test(req, flag, status);
  MPI_Request r = *req;
  siox_detached *d = lookup(r, 0);
  /* No activity per poll (an application may spin on Test); the depth alone
   * makes POSIX calls made here record their receives. */
  if (d) siox__mpi_io_enter();
  int rc = PMPI_Test(req, flag, status);
  if (d) siox__mpi_io_leave();
  if (d && (rc != MPI_SUCCESS || *flag)) finish(r, rc);
  return rc;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  struct handles c;
  if (none_pending() || !handles_take(&c, count, reqs)) return PMPI_Waitall(count, reqs, statuses);
  siox_aid a = complete_start(c.first);
  int rc = PMPI_Waitall(count, reqs, statuses);
  complete_stop(c.first, a, rc);
  for (int i = 0; i < count; i++) finish(c.h[i], rc);
  handles_done(&c);
  return rc;
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status) {
  struct handles c;
  if (none_pending() || !handles_take(&c, count, reqs)) return PMPI_Waitany(count, reqs, index, status);
  siox_aid a = complete_start(c.first);
  int rc = PMPI_Waitany(count, reqs, index, status);
  complete_stop(c.first, a, rc);
  if (*index != MPI_UNDEFINED && *index >= 0 && *index < count) finish(c.h[*index], rc);
  handles_done(&c);
  return rc;
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
  struct handles c;
  if (none_pending() || !handles_take(&c, incount, reqs))
    return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
  siox_aid a = complete_start(c.first);
  int rc = PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
  complete_stop(c.first, a, rc);
  for (int k = 0; *outcount != MPI_UNDEFINED && k < *outcount; k++) finish(c.h[indices[k]], rc);
  handles_done(&c);
  return rc;
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
  struct handles c;
  if (none_pending() || !handles_take(&c, count, reqs)) return PMPI_Testall(count, reqs, flag, statuses);
  siox__mpi_io_enter();
  int rc = PMPI_Testall(count, reqs, flag, statuses);
  siox__mpi_io_leave();
  for (int i = 0; *flag && i < count; i++) finish(c.h[i], rc);
  handles_done(&c);
  return rc;
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
  struct handles c;
  if (none_pending() || !handles_take(&c, count, reqs)) return PMPI_Testany(count, reqs, index, flag, status);
  siox__mpi_io_enter();
  int rc = PMPI_Testany(count, reqs, index, flag, status);
  siox__mpi_io_leave();
  if (*flag && *index != MPI_UNDEFINED && *index >= 0 && *index < count) finish(c.h[*index], rc);
  handles_done(&c);
  return rc;
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
  struct handles c;
  if (none_pending() || !handles_take(&c, incount, reqs))
    return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
  siox__mpi_io_enter();
  int rc = PMPI_Testsome(incount, reqs, outcount, indices, statuses);
  siox__mpi_io_leave();
  for (int k = 0; *outcount != MPI_UNDEFINED && k < *outcount; k++) finish(c.h[indices[k]], rc);
  handles_done(&c);
  return rc;
}

/* A freed request can no longer be observed: its operation ends here. */
int MPI_Request_free(MPI_Request *req) {
  MPI_Request r = *req;
  int rc = PMPI_Request_free(req);
  if (!none_pending()) finish(r, MPI_SUCCESS);
  return rc;
}
