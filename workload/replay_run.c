/*
 * One rank's stream, operation by operation: wait the recorded compute gap,
 * then do the call the way the job did (POSIX on the rank's own descriptor
 * at the recorded offset, MPI-IO at the recorded byte offset on the file's
 * communicator, collectives as collectives), timing each call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "replay.h"

struct rank_state {
  const struct replay_plan *p;
  int *fd;
  MPI_File *fh;
  const struct siox_wl_rec **view; /* per fid: the last mpi_view's record, NULL: the byte view */
  char *buf;
  struct replay_result *res;
};

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void wait_gap(int64_t ns) {
  if (ns <= 0) return;
  struct timespec t = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
  while (nanosleep(&t, &t) && errno == EINTR) {
  }
}

/* Whole transfer at offset; returns bytes moved (short at end of file) or -errno. */
static int64_t posix_xfer(int fd, char *buf, uint64_t bytes, uint64_t off, int wr) {
  uint64_t done = 0;
  while (done < bytes) {
    ssize_t n = wr ? pwrite(fd, buf + done, bytes - done, (off_t)(off + done))
                   : pread(fd, buf + done, bytes - done, (off_t)(off + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -errno;
    if (n == 0) break;
    done += (uint64_t)n;
  }
  return (int64_t)done;
}

/* A data access on a file the stream never opened (opened before tracing
 * began) gets a descriptor here, outside the timed region. */
static int ensure_fd(struct rank_state *s, uint32_t fid) {
  if (s->fd[fid] >= 0) return 0;
  s->fd[fid] = open(s->p->path[fid], O_RDWR | O_CREAT, 0644);
  return s->fd[fid] < 0 ? -errno : 0;
}

static int posix_op(struct rank_state *s, const struct siox_wl_rec *r) {
  int *fd = &s->fd[r->fid];
  int64_t n;
  switch (r->op) {
  case SIOX_WL_OPEN:
    if (*fd >= 0) close(*fd);
    *fd = open(s->p->path[r->fid], O_RDWR | O_CREAT, 0644);
    return *fd < 0 ? -errno : 0;
  case SIOX_WL_CLOSE:
    if (*fd < 0) return 0;
    n = close(*fd);
    *fd = -1;
    return n ? -errno : 0;
  case SIOX_WL_READ:
  case SIOX_WL_WRITE:
    n = posix_xfer(*fd, s->buf, r->bytes, r->offset, r->op == SIOX_WL_WRITE);
    if (n < 0) return (int)n;
    (r->op == SIOX_WL_WRITE ? s->res->bytes_written : s->res->bytes_read)[r->fid] += (uint64_t)n;
    return 0;
  case SIOX_WL_SEEK: return lseek(*fd, (off_t)r->offset, SEEK_SET) < 0 ? -errno : 0;
  case SIOX_WL_FSYNC: return fsync(*fd) ? -errno : 0;
  default: {
    struct stat sb;
    return stat(s->p->path[r->fid], &sb) ? -errno : 0;
  }
  }
}

static int mpi_data(struct rank_state *s, const struct siox_wl_rec *r) {
  MPI_File fh = s->fh[r->fid];
  MPI_Status st;
  uint64_t pos;
  int cnt = (int)r->bytes, rc;
  if (siox_wl_view_pos(s->view[r->fid], r->offset, &pos)) return -EINVAL; /* the workload contradicts its view */
  MPI_Offset off = (MPI_Offset)pos;
  switch (r->op) {
  case SIOX_WL_MPI_READ: rc = MPI_File_read_at(fh, off, s->buf, cnt, MPI_BYTE, &st); break;
  case SIOX_WL_MPI_WRITE: rc = MPI_File_write_at(fh, off, s->buf, cnt, MPI_BYTE, &st); break;
  case SIOX_WL_MPI_READ_ALL: rc = MPI_File_read_at_all(fh, off, s->buf, cnt, MPI_BYTE, &st); break;
  default: rc = MPI_File_write_at_all(fh, off, s->buf, cnt, MPI_BYTE, &st); break;
  }
  if (rc != MPI_SUCCESS) return -EIO;
  int got = 0;
  MPI_Get_count(&st, MPI_BYTE, &got);
  (siox_wl_op_is_read((int)r->op) ? s->res->bytes_read : s->res->bytes_written)[r->fid] += (uint64_t)got;
  return 0;
}

static int mpi_op(struct rank_state *s, const struct siox_wl_rec *r) {
  if (r->op == SIOX_WL_BARRIER) return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -EIO;
  MPI_File *fh = &s->fh[r->fid];
  if (r->op == SIOX_WL_MPI_OPEN) {
    if (s->p->comm[r->fid] == MPI_COMM_NULL) return -EINVAL;
    s->view[r->fid] = NULL; /* an open starts with the byte view */
    return MPI_File_open(s->p->comm[r->fid], s->p->path[r->fid], MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL,
                         fh) == MPI_SUCCESS ? 0 : -EIO;
  }
  if (*fh == MPI_FILE_NULL) return -EBADF; /* the workload uses an MPI file it never opened */
  if (r->op == SIOX_WL_MPI_CLOSE) return MPI_File_close(fh) == MPI_SUCCESS ? 0 : -EIO;
  if (r->op == SIOX_WL_MPI_SYNC) return MPI_File_sync(*fh) == MPI_SUCCESS ? 0 : -EIO;
  if (r->op == SIOX_WL_MPI_VIEW) {
    s->view[r->fid] = r;
    return replay_view_set(*fh, r);
  }
  return mpi_data(s, r);
}

static int one(struct rank_state *s, const struct siox_wl_rec *r) {
  return r->op >= SIOX_WL_MPI_OPEN ? mpi_op(s, r) : posix_op(s, r);
}

static int run_stream(struct rank_state *s, int gaps, char *err, size_t errlen) {
  const struct replay_plan *p = s->p;
  int64_t t0 = now_ns();
  for (size_t k = 0; k < p->nmine; k++) {
    const struct siox_wl_rec *r = siox_wl_rec(p->w, p->mine[k]);
    if (gaps) wait_gap(r->gap_ns);
    int need_fd = r->op < SIOX_WL_MPI_OPEN && r->op != SIOX_WL_OPEN && r->op != SIOX_WL_STAT && r->op != SIOX_WL_CLOSE;
    int rc = need_fd ? ensure_fd(s, r->fid) : 0;
    if (rc) {
      snprintf(err, errlen, "opening %s: %s", p->path[r->fid], strerror(-rc));
      return rc;
    }
    int64_t a = now_ns();
    rc = one(s, r);
    s->res->io_ns += now_ns() - a;
    s->res->recorded_io_ns += r->dur_ns;
    s->res->ops++;
    if (rc) {
      snprintf(err, errlen, "rank %u, operation %zu (%s on %s): %s", r->rank, k + 1, siox_wl_op_name((int)r->op),
               r->fid == SIOX_WL_NOFILE ? "-" : p->path[r->fid], strerror(-rc));
      return rc;
    }
  }
  s->res->wall_ns = now_ns() - t0;
  return 0;
}

int replay_run(const struct replay_plan *p, int gaps, struct replay_result *res, char *err, size_t errlen) {
  size_t nf = p->nfiles ? p->nfiles : 1;
  struct rank_state s = {.p = p, .res = res};
  s.fd = malloc(nf * sizeof(*s.fd));
  s.fh = malloc(nf * sizeof(*s.fh));
  s.view = calloc(nf, sizeof(*s.view));
  s.buf = malloc(p->max_bytes ? p->max_bytes : 1);
  int rc = s.fd && s.fh && s.view && s.buf ? 0 : -ENOMEM;
  if (rc) snprintf(err, errlen, "out of memory (buffer of %llu bytes)", (unsigned long long)p->max_bytes);
  for (size_t f = 0; !rc && f < nf; f++) {
    s.fd[f] = -1;
    s.fh[f] = MPI_FILE_NULL;
  }
  if (!rc) {
    memset(s.buf, 'r', p->max_bytes ? p->max_bytes : 1);
    rc = run_stream(&s, gaps, err, errlen);
  }
  for (size_t f = 0; !rc && f < p->nfiles; f++) {
    if (s.fd[f] >= 0) close(s.fd[f]);
    if (s.fh[f] != MPI_FILE_NULL) MPI_File_close(&s.fh[f]);
  }
  free(s.fd);
  free(s.fh);
  free(s.view);
  free(s.buf);
  return rc;
}
