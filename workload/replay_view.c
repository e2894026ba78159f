/*
 * File views on replay (README.md, "mpi_view"). A recorded MPI-IO access
 * holds the file byte where its data starts; under a strided view (a block
 * of B data bytes every E bytes from FIRST) the job's call moved B bytes of
 * every tile, and ROMIO turned it into what such an access costs: data
 * sieving's read-modify-write of the whole span for an independent write,
 * two-phase exchange for a collective one. Written contiguously at that
 * byte, as format 2 did, the same call is another, cheaper access: the
 * strided job's writes replayed 3 times faster on the testbed. So the
 * replay sets the job's view (siox_wl_view_pos gives the view position of
 * the recorded byte), and its plan finds every rank's view of a file as it
 * goes through all records.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "replay.h"

int replay_view_set(MPI_File fh, const struct siox_wl_rec *v) {
  if (!siox_wl_view_strided(v))
    return MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL) == MPI_SUCCESS ? 0 : -EIO;
  MPI_Datatype block, tile;
  if (v->bytes > INT_MAX || MPI_Type_contiguous((int)v->bytes, MPI_BYTE, &block) != MPI_SUCCESS) return -EINVAL;
  int rc = MPI_Type_create_resized(block, 0, (MPI_Aint)v->extent, &tile);
  MPI_Type_free(&block);
  if (rc != MPI_SUCCESS) return -EINVAL;
  rc = MPI_Type_commit(&tile) == MPI_SUCCESS &&
               MPI_File_set_view(fh, (MPI_Offset)v->offset, MPI_BYTE, tile, "native", MPI_INFO_NULL) == MPI_SUCCESS
           ? 0
           : -EIO;
  MPI_Type_free(&tile);
  return rc;
}

/* ---- every rank's views, for the plan's pass over all records ---------- */

struct replay_views {
  struct slot {
    uint64_t key; /* rank * nfiles + fid + 1; 0: free */
    const struct siox_wl_rec *v;
  } *s;
  size_t cap, n, nfiles;
};

static int grow(struct replay_views *t);

static struct slot *find(const struct replay_views *t, uint64_t key) {
  size_t i = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (t->cap - 1);
  while (t->s[i].key && t->s[i].key != key) i = (i + 1) & (t->cap - 1);
  return &t->s[i];
}

struct replay_views *replay_views_new(size_t nfiles) {
  struct replay_views *t = calloc(1, sizeof(*t));
  if (t) t->nfiles = nfiles ? nfiles : 1;
  return t;
}

int replay_views_set(struct replay_views *t, const struct siox_wl_rec *r) {
  if (2 * (t->n + 1) > t->cap && grow(t)) return -ENOMEM;
  uint64_t key = (uint64_t)r->rank * t->nfiles + r->fid + 1;
  struct slot *s = find(t, key);
  t->n += !s->key;
  s->key = key;
  s->v = r;
  return 0;
}

static int grow(struct replay_views *t) {
  struct replay_views n = {calloc(t->cap ? 2 * t->cap : 64, sizeof(struct slot)), t->cap ? 2 * t->cap : 64, t->n,
                           t->nfiles};
  if (!n.s) return -ENOMEM;
  for (size_t i = 0; i < t->cap; i++)
    if (t->s[i].key) *find(&n, t->s[i].key) = t->s[i];
  free(t->s);
  *t = n;
  return 0;
}

const struct siox_wl_rec *replay_views_get(const struct replay_views *t, const struct siox_wl_rec *r) {
  if (!t->cap) return NULL;
  const struct slot *s = find(t, (uint64_t)r->rank * t->nfiles + r->fid + 1);
  return s->key ? s->v : NULL;
}

void replay_views_free(struct replay_views *t) {
  if (t) free(t->s);
  free(t);
}
