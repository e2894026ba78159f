/*
 * Activities -> workload operations. Descriptors are followed per process
 * the way the layers report them (the READMEs under instrumentation/): an open
 * carries posix/path and its fd (io/result), read/write/close carry posix/fd,
 * stdio calls their FILE* (stdio/file), MPI-IO data accesses name their file
 * by the posix/path of their remote-call send. Activities below an MPI-IO
 * call are followed (their fds) but not emitted: replaying the MPI-IO call
 * redoes them. An MPI-IO call whose file is not named (close, sync, or no
 * POSIX layer) takes the file of its first POSIX child that has one, else
 * the process's only open MPI file.
 */
#include <errno.h>
#include <string.h>

#include "wl_extract.h"

/* fid codes besides real fids (>= 0) */
#define FID_UNKNOWN (-1)  /* a descriptor this extractor did not see opened */
#define FID_FILTERED (-2) /* a file the path filter leaves out */
#define FID_NONE (-3)     /* an operation on no file (barrier) */
#define FID_PENDING (-4)  /* an MPI-IO call whose POSIX child will name the file */
#define PENDING_MARK (UINT32_MAX - 1)

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int is_one_of(const char *name, const char *const *list) {
  for (; *list; list++)
    if (strcmp(name, *list) == 0) return 1;
  return 0;
}

/* The README's default filter: system and MPI-runtime files are not part of
 * the application's workload. */
static int path_kept(const struct wlx *x, const char *path) {
  /* ROMIO's shared-file-pointer file (.NAME.shfp.N): MPI-IO's own, remade by
   * the replayed MPI-IO calls */
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (base[0] == '.' && strstr(base, ".shfp.")) return 0;
  if (x->o->prefixes) {
    for (const char *const *p = x->o->prefixes; *p; p++)
      if (starts(path, *p)) return 1;
    return 0;
  }
  static const char *const sys[] = {"/proc/", "/sys/", "/etc/", "/usr/", "/lib", "/bin/", "/sbin/", "/run/",
                                    "/var/run/", "/dev/shm/vader", "/dev/shm/sm_segment", NULL};
  for (const char *const *p = sys; *p; p++)
    if (starts(path, *p)) return 0;
  if (starts(path, "/dev/") && !starts(path, "/dev/shm/")) return 0;
  return strstr(path, "/ompi.") == NULL && strstr(path, "openmpi-sessions") == NULL;
}

/* fid of path (added to the table when new), FID_UNKNOWN without a path,
 * FID_FILTERED, or -ENOMEM. */
static int64_t file_id(struct wlx *x, const char *path) {
  if (!path) return FID_UNKNOWN;
  if (!path_kept(x, path)) return FID_FILTERED;
  for (size_t i = 0; i < x->w->nfiles; i++)
    if (strcmp(x->w->files[i], path) == 0) return (int64_t)i;
  return siox_wl_add_file(x->w, path);
}

static struct wlx_handle *handle(struct wlx *x, int proc, char kind, int64_t value) {
  for (size_t i = x->nh; i-- > 0;)
    if (x->h[i].proc == proc && x->h[i].kind == kind && x->h[i].value == value) return &x->h[i];
  return NULL;
}

static int bind(struct wlx *x, int proc, char kind, int64_t value, uint32_t fid) {
  struct wlx_handle *h = handle(x, proc, kind, value);
  if (h) {
    h->fid = fid;
    return 0;
  }
  if (siox_wl_grow((void **)&x->h, &x->caph, x->nh, sizeof(*x->h))) return -ENOMEM;
  x->h[x->nh++] = (struct wlx_handle){.proc = proc, .kind = kind, .value = value, .fid = fid};
  return 0;
}

static void unbind(struct wlx *x, int proc, char kind, int64_t value) {
  struct wlx_handle *h = handle(x, proc, kind, value);
  if (h) *h = x->h[--x->nh];
}

/* fid behind a descriptor, FID_UNKNOWN or FID_FILTERED. */
static int64_t fid_of(struct wlx *x, int proc, char kind, int64_t value) {
  if (value == WLX_NONE) return FID_UNKNOWN;
  struct wlx_handle *h = handle(x, proc, kind, value);
  return h ? (h->fid == SIOX_WL_NOFILE ? FID_FILTERED : (int64_t)h->fid) : FID_UNKNOWN;
}

static int emit(struct wlx *x, const struct wlx_act *a, uint32_t op, int64_t fid, int64_t off, int64_t bytes) {
  if (fid == FID_FILTERED) {
    x->st->filtered++;
    return 0;
  }
  if (fid == FID_UNKNOWN) {
    x->st->unknown_file++;
    return 0;
  }
  if (siox_wl_grow((void **)&x->recs, &x->caprecs, x->nrecs, sizeof(*x->recs))) return -ENOMEM;
  uint32_t f = fid == FID_NONE ? SIOX_WL_NOFILE : fid == FID_PENDING ? PENDING_MARK : (uint32_t)fid;
  x->recs[x->nrecs] = (struct wlx_rec){
      .r = {.op = op, .fid = f, .offset = off > 0 ? (uint64_t)off : 0, .bytes = bytes > 0 ? (uint64_t)bytes : 0},
      .proc = a->proc, .aid = a->aid, .seq = x->nrecs, .start_ns = a->start_ns, .end_ns = a->end_ns};
  x->nrecs++;
  x->st->kept++;
  return 0;
}

/* Binds a descriptor of an open to path's fid (SIOX_WL_NOFILE when filtered). */
static int open_bind(struct wlx *x, const struct wlx_act *a, char kind, int64_t value, int64_t *fid) {
  *fid = file_id(x, a->path);
  if (*fid == -ENOMEM) return -ENOMEM;
  if (value == WLX_NONE || *fid == FID_UNKNOWN) return 0;
  return bind(x, a->proc, kind, value, *fid >= 0 ? (uint32_t)*fid : SIOX_WL_NOFILE);
}

static const char *const p_open[] = {"open", "open64", "openat", "openat64", "creat", "creat64", NULL};
static const char *const p_read[] = {"read", "pread", "pread64", "readv", NULL};
static const char *const p_write[] = {"write", "pwrite", "pwrite64", "writev", NULL};
static const char *const p_stat_path[] = {"stat", "lstat", "stat64", "lstat64", "fstatat", "fstatat64", NULL};
static const char *const s_read[] = {"fread", "fgets", "fscanf", "vfscanf", NULL};
static const char *const s_write[] = {"fwrite", "fputs", "fprintf", "vfprintf", NULL};

static int posix_op(struct wlx *x, const struct wlx_act *a) {
  const char *n = a->name;
  int64_t fid = fid_of(x, a->proc, 'f', a->fd);
  int out = !a->inner;
  if (is_one_of(n, p_open)) {
    if (a->err || a->result < 0) return out ? (x->st->other++, 0) : 0;
    int rc = open_bind(x, a, 'f', a->result, &fid);
    return rc || !out ? rc : emit(x, a, SIOX_WL_OPEN, fid, 0, 0);
  }
  if (strcmp(n, "close") == 0) {
    unbind(x, a->proc, 'f', a->fd);
    return out ? emit(x, a, SIOX_WL_CLOSE, fid, 0, 0) : 0;
  }
  if (starts(n, "dup")) {
    if (fid != FID_UNKNOWN && a->result >= 0) return bind(x, a->proc, 'f', a->result, fid >= 0 ? (uint32_t)fid : SIOX_WL_NOFILE);
    return 0;
  }
  if (!out) return 0;
  int64_t moved = a->result >= 0 ? a->result : 0;
  if (is_one_of(n, p_read)) return emit(x, a, SIOX_WL_READ, fid, a->offset, moved);
  if (is_one_of(n, p_write)) return emit(x, a, SIOX_WL_WRITE, fid, a->offset, moved);
  if (starts(n, "lseek")) return emit(x, a, SIOX_WL_SEEK, fid, a->offset, 0);
  if (strcmp(n, "fsync") == 0 || strcmp(n, "fdatasync") == 0) return emit(x, a, SIOX_WL_FSYNC, fid, 0, 0);
  if (starts(n, "fstat") && !starts(n, "fstatat")) return emit(x, a, SIOX_WL_STAT, fid, 0, 0);
  if (is_one_of(n, p_stat_path)) {
    int64_t f = file_id(x, a->path);
    return f == -ENOMEM ? -ENOMEM : emit(x, a, SIOX_WL_STAT, f, 0, 0);
  }
  x->st->other++;
  return 0;
}

static int stdio_op(struct wlx *x, const struct wlx_act *a) {
  const char *n = a->name;
  int64_t fid = fid_of(x, a->proc, 's', a->stdio);
  if (starts(n, "fopen") || strcmp(n, "fdopen") == 0) {
    if (a->err || a->result < 0 || a->stdio == WLX_NONE) return x->st->other++, 0;
    int rc = a->path ? open_bind(x, a, 's', a->stdio, &fid) : 0;
    if (!a->path) { /* fdopen: the stream is on a known fd */
      fid = fid_of(x, a->proc, 'f', a->fd);
      if (fid != FID_UNKNOWN) rc = bind(x, a->proc, 's', a->stdio, fid >= 0 ? (uint32_t)fid : SIOX_WL_NOFILE);
    }
    if (!rc && a->fd != WLX_NONE && fid >= 0) rc = bind(x, a->proc, 'f', a->fd, (uint32_t)fid);
    return rc || a->inner ? rc : emit(x, a, SIOX_WL_OPEN, fid, 0, 0);
  }
  if (a->inner) return 0;
  if (strcmp(n, "fclose") == 0) {
    unbind(x, a->proc, 's', a->stdio);
    return emit(x, a, SIOX_WL_CLOSE, fid, 0, 0);
  }
  if (is_one_of(n, s_read)) return emit(x, a, SIOX_WL_READ, fid, a->offset, a->bytes);
  if (is_one_of(n, s_write)) return emit(x, a, SIOX_WL_WRITE, fid, a->offset, a->bytes);
  if (starts(n, "fseek")) return emit(x, a, SIOX_WL_SEEK, fid, a->offset, 0);
  x->st->other++;
  return 0;
}

/* The process's only open MPI file, FID_UNKNOWN when none or several. */
static int64_t only_mpi_file(struct wlx *x, int proc) {
  int64_t fid = FID_UNKNOWN;
  for (size_t i = 0; i < x->nh; i++)
    if (x->h[i].proc == proc && x->h[i].kind == 'm') {
      if (fid != FID_UNKNOWN) return FID_UNKNOWN;
      fid = x->h[i].fid == SIOX_WL_NOFILE ? FID_FILTERED : (int64_t)x->h[i].fid;
    }
  return fid;
}

/* MPI_File_close of fid: forget one open of it (handles are keyed by the
 * open's aid: the MPI_File value is not recorded). */
static void mpi_closed(struct wlx *x, int proc, int64_t fid) {
  uint32_t f = fid >= 0 ? (uint32_t)fid : SIOX_WL_NOFILE;
  for (size_t i = 0; i < x->nh; i++)
    if (x->h[i].proc == proc && x->h[i].kind == 'm' && x->h[i].fid == f) {
      x->h[i] = x->h[--x->nh];
      return;
    }
}

/* MPI_File_set_view as an mpi_view record (workload/README.md, "Views"):
 * its first data byte, block and step. A view of another shape has block
 * 0 (the replay places its bytes contiguously); a trace from before views
 * were recorded (no mpi/view_extent) has no record; a failed call changed
 * nothing. */
static int view_op(struct wlx *x, const struct wlx_act *a, int64_t fid) {
  if (a->err || a->view_extent == WLX_NONE) return x->st->other++, 0;
  if (a->path && (fid = file_id(x, a->path)) == -ENOMEM) return -ENOMEM;
  if (fid == FID_UNKNOWN) fid = only_mpi_file(x, a->proc);
  if (fid == FID_UNKNOWN) fid = FID_PENDING;
  int64_t block = a->view_block > 0 && a->view_block <= a->view_extent ? a->view_block : 0;
  size_t n = x->nrecs;
  int rc = emit(x, a, SIOX_WL_MPI_VIEW, fid, a->offset, block);
  if (!rc && x->nrecs > n) x->recs[n].r.extent = block ? (uint64_t)a->view_extent : 0;
  return rc;
}

static int mpiio_op(struct wlx *x, const struct wlx_act *a) {
  const char *n = a->name;
  if (a->inner) return 0; /* post/complete parts of a nonblocking call */
  int64_t fid = FID_UNKNOWN;
  if (strcmp(n, "MPI_File_open") == 0) {
    if (a->err) return x->st->other++, 0;
    int rc = open_bind(x, a, 'm', a->aid, &fid);
    return rc ? rc : emit(x, a, SIOX_WL_MPI_OPEN, fid, 0, 0);
  }
  if (a->sent_path) {
    fid = file_id(x, a->sent_path);
    if (fid == -ENOMEM) return -ENOMEM;
  }
  uint32_t op;
  if (strcmp(n, "MPI_File_set_view") == 0) return view_op(x, a, fid);
  if (strcmp(n, "MPI_File_close") == 0) op = SIOX_WL_MPI_CLOSE;
  else if (strcmp(n, "MPI_File_sync") == 0) op = SIOX_WL_MPI_SYNC;
  else if (strstr(n, "_end")) return x->st->other++, 0; /* split collective: the data is in _begin */
  else if (strstr(n, "read")) op = a->coll == 1 ? SIOX_WL_MPI_READ_ALL : SIOX_WL_MPI_READ;
  else if (strstr(n, "write")) op = a->coll == 1 ? SIOX_WL_MPI_WRITE_ALL : SIOX_WL_MPI_WRITE;
  else return x->st->other++, 0;
  if (fid == FID_UNKNOWN) fid = only_mpi_file(x, a->proc);
  if (fid == FID_UNKNOWN) fid = FID_PENDING;
  if (op == SIOX_WL_MPI_CLOSE && fid != FID_PENDING) mpi_closed(x, a->proc, fid);
  return emit(x, a, op, fid, a->offset, a->bytes);
}

/* A pending MPI-IO call takes the file its POSIX child (inside it) used. */
static void patch_from_child(struct wlx *x, const struct wlx_act *a) {
  int64_t fid = fid_of(x, a->proc, 'f', a->fd);
  if (fid < 0 && fid != FID_FILTERED) return;
  for (size_t i = x->nrecs; i-- > 0;) {
    struct wlx_rec *r = &x->recs[i];
    if (r->proc != a->proc) break;
    if (r->r.fid == PENDING_MARK && r->start_ns <= a->start_ns && a->end_ns <= r->end_ns) {
      r->r.fid = fid >= 0 ? (uint32_t)fid : SIOX_WL_NOFILE; /* filtered: dropped by drop_unresolved */
      if (r->r.op == SIOX_WL_MPI_CLOSE) mpi_closed(x, a->proc, fid);
      return;
    }
  }
}

/* Calls still pending, or whose file turned out filtered, are counted. */
static void drop_unresolved(struct wlx *x) {
  size_t m = 0;
  for (size_t i = 0; i < x->nrecs; i++) {
    struct siox_wl_rec *r = &x->recs[i].r;
    if (r->fid == PENDING_MARK || (r->fid == SIOX_WL_NOFILE && r->op != SIOX_WL_BARRIER)) {
      x->st->kept--;
      if (r->fid == PENDING_MARK) x->st->unknown_file++;
      else x->st->filtered++;
      continue;
    }
    x->recs[m++] = x->recs[i];
  }
  x->nrecs = m;
}

/* Synchronization points of the MPI node (the MPI layer records MPI_Init
 * and MPI_Finalize; collectives when it records them). */
static int mpi_op(struct wlx *x, const struct wlx_act *a) {
  static const char *const sync[] = {"MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Allgather",
                                     "MPI_Gather", "MPI_Alltoall", "MPI_Scatter", "MPI_Allgatherv", "MPI_Alltoallv",
                                     NULL};
  if (a->inner || !is_one_of(a->name, sync)) return 0;
  return emit(x, a, SIOX_WL_BARRIER, FID_NONE, 0, 0);
}

int wlx_translate(struct wlx *x, struct wlx_act *acts, size_t n) {
  int rc = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    struct wlx_act *a = &acts[i];
    if (a->no_rank) {
      x->st->no_rank++;
      continue;
    }
    x->st->inner += (uint64_t)a->inner;
    if (strcmp(a->swid, "POSIX") == 0) {
      if (a->inner && a->fd != WLX_NONE) patch_from_child(x, a);
      rc = posix_op(x, a);
    } else if (strcmp(a->swid, "stdio") == 0) {
      rc = stdio_op(x, a);
    } else if (strcmp(a->swid, "MPI-IO") == 0) {
      rc = mpiio_op(x, a);
    } else {
      rc = mpi_op(x, a);
    }
  }
  if (!rc) drop_unresolved(x);
  return rc;
}
