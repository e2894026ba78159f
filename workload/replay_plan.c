/*
 * What every rank knows before the first operation: where each file lives,
 * how large its reads need it to be, which ranks open it through MPI-IO (one
 * communicator each, so that MPI_File_open is collective over exactly the
 * ranks that opened it in the job), and this rank's own records.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "replay.h"

static char *replay_path(const char *dir, size_t fid, const char *name) {
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  char *s = NULL;
  if (asprintf(&s, "%s/f%zu-%s", dir, fid, *base ? base : "file") < 0) return NULL;
  return s;
}

static int split_comms(struct replay_plan *p, int rank) {
  size_t n = siox_wl_nrecs(p->w);
  for (size_t fid = 0; fid < p->nfiles; fid++) {
    int any = 0, mine = 0;
    for (size_t i = 0; i < n; i++) {
      const struct siox_wl_rec *r = siox_wl_rec(p->w, i);
      if (r->op != SIOX_WL_MPI_OPEN || r->fid != fid) continue;
      any = 1;
      if (r->rank == (uint32_t)rank) mine = 1;
    }
    p->comm[fid] = MPI_COMM_NULL;
    if (any && MPI_Comm_split(MPI_COMM_WORLD, mine ? 0 : MPI_UNDEFINED, rank, &p->comm[fid]) != MPI_SUCCESS)
      return -EIO;
  }
  return 0;
}

/* Where an access ends in the file: under an MPI-IO view, past the holes. */
static uint64_t data_end(const struct replay_views *views, const struct siox_wl_rec *r) {
  if (r->op < SIOX_WL_MPI_OPEN) return r->offset + r->bytes;
  return siox_wl_view_end(replay_views_get(views, r), r->offset, r->bytes);
}

int replay_plan_build(struct replay_plan *p, const siox_workload *w, const char *dir, int rank, char *err,
                      size_t errlen) {
  memset(p, 0, sizeof(*p));
  p->w = w;
  p->nfiles = siox_wl_nfiles(w);
  size_t n = siox_wl_nrecs(w), nf = p->nfiles ? p->nfiles : 1;
  p->path = calloc(nf, sizeof(*p->path));
  p->read_extent = calloc(nf, sizeof(*p->read_extent));
  p->write_extent = calloc(nf, sizeof(*p->write_extent));
  p->comm = calloc(nf, sizeof(*p->comm));
  p->mine = malloc((n + 1) * sizeof(*p->mine));
  if (!p->path || !p->read_extent || !p->write_extent || !p->comm || !p->mine) return -ENOMEM;
  for (size_t f = 0; f < p->nfiles; f++)
    if (!(p->path[f] = replay_path(dir, f, siox_wl_file_name(w, (uint32_t)f)))) return -ENOMEM;
  struct replay_views *views = replay_views_new(nf);
  if (!views) return -ENOMEM;
  int rc = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    const struct siox_wl_rec *r = siox_wl_rec(w, i);
    if (siox_wl_op_is_data((int)r->op) && r->op >= SIOX_WL_MPI_OPEN && r->bytes > INT_MAX) {
      snprintf(err, errlen, "record %zu: an MPI-IO access of %llu bytes is more than one MPI call can count", i,
               (unsigned long long)r->bytes);
      rc = -EINVAL;
      break;
    }
    if (r->op == SIOX_WL_MPI_VIEW) rc = replay_views_set(views, r);
    if (r->op != SIOX_WL_MPI_VIEW && r->bytes > p->max_bytes) p->max_bytes = r->bytes;
    if (siox_wl_op_is_data((int)r->op)) {
      uint64_t end = data_end(views, r), *ext = siox_wl_op_is_read((int)r->op) ? p->read_extent : p->write_extent;
      if (end > ext[r->fid]) ext[r->fid] = end;
    }
    if (r->rank == (uint32_t)rank) p->mine[p->nmine++] = i;
  }
  replay_views_free(views);
  return rc ? rc : split_comms(p, rank);
}

void replay_plan_free(struct replay_plan *p) {
  for (size_t f = 0; p->path && f < p->nfiles; f++) free(p->path[f]);
  for (size_t f = 0; p->comm && f < p->nfiles; f++)
    if (p->comm[f] != MPI_COMM_NULL) MPI_Comm_free(&p->comm[f]);
  free(p->path);
  free(p->read_extent);
  free(p->write_extent);
  free(p->comm);
  free(p->mine);
}

/* Raw system calls: preparing is not part of the workload, and a replay run
 * under `siox run` must record the workload's operations only. */
int replay_prepare_files(const struct replay_plan *p, char *err, size_t errlen) {
  for (size_t f = 0; f < p->nfiles; f++) {
    int fd = (int)syscall(SYS_openat, AT_FDCWD, p->path[f], O_RDWR | O_CREAT, 0644);
    struct stat sb;
    int rc = fd < 0 || syscall(SYS_fstat, fd, &sb) ? -errno : 0;
    /* Only a file read past what the workload writes: extending one it
     * writes would turn the job's reads past the end of the file (ROMIO's
     * data sieving of a growing file) into reads of the brick. */
    uint64_t need = p->read_extent[f] > p->write_extent[f] ? p->read_extent[f] : 0;
    if (!rc && (uint64_t)sb.st_size < need && syscall(SYS_ftruncate, fd, (off_t)need))
      rc = -errno;
    if (fd >= 0) syscall(SYS_close, fd);
    if (rc) {
      snprintf(err, errlen, "preparing %s: %s", p->path[f], strerror(-rc));
      return rc;
    }
  }
  return 0;
}
