/*
 * The open-file table: MPI_File handle -> what the data-access wrappers need
 * to describe an access (the path sent to POSIX, whether the view is
 * contiguous, the open split collective). Readers on the hot path take no
 * lock; open and close, which are rare, serialise on a mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_layer.h"

/* A power of two. Files beyond it are still accessed, just not linked to
 * POSIX; 4096 open MPI files per process is far beyond real codes. */
#define SLOTS 4096u
#define TOMBSTONE ((struct siox_mpi_file *)1)

static _Atomic(struct siox_mpi_file *) slots[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint32_t slot_of(MPI_File fh) {
  uint64_t k = (uint64_t)(uintptr_t)fh;
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return (uint32_t)k & (SLOTS - 1);
}

struct siox_mpi_file *siox__mpi_file_find(MPI_File fh) {
  uint32_t s = slot_of(fh);
  for (uint32_t n = 0; n < SLOTS; n++, s = (s + 1) & (SLOTS - 1)) {
    struct siox_mpi_file *e = atomic_load_explicit(&slots[s], memory_order_acquire);
    if (e == NULL) return NULL;
    if (e != TOMBSTONE && e->fh == fh) return e;
  }
  return NULL;
}

/* The entry is owned by the table from here until siox__mpi_file_remove. */
struct siox_mpi_file *siox__mpi_file_add(MPI_File fh, const char *path) {
  struct siox_mpi_file *e = calloc(1, sizeof *e);
  if (!e || !(e->path = strdup(path))) {
    free(e);
    return NULL;
  }
  e->fh = fh;
  e->path_len = (uint32_t)strlen(path);
  e->view_contig = 1; /* the default view: etype = filetype = MPI_BYTE */
  e->etype_size = 1;
  e->order_comm = MPI_COMM_NULL;
  pthread_mutex_lock(&lock);
  uint32_t s = slot_of(fh), n = 0;
  for (; n < SLOTS; n++, s = (s + 1) & (SLOTS - 1)) {
    struct siox_mpi_file *old = atomic_load_explicit(&slots[s], memory_order_relaxed);
    if (old == NULL || old == TOMBSTONE) break;
  }
  if (n < SLOTS) atomic_store_explicit(&slots[s], e, memory_order_release);
  pthread_mutex_unlock(&lock);
  if (n == SLOTS) {
    free(e->path);
    free(e);
    return NULL;
  }
  return e;
}

void siox__mpi_file_remove(MPI_File fh) {
  struct siox_mpi_file *e = NULL;
  pthread_mutex_lock(&lock);
  uint32_t s = slot_of(fh);
  for (uint32_t n = 0; n < SLOTS; n++, s = (s + 1) & (SLOTS - 1)) {
    struct siox_mpi_file *cur = atomic_load_explicit(&slots[s], memory_order_relaxed);
    if (cur == NULL) break;
    if (cur != TOMBSTONE && cur->fh == fh) {
      atomic_store_explicit(&slots[s], TOMBSTONE, memory_order_release);
      e = cur;
      break;
    }
  }
  pthread_mutex_unlock(&lock);
  if (!e) return;
  if (e->order_comm != MPI_COMM_NULL) PMPI_Comm_free(&e->order_comm);
  if (e->split) siox_detached_stop(e->split); /* never left dangling */
  free(e->path);
  free(e);
}
