/*
 * Reads one job from the warehouse for the analyses: its processes and the
 * activities of their MPI-IO, POSIX and stdio layers, with the attributes the
 * detections use, the file each one worked on, and for every MPI-IO data
 * access the POSIX operations it caused (its explicit children). The rows
 * come from libsiox-warehouse (siox_wh_job_analysis_procs and _rows: SQL on
 * the core tables lives there); this file keeps its query on kb_hint_sets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_kb.h>
#include <siox/siox_wh.h>

#include "findings.h"

static int fail(char *err, size_t cap, const char *what, PGresult *r) {
  if (err && cap) snprintf(err, cap, "%s: %s", what, r ? PQresultErrorMessage(r) : "out of memory");
  if (err && cap) err[strcspn(err, "\n")] = '\0';
  PQclear(r);
  return -1;
}

static int in(const char *name, const char *const *list) {
  for (; *list; list++)
    if (!strcmp(name, *list)) return 1;
  return 0;
}

static int posix_kind(const char *name) {
  static const char *const rd[] = {"read", "pread", "pread64", "readv", "fread", "fgets", "fscanf", "vfscanf", NULL};
  static const char *const wr[] = {"write", "pwrite", "pwrite64", "writev", "fwrite", "fprintf", "vfprintf",
                                   "fputs", NULL};
  static const char *const meta[] = {"close", "stat", "lstat", "stat64", "lstat64", "fstat", "fstat64", "fstatat",
                                     "fstatat64", "unlink", "mkdir", "rename", "fclose", "dup", "dup2", "dup3",
                                     NULL};
  if (in(name, rd)) return FND_READ;
  if (in(name, wr)) return FND_WRITE;
  if (!strncmp(name, "open", 4) || !strncmp(name, "creat", 5) || !strncmp(name, "fopen", 5) || !strcmp(name, "fdopen"))
    return FND_OPEN;
  return in(name, meta) ? FND_META : FND_OTHER;
}

static int mpi_kind(const char *name) {
  if (!strcmp(name, "MPI_File_open")) return FND_OPEN;
  if (strncmp(name, "MPI_File_", 9) != 0) return FND_OTHER;
  if (strstr(name, "write")) return FND_WRITE;
  if (strstr(name, "read")) return FND_READ;
  return FND_META;
}

/* Index of path in j->files, added when new; -1 for "" or out of memory. */
static int file_index(struct fnd_job *j, const char *path, size_t *cap) {
  if (!path[0]) return -1;
  for (size_t i = j->nfiles; i-- > 0;)
    if (!strcmp(j->files[i].path, path)) return (int)i;
  if (j->nfiles == *cap) {
    size_t ncap = *cap ? 2 * *cap : 16;
    struct fnd_file *f = realloc(j->files, ncap * sizeof *f);
    if (!f) return -1;
    j->files = f, *cap = ncap;
  }
  struct fnd_file *f = &j->files[j->nfiles];
  memset(f, 0, sizeof *f);
  snprintf(f->path, sizeof f->path, "%s", path);
  if (siox_kb_file_pattern(f->path, f->pattern, sizeof f->pattern) < 0) snprintf(f->pattern, sizeof f->pattern, "%s", path);
  return (int)j->nfiles++;
}

static int load_procs(PGconn *c, const char *job, struct fnd_job *j, char *err, size_t errcap) {
  struct siox_wh_job_rows *r = NULL;
  long n = siox_wh_job_analysis_procs(c, job, &r, err, errcap);
  if (n < 0) return -1;
  if (n && !(j->procs = calloc((size_t)n, sizeof *j->procs))) return siox_wh_job_rows_free(r), fail(err, errcap, "analysis", NULL);
  for (long i = 0; i < n; i++) {
    struct siox_wh_job_proc p;
    siox_wh_job_proc(r, (size_t)i, &p);
    j->procs[i].proc_id = p.proc_id;
    snprintf(j->procs[i].host, sizeof j->procs[i].host, "%s", p.host);
    int seen = 0;
    for (long k = 0; k < i; k++) seen |= !strcmp(j->procs[k].host, j->procs[i].host);
    j->nhosts += !seen;
    if (!j->exe[0] && p.exe[0]) {
      snprintf(j->exe, sizeof j->exe, "%s", p.exe);
      snprintf(j->args, sizeof j->args, "%s", p.args);
    }
  }
  j->nprocs = (size_t)n;
  siox_wh_job_rows_free(r);
  return 0;
}

/* The newest per-byte cost an analysis of this application and pattern
 * fitted over several sizes (hint-set evidence of findings_mpiio.c). */
static const char prior_sql[] =
    "SELECT (h.evidence#>>'{data_sieving_write,cost_model,b_ns_per_byte}')::float8, h.source_job"
    "  FROM kb_hint_sets h JOIN kb_apps a USING (app_id)"
    " WHERE a.exe = $1 AND h.file_pattern = $2 AND h.component = 'romio321' AND h.source_job <> $3"
    "   AND (h.evidence#>>'{data_sieving_write,cost_model,sizes}')::int >= 2"
    " ORDER BY h.created_at DESC, h.hint_set_id DESC LIMIT 1";

static int load_prior(PGconn *c, const struct fnd_job *j, struct fnd_file *f, char *err, size_t errcap) {
  const char *p[3] = {j->exe, f->pattern, j->job};
  f->prior_b_ns = -1;
  if (!j->exe[0]) return 0;
  PGresult *r = PQexecParams(c, prior_sql, 3, NULL, p, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) return fail(err, errcap, "analysis: earlier cost models", r);
  if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) {
    f->prior_b_ns = strtod(PQgetvalue(r, 0, 0), NULL);
    snprintf(f->prior_job, sizeof f->prior_job, "%s", PQgetvalue(r, 0, 1));
  }
  PQclear(r);
  return 0;
}

static int proc_index(const struct fnd_job *j, int proc_id) {
  for (size_t i = 0; i < j->nprocs; i++)
    if (j->procs[i].proc_id == proc_id) return (int)i;
  return -1;
}

static int find_op(const struct fnd_job *j, int64_t aid) {
  size_t lo = 0, hi = j->nops;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (j->ops[mid].aid < aid) lo = mid + 1;
    else hi = mid;
  }
  return lo < j->nops && j->ops[lo].aid == aid ? (int)lo : -1;
}

/* The MPI-IO data access a POSIX operation belongs to: its parent, or its
 * grandparent when the parent is the post/complete part of a nonblocking or
 * split-collective access. */
static int owning_call(const struct fnd_job *j, const struct fnd_op *o, const int *call_of) {
  int p = o->parent ? find_op(j, o->parent) : -1;
  if (p >= 0 && j->ops[p].layer == FND_MPIIO && j->ops[p].kind == FND_OTHER && j->ops[p].parent)
    p = find_op(j, j->ops[p].parent);
  return p >= 0 ? call_of[p] : -1;
}

static void add_child(struct fnd_call *k, const struct fnd_op *o) {
  int64_t b = o->bytes > 0 ? o->bytes : 0;
  if (o->kind == FND_READ) k->n_rd++, k->rd_bytes += b;
  else k->n_wr++, k->wr_bytes += b;
  k->child_ns += o->end_ns - o->start_ns;
  if (o->offset >= 0 && (k->min_off < 0 || o->offset < k->min_off)) k->min_off = o->offset;
  if (o->offset >= 0 && o->offset + b > k->max_end) k->max_end = o->offset + b;
  if (k->min_size < 0 || b < k->min_size) k->min_size = b;
  if (b > k->max_size) k->max_size = b;
}

/* Calls, children and the file of each call (its children's, else the
 * process's latest MPI_File_open before it). */
static int link_calls(struct fnd_job *j, const char *const *paths) {
  int *call_of = malloc((j->nops + 1) * sizeof *call_of), *last_open = malloc((j->nprocs + 1) * sizeof *last_open);
  j->calls = calloc(j->nops + 1, sizeof *j->calls);
  if (!call_of || !last_open || !j->calls) return free(call_of), free(last_open), -1;
  for (size_t i = 0; i < j->nprocs; i++) last_open[i] = -1;
  for (size_t i = 0; i < j->nops; i++) {
    struct fnd_op *o = &j->ops[i];
    call_of[i] = -1;
    /* A child starts after its parent, so its aid is larger: the parent's
     * flag is final when the child is reached. */
    int p = o->parent ? find_op(j, o->parent) : -1;
    o->runtime = p >= 0 && (j->ops[p].layer == FND_MPI || j->ops[p].runtime);
    if (o->layer == FND_MPIIO && o->kind == FND_OPEN) last_open[o->proc] = o->file;
    if (o->layer != FND_MPIIO || (o->kind != FND_READ && o->kind != FND_WRITE)) continue;
    struct fnd_call *k = &j->calls[j->ncalls];
    *k = (struct fnd_call){.op = (int)i, .min_off = -1, .min_size = -1};
    if (o->file < 0) o->file = last_open[o->proc];
    call_of[i] = (int)j->ncalls++;
  }
  for (size_t i = 0; i < j->nops; i++) {
    struct fnd_op *o = &j->ops[i];
    if (o->layer == FND_MPIIO || (o->kind != FND_READ && o->kind != FND_WRITE)) continue;
    if ((o->call = owning_call(j, o, call_of)) < 0) continue;
    add_child(&j->calls[o->call], o);
    struct fnd_op *m = &j->ops[j->calls[o->call].op];
    if (paths[i][0] && o->file >= 0) m->file = o->file; /* the children name the file for sure */
  }
  free(call_of);
  free(last_open);
  return 0;
}

/* The file of an activity: the posix/path of its remote-call record (POSIX
 * operations under MPI-IO receive the path), else its posix/path attribute
 * (opens); "" for none. */
static const char *op_path(const struct siox_wh_job_row *w) {
  return w->call_path ? w->call_path : w->path ? w->path : "";
}

static int fill_op(struct fnd_job *j, const struct siox_wh_job_row *w, size_t i, size_t *fcap) {
  struct fnd_op *o = &j->ops[i];
  const char *swid = w->swid, *name = w->name;
  o->aid = w->aid;
  o->proc = proc_index(j, w->proc);
  o->parent = w->parent;
  o->layer = !strcmp(swid, "MPI-IO") ? FND_MPIIO : !strcmp(swid, "stdio") ? FND_STDIO : !strcmp(swid, "MPI") ? FND_MPI : FND_POSIX;
  o->kind = o->layer == FND_MPIIO ? mpi_kind(name) : o->layer == FND_MPI ? FND_OTHER : posix_kind(name);
  o->start_ns = w->start_ns;
  o->end_ns = w->end_ns;
  o->bytes = w->bytes == SIOX_WH_NONE ? -1 : w->bytes;
  o->offset = w->offset == SIOX_WH_NONE ? -1 : w->offset;
  o->collective = w->coll != SIOX_WH_NONE && w->coll != 0;
  o->call = -1;
  o->file = file_index(j, op_path(w), fcap);
  if (o->proc < 0) return -1;
  if (o->layer == FND_MPIIO && o->kind == FND_OPEN && o->file >= 0) {
    struct fnd_file *f = &j->files[o->file]; /* the first open's hints and component */
    if (!f->hints[0]) snprintf(f->hints, sizeof f->hints, "%s", w->hints ? w->hints : "");
    if (!f->component[0]) snprintf(f->component, sizeof f->component, "%s", w->io_component ? w->io_component : "");
  }
  if (o->end_ns > j->last_end_ns) j->last_end_ns = o->end_ns;
  return 0;
}

long fnd_job_load(PGconn *c, const char *job, struct fnd_job *j, char *err, size_t errcap) {
  memset(j, 0, sizeof *j);
  snprintf(j->job, sizeof j->job, "%s", job);
  if (load_procs(c, job, j, err, errcap) < 0) return -1;
  if (j->nprocs == 0) return 0;
  struct siox_wh_job_rows *r = NULL;
  long got = siox_wh_job_analysis_rows(c, job, &r, err, errcap);
  if (got < 0) return -1;
  size_t n = (size_t)got, fcap = 0;
  const char **paths = malloc((n + 1) * sizeof *paths);
  if (!paths || !(j->ops = calloc(n + 1, sizeof *j->ops)))
    return free(paths), siox_wh_job_rows_free(r), fail(err, errcap, "analysis", NULL);
  j->nops = n;
  for (size_t i = 0; i < n; i++) {
    struct siox_wh_job_row w;
    siox_wh_job_row(r, i, &w);
    paths[i] = op_path(&w);
    if (fill_op(j, &w, i, &fcap) < 0)
      return free(paths), siox_wh_job_rows_free(r), fail(err, errcap, "analysis: loading activities", NULL);
  }
  int rc = link_calls(j, paths);
  free(paths);
  siox_wh_job_rows_free(r);
  if (rc < 0) return fail(err, errcap, "analysis", NULL);
  for (size_t f = 0; f < j->nfiles; f++)
    if (load_prior(c, j, &j->files[f], err, errcap) < 0) return -1;
  return (long)n;
}

void fnd_job_free(struct fnd_job *j) {
  free(j->procs);
  free(j->ops);
  free(j->files);
  free(j->calls);
  memset(j, 0, sizeof *j);
}
