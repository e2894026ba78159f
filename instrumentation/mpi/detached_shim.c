/*
 * Stand-in for the client's detached activities (siox.h) while
 * libsiox-client does not export them yet; the layer uses the client's
 * functions as soon as they resolve (mpi_layer.h, siox__mpi_det_*).
 * An operation must not sit on the application thread's stack, so one
 * helper thread owns them all: it starts each as an explicit child of its
 * parent and stops it when the request completes. Each start and stop is a
 * synchronous hand-off (microseconds), acceptable for nonblocking I/O only.
 * At most 64 operations can be open at once (the helper's stack depth).
 */
#include <pthread.h>
#include <stdlib.h>

#include "mpi_layer.h"

#define MAX_ATTRS 8

struct shim_op {
  siox_type_id type;
  siox_aid parent, aid;
  int nattr;
  struct { uint32_t attr; uint64_t v; } attrs[MAX_ATTRS];
  int32_t err;
};

enum { REQ_NONE, REQ_START, REQ_STOP };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER; /* one request at a time */
static int req_kind, started, broken;
static struct shim_op *req_op;

static void serve(struct shim_op *op, int kind) {
  if (kind == REQ_START) {
    op->aid = siox_activity_start_child(op->type, op->parent);
    return;
  }
  for (int i = 0; i < op->nattr; i++) siox_activity_attr_u64(op->aid, op->attrs[i].attr, op->attrs[i].v);
  if (op->err) siox_activity_error(op->aid, op->err);
  siox_activity_stop(op->aid);
}

static void *helper(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  for (;;) {
    while (req_kind == REQ_NONE) pthread_cond_wait(&cond, &lock);
    serve(req_op, req_kind);
    req_kind = REQ_NONE;
    pthread_cond_broadcast(&cond);
  }
  return NULL;
}

/* A fork child has no helper thread: start a new one on its first use. */
static void after_fork_child(void) {
  started = 0;
  req_kind = REQ_NONE;
  pthread_mutex_init(&lock, NULL);
  pthread_mutex_init(&call_lock, NULL);
  pthread_cond_init(&cond, NULL);
}

/* Runs one request on the helper thread; returns 0 or -1 (no helper). */
static int submit(struct shim_op *op, int kind) {
  pthread_mutex_lock(&call_lock);
  if (!started && !broken) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    broken = pthread_create(&t, &a, helper, NULL) != 0;
    pthread_attr_destroy(&a);
    started = !broken;
    if (started) pthread_atfork(NULL, NULL, after_fork_child);
  }
  if (broken) {
    pthread_mutex_unlock(&call_lock);
    return -1;
  }
  pthread_mutex_lock(&lock);
  req_op = op;
  req_kind = kind;
  pthread_cond_broadcast(&cond);
  while (req_kind != REQ_NONE) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&call_lock);
  return 0;
}

/* The returned handle is owned by the caller until siox__mpi_shim_stop,
 * which frees it. */
siox_detached *siox__mpi_shim_start(siox_type_id type, siox_aid parent) {
  struct shim_op *op = calloc(1, sizeof *op);
  if (!op) return NULL;
  op->type = type;
  op->parent = parent;
  if (submit(op, REQ_START) < 0 || op->aid == 0) {
    free(op);
    return NULL;
  }
  return (siox_detached *)op;
}

siox_aid siox__mpi_shim_aid(const siox_detached *d) {
  return ((const struct shim_op *)d)->aid;
}

void siox__mpi_shim_attr_u64(siox_detached *d, uint32_t attr, uint64_t v) {
  struct shim_op *op = (struct shim_op *)d;
  if (op->nattr < MAX_ATTRS) op->attrs[op->nattr++] = (typeof(op->attrs[0])){attr, v};
}

void siox__mpi_shim_error(siox_detached *d, int32_t err) {
  ((struct shim_op *)d)->err = err;
}

void siox__mpi_shim_stop(siox_detached *d) {
  struct shim_op *op = (struct shim_op *)d;
  submit(op, REQ_STOP);
  free(op);
}
