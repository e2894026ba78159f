/*
 * Reads one job from the warehouse for the analyses: its processes and the
 * activities of their MPI-IO, POSIX and stdio layers, with the attributes the
 * detections use, the file each one worked on, and for every MPI-IO data
 * access the POSIX operations it caused (its explicit children).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <siox/siox_kb.h>

#include "findings.h"

/* The job's processes. When some of them are MPI ranks (they made MPI-IO
 * calls), only those: `siox run -- mpirun ...` traces the launcher and
 * shells too, which are not the application (its exe keys the hints) and
 * whose little I/O would make every rank look like a straggler. */
#define JOB_PROCS_CTE                                                                          \
  "jp AS (SELECT p.proc_id, p.host, p.exe, p.args, EXISTS (SELECT 1 FROM activities a"          \
  "          JOIN nodes n ON n.node_id = a.node_id"                                             \
  "         WHERE a.aid BETWEEN (p.proc_id::bigint << 32) AND ((p.proc_id::bigint << 32) | 4294967295)" \
  "           AND n.swid = 'MPI-IO') AS mpi"                                                    \
  "    FROM processes p WHERE p.job = $1 OR (p.job = '' AND 'proc:' || p.proc_id = $1)),"       \
  " procs AS (SELECT * FROM jp WHERE mpi OR NOT EXISTS (SELECT 1 FROM jp q WHERE q.mpi))"

static const char procs_sql[] =
    "WITH " JOB_PROCS_CTE " SELECT proc_id, host, exe, args FROM procs ORDER BY proc_id";

/* The file of an activity: the posix/path of its remote-call record (POSIX
 * operations under MPI-IO receive the path), else its posix/path attribute
 * (opens). */
static const char ops_sql[] =
    "WITH ids AS (SELECT (SELECT id FROM ontology WHERE name = 'io/bytes') b,"
    "   (SELECT id FROM ontology WHERE name = 'io/offset') o,"
    "   (SELECT id FROM ontology WHERE name = 'mpi/collective') co,"
    "   (SELECT id FROM ontology WHERE name = 'posix/path') pa,"
    "   (SELECT id FROM ontology WHERE name = 'mpi/hints') hi,"
    "   (SELECT id FROM ontology WHERE name = 'mpi/io_component') ic),"
    " " JOB_PROCS_CTE
    " SELECT a.aid, a.proc_id, coalesce(a.parent_aid, 0), n.swid, t.name, a.start_ns, a.end_ns,"
    "   coalesce(a.attr_vals[array_position(a.attr_ids, ids.b)], -1),"
    "   coalesce(a.attr_vals[array_position(a.attr_ids, ids.o)], -1),"
    "   coalesce(a.attr_vals[array_position(a.attr_ids, ids.co)], 0),"
    "   coalesce((SELECT d.value FROM remote_calls rc JOIN descriptors d ON d.desc_id = rc.desc_id"
    "              WHERE rc.aid = a.aid AND d.type = ids.pa LIMIT 1),"
    "            (SELECT x.value FROM activity_text_attrs x WHERE x.aid = a.aid AND x.attr_id = ids.pa LIMIT 1), ''),"
    "   coalesce((SELECT x.value FROM activity_text_attrs x WHERE x.aid = a.aid AND x.attr_id = ids.hi LIMIT 1), ''),"
    "   coalesce((SELECT x.value FROM activity_text_attrs x WHERE x.aid = a.aid AND x.attr_id = ids.ic LIMIT 1), '')"
    "  FROM ids, procs p JOIN activities a"
    "    ON a.aid BETWEEN (p.proc_id::bigint << 32) AND ((p.proc_id::bigint << 32) | 4294967295)"
    "  JOIN nodes n ON n.node_id = a.node_id JOIN activity_types t ON t.type_id = a.type_id"
    " WHERE n.swid IN ('MPI', 'MPI-IO', 'POSIX', 'stdio') ORDER BY a.aid";

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
  const char *p[1] = {job};
  PGresult *r = PQexecParams(c, procs_sql, 1, NULL, p, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) return fail(err, errcap, "analysis: processes", r);
  int n = PQntuples(r);
  if (n && !(j->procs = calloc((size_t)n, sizeof *j->procs))) return fail(err, errcap, "analysis", NULL);
  for (int i = 0; i < n; i++) {
    j->procs[i].proc_id = atoi(PQgetvalue(r, i, 0));
    snprintf(j->procs[i].host, sizeof j->procs[i].host, "%s", PQgetvalue(r, i, 1));
    int seen = 0;
    for (int k = 0; k < i; k++) seen |= !strcmp(j->procs[k].host, j->procs[i].host);
    j->nhosts += !seen;
    if (!j->exe[0] && PQgetvalue(r, i, 2)[0]) {
      snprintf(j->exe, sizeof j->exe, "%s", PQgetvalue(r, i, 2));
      snprintf(j->args, sizeof j->args, "%s", PQgetvalue(r, i, 3));
    }
  }
  j->nprocs = (size_t)n;
  PQclear(r);
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

static int fill_op(struct fnd_job *j, PGresult *r, int i, size_t *fcap) {
  struct fnd_op *o = &j->ops[i];
  const char *swid = PQgetvalue(r, i, 3), *name = PQgetvalue(r, i, 4);
  o->aid = strtoll(PQgetvalue(r, i, 0), NULL, 10);
  o->proc = proc_index(j, atoi(PQgetvalue(r, i, 1)));
  o->parent = strtoll(PQgetvalue(r, i, 2), NULL, 10);
  o->layer = !strcmp(swid, "MPI-IO") ? FND_MPIIO : !strcmp(swid, "stdio") ? FND_STDIO : !strcmp(swid, "MPI") ? FND_MPI : FND_POSIX;
  o->kind = o->layer == FND_MPIIO ? mpi_kind(name) : o->layer == FND_MPI ? FND_OTHER : posix_kind(name);
  o->start_ns = strtoll(PQgetvalue(r, i, 5), NULL, 10);
  o->end_ns = strtoll(PQgetvalue(r, i, 6), NULL, 10);
  o->bytes = strtoll(PQgetvalue(r, i, 7), NULL, 10);
  o->offset = strtoll(PQgetvalue(r, i, 8), NULL, 10);
  o->collective = atoi(PQgetvalue(r, i, 9)) != 0;
  o->call = -1;
  o->file = file_index(j, PQgetvalue(r, i, 10), fcap);
  if (o->proc < 0) return -1;
  if (o->layer == FND_MPIIO && o->kind == FND_OPEN && o->file >= 0) {
    struct fnd_file *f = &j->files[o->file]; /* the first open's hints and component */
    if (!f->hints[0]) snprintf(f->hints, sizeof f->hints, "%s", PQgetvalue(r, i, 11));
    if (!f->component[0]) snprintf(f->component, sizeof f->component, "%s", PQgetvalue(r, i, 12));
  }
  if (o->end_ns > j->last_end_ns) j->last_end_ns = o->end_ns;
  return 0;
}

long fnd_job_load(PGconn *c, const char *job, struct fnd_job *j, char *err, size_t errcap) {
  memset(j, 0, sizeof *j);
  snprintf(j->job, sizeof j->job, "%s", job);
  if (load_procs(c, job, j, err, errcap) < 0) return -1;
  if (j->nprocs == 0) return 0;
  const char *p[1] = {job};
  PGresult *r = PQexecParams(c, ops_sql, 1, NULL, p, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) return fail(err, errcap, "analysis: activities", r);
  size_t n = (size_t)PQntuples(r), fcap = 0;
  const char **paths = malloc((n + 1) * sizeof *paths);
  if (!paths || !(j->ops = calloc(n + 1, sizeof *j->ops))) return free(paths), fail(err, errcap, "analysis", r);
  j->nops = n;
  for (size_t i = 0; i < n; i++) {
    paths[i] = PQgetvalue(r, (int)i, 10);
    if (fill_op(j, r, (int)i, &fcap) < 0) return free(paths), fail(err, errcap, "analysis: loading activities", r);
  }
  int rc = link_calls(j, paths);
  free(paths);
  PQclear(r);
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
