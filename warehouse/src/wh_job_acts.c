/*
 * A job's I/O activities with their file and rank (wh_job.h). Files are
 * followed per process the way the layers report them
 * (instrumentation/README.md): an open carries posix/path and its fd, fopen
 * its FILE* and fd, reads and writes their fd or FILE*, collective MPI-IO
 * accesses send the posix/path. A call that names no file takes the file of
 * its earliest explicit child that has one (an MPI-IO or HDF5 call is done
 * by its POSIX children). Ranks are MPI_Init's mpi/rank; a job without MPI
 * numbers its processes in order.
 */
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wh_job.h"
#include "wh_pg.h"

#define ATTR(name) "a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = '" name "'))]"
#define PATH_ID "(SELECT id FROM ontology WHERE name = 'posix/path')"

/* The path subqueries run only where they can find something: reads and
 * writes carry no path, and only collective MPI-IO accesses send one. Shaped
 * by the profile of a cold view of 1M activities (README.md, "Job views"):
 * whether a call reads or writes is told once per activity type (ty), not by
 * regular expressions per activity; each process's activities are read by
 * its primary-key range; and the rows come unordered, since sorting them
 * here spilled 100 MB to disk and took seconds where whj_load's qsort of the
 * decoded activities takes a fraction of one. */
static const char acts_sql[] =
    "WITH ty AS MATERIALIZED (SELECT type_id, name, name ~ '" WHJ_RE_READ "|" WHJ_RE_WRITE "' AS rw"
    "  FROM activity_types)"
    "SELECT a.aid, coalesce(a.parent_aid, 0), a.proc_id, n.swid, ty.name, a.start_ns, a.end_ns,"
    "       " ATTR("io/offset") ", " ATTR("io/bytes") ", " ATTR("io/result") ", " ATTR("posix/fd") ","
    "       " ATTR("stdio/file") ", " ATTR("mpi/collective") ","
    "       CASE WHEN NOT ty.rw THEN (SELECT x.value FROM activity_text_attrs x"
    "             WHERE x.aid = a.aid AND x.attr_id = " PATH_ID " LIMIT 1) END,"
    "       CASE WHEN n.swid = 'MPI-IO' AND ty.rw THEN (SELECT d.value FROM remote_calls r"
    "             JOIN descriptors d ON d.desc_id = r.desc_id"
    "             WHERE r.aid = a.aid AND r.kind = 'S' AND d.type = " PATH_ID " LIMIT 1) END,"
    "       p.uid"
    "  FROM processes p"
    "  JOIN activities a ON a.aid " SIOX_WH_AIDS_OF("p.proc_id")
    "  JOIN nodes n ON n.node_id = a.node_id"
    "  JOIN ty ON ty.type_id = a.type_id"
    " WHERE p.job = $1 AND n.swid IN ('HDF5', 'MPI-IO', 'POSIX', 'stdio')";

/* The job's activities by their aid range, as acts_sql reads them: joined
 * on proc_id, a coordinator fetched every shard's whole activities table
 * (no proc_id filter reaches a shard through a hash join). */
static const char ranks_sql[] =
    "SELECT a.proc_id, " ATTR("mpi/rank") " FROM processes p"
    "  JOIN activities a ON a.aid " SIOX_WH_AIDS_OF("p.proc_id")
    "  JOIN activity_types t ON t.type_id = a.type_id"
    " WHERE p.job = $1 AND t.name LIKE 'MPI_Init%'";

static const char owners_sql[] =
    "SELECT count(DISTINCT uid), string_agg(DISTINCT uid::text, ', '), count(*) FROM processes WHERE job = $1";

static regex_t re[4]; /* WHJ_RE_SEEK, _NOT_DATA, _READ, _WRITE */
static int re_ok;
static pthread_once_t re_once = PTHREAD_ONCE_INIT;

static void re_compile(void) {
  const char *const pat[4] = {WHJ_RE_SEEK, WHJ_RE_NOT_DATA, WHJ_RE_READ, WHJ_RE_WRITE};
  re_ok = 1;
  for (int i = 0; i < 4; i++) re_ok &= regcomp(&re[i], pat[i], REG_EXTENDED | REG_NOSUB) == 0;
}

static int matches(int i, const char *name) { return re_ok && regexec(&re[i], name, 0, NULL, 0) == 0; }

enum whj_op whj_classify(const char *name) {
  pthread_once(&re_once, re_compile);
  if (matches(0, name)) return WHJ_SEEK;
  if (matches(1, name)) return WHJ_META;
  if (matches(2, name)) return WHJ_READ;
  if (matches(3, name)) return WHJ_WRITE;
  return WHJ_META;
}

static int64_t num(const PGresult *res, int r, int c) {
  return PQgetisnull(res, r, c) ? WHJ_NONE : strtoll(PQgetvalue(res, r, c), NULL, 10);
}

static const char *str(const PGresult *res, int r, int c) {
  return PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
}

static int layer_index(struct whj *j, const char *swid) {
  for (size_t i = 0; i < j->nlayers; i++)
    if (strcmp(j->layers[i], swid) == 0) return (int)i;
  if (j->nlayers == sizeof(j->layers) / sizeof(j->layers[0])) return 0;
  j->layers[j->nlayers] = swid;
  return (int)j->nlayers++;
}

static void decode(struct whj *j, int r, struct whj_act *a) {
  const PGresult *res = j->res;
  const char *swid = PQgetvalue(res, r, 3);
  *a = (struct whj_act){.aid = num(res, r, 0), .parent = num(res, r, 1), .proc = (int32_t)num(res, r, 2),
                        .layer = (uint16_t)layer_index(j, swid), .name = PQgetvalue(res, r, 4),
                        .start_ns = num(res, r, 5), .end_ns = num(res, r, 6), .offset = num(res, r, 7),
                        .bytes = num(res, r, 8), .fd = num(res, r, 10), .stdio = num(res, r, 11),
                        .coll = num(res, r, 12), .path = str(res, r, 13), .sent_path = str(res, r, 14),
                        .file = -1, .file_from_ns = INT64_MAX};
  a->op = (uint8_t)whj_classify(a->name);
  int64_t result = num(res, r, 9);
  /* POSIX says what moved in io/result; the other layers what was asked */
  if (strcmp(swid, "POSIX") == 0 && (a->op == WHJ_READ || a->op == WHJ_WRITE) && result != WHJ_NONE)
    a->bytes = result >= 0 ? result : 0;
  if (a->op != WHJ_READ && a->op != WHJ_WRITE) a->bytes = WHJ_NONE;
  /* a read or write that moved nothing it says (a split collective's _end,
   * a nonblocking call's completion) is not a data access */
  else if (a->bytes == WHJ_NONE) a->op = WHJ_META;
}

static int file_id(struct whj *j, const char *path) {
  for (size_t i = j->nfiles; i-- > 0;)
    if (strcmp(j->files[i], path) == 0) return (int)i;
  if (j->nfiles == j->capfiles) {
    size_t cap = j->capfiles ? 2 * j->capfiles : 16;
    char **f = realloc(j->files, cap * sizeof(*f));
    if (!f) return -ENOMEM;
    j->files = f, j->capfiles = cap;
  }
  j->files[j->nfiles] = (char *)path;
  return (int)j->nfiles++;
}

/* The descriptors one process has open: (kind, value) -> file. */
struct handles {
  struct handle {
    char kind; /* 'f' fd, 's' FILE* */
    int64_t value;
    int32_t file;
  } *h;
  size_t n, cap;
};

static struct handle *handle_find(struct handles *t, char kind, int64_t value) {
  for (size_t i = t->n; i-- > 0;)
    if (t->h[i].kind == kind && t->h[i].value == value) return &t->h[i];
  return NULL;
}

static int handle_bind(struct handles *t, char kind, int64_t value, int32_t file) {
  if (value == WHJ_NONE || file < 0) return 0;
  struct handle *h = handle_find(t, kind, value);
  if (h) return h->file = file, 0;
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 16;
    struct handle *n = realloc(t->h, cap * sizeof(*n));
    if (!n) return -ENOMEM;
    t->h = n, t->cap = cap;
  }
  t->h[t->n++] = (struct handle){kind, value, file};
  return 0;
}

static void handle_drop(struct handles *t, char kind, int64_t value) {
  struct handle *h = handle_find(t, kind, value);
  if (h) *h = t->h[--t->n];
}

static int32_t handle_file(struct handles *t, char kind, int64_t value) {
  struct handle *h = value == WHJ_NONE ? NULL : handle_find(t, kind, value);
  return h ? h->file : -1;
}

static int is_close(const char *name) { return strcmp(name, "close") == 0 || strcmp(name, "fclose") == 0; }

/* One activity's own file, and the handles it opens or closes. Activities
 * come in order of their end in one process: a call binds what it opened
 * when it returns, and an fopen's inner open has returned before it. */
static int own_file(struct whj *j, struct handles *t, struct whj_act *a) {
  int32_t f = -1;
  const char *path = a->path ? a->path : a->sent_path;
  if (path) {
    f = file_id(j, path);
    if (f < 0) return f;
  }
  if (f < 0) f = handle_file(t, 's', a->stdio);
  if (f < 0) f = handle_file(t, 'f', a->fd);
  if (is_close(a->name)) {
    handle_drop(t, 's', a->stdio);
    if (strcmp(a->name, "close") == 0) handle_drop(t, 'f', a->fd);
  } else if (a->path || (a->stdio != WHJ_NONE && f >= 0)) {
    int rc = handle_bind(t, 'f', a->fd, f);
    if (!rc) rc = handle_bind(t, 's', a->stdio, f);
    if (rc) return rc;
  }
  a->file = f;
  a->own_file = f >= 0;
  return 0;
}

static int by_proc_end(const void *x, const void *y) {
  const struct whj_act *a = *(struct whj_act *const *)x, *b = *(struct whj_act *const *)y;
  if (a->proc != b->proc) return a->proc < b->proc ? -1 : 1;
  if (a->end_ns != b->end_ns) return a->end_ns < b->end_ns ? -1 : 1;
  return a->aid < b->aid ? -1 : a->aid > b->aid;
}

/* The order whj.a is in: (proc, start_ns, aid). */
static int by_proc_start(const void *x, const void *y) {
  const struct whj_act *a = x, *b = y;
  if (a->proc != b->proc) return a->proc < b->proc ? -1 : 1;
  if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
  return a->aid < b->aid ? -1 : a->aid > b->aid;
}

/* Layers are numbered in the order they first appear in whj.a (the
 * summary lists them so): decoding met them in the rows' order. */
static void renumber_layers(struct whj *j) {
  const char *old[sizeof(j->layers) / sizeof(j->layers[0])];
  int map[sizeof(old) / sizeof(old[0])];
  memcpy(old, j->layers, sizeof(old));
  for (size_t l = 0; l < j->nlayers; l++) map[l] = -1;
  size_t n = 0;
  for (size_t i = 0; i < j->n; i++) {
    struct whj_act *a = &j->a[i];
    if (map[a->layer] < 0) map[a->layer] = (int)n, j->layers[n++] = old[a->layer];
    a->layer = (uint16_t)map[a->layer];
  }
}

static int by_aid(const void *x, const void *y) {
  int64_t a = (*(struct whj_act *const *)x)->aid, b = (*(struct whj_act *const *)y)->aid;
  return a < b ? -1 : a > b;
}

static struct whj_act *find_aid(struct whj_act **byaid, size_t n, int64_t aid) {
  struct whj_act key = {.aid = aid}, *kp = &key;
  struct whj_act **p = bsearch(&kp, byaid, n, sizeof(*byaid), by_aid);
  return p ? *p : NULL;
}

/* Own files in end order per process, then each parent without one takes
 * its earliest child's (children end before their parent, so a child has
 * its own children's file by then). */
static int resolve_files(struct whj *j) {
  struct whj_act **order = malloc((j->n + 1) * sizeof(*order)), **byaid = malloc((j->n + 1) * sizeof(*byaid));
  struct handles t = {0};
  int rc = order && byaid ? 0 : -ENOMEM;
  for (size_t i = 0; !rc && i < j->n; i++) order[i] = byaid[i] = &j->a[i];
  if (!rc) {
    qsort(order, j->n, sizeof(*order), by_proc_end);
    qsort(byaid, j->n, sizeof(*byaid), by_aid);
  }
  for (size_t i = 0; !rc && i < j->n; i++) {
    if (i > 0 && order[i]->proc != order[i - 1]->proc) t.n = 0;
    rc = own_file(j, &t, order[i]);
  }
  for (size_t i = 0; !rc && i < j->n; i++) {
    struct whj_act *c = order[i], *p = c->parent ? find_aid(byaid, j->n, c->parent) : NULL;
    c->top = c->parent == 0;
    if (!p || p->own_file || c->file < 0 || c->start_ns >= p->file_from_ns) continue;
    p->file = c->file;
    p->file_from_ns = c->start_ns;
  }
  free(t.h);
  free(order);
  free(byaid);
  return rc;
}

/* Ranks: MPI_Init's mpi/rank; a job without one numbers its processes. */
static int assign_ranks(PGconn *c, struct whj *j, const char *job, char *err, size_t errlen) {
  const char *params[] = {job};
  char what[160];
  snprintf(what, sizeof(what), "reading job %s's ranks", job);
  PGresult *res = siox_wh_query(c, what, ranks_sql, 1, params, err, errlen);
  if (!res) return -EIO;
  int any = 0;
  j->nranks = 0;
  for (size_t i = 0; i < j->n; i++) j->a[i].rank = -1;
  for (int r = 0; r < PQntuples(res); r++) {
    int64_t rank = num(res, r, 1);
    if (rank == WHJ_NONE || rank < 0 || rank >= (1 << 24)) continue;
    any = 1;
    if (rank + 1 > j->nranks) j->nranks = (int32_t)rank + 1;
  }
  /* activities come ordered by process: one look-up per process */
  for (size_t i = 0, from = 0; i <= j->n; i++) {
    if (i < j->n && j->a[i].proc == j->a[from].proc) continue;
    int32_t rank = -1;
    for (int r = 0; r < PQntuples(res); r++) {
      int64_t v = num(res, r, 1);
      if (num(res, r, 0) == j->a[from].proc && v != WHJ_NONE && v >= 0 && v < (1 << 24)) rank = (int32_t)v;
    }
    for (size_t k = from; k < i; k++) j->a[k].rank = rank;
    from = i;
  }
  PQclear(res);
  j->nprocs = 0;
  for (size_t i = 0; i < j->n; i++) {
    int first = i == 0 || j->a[i].proc != j->a[i - 1].proc;
    j->nprocs += first;
    if (!any) j->a[i].rank = j->nprocs - 1;
  }
  if (!any) j->nranks = j->nprocs;
  return 0;
}

int whj_one_owner(PGconn *c, const char *job, char *err, size_t errlen) {
  const char *params[] = {job};
  char what[160];
  snprintf(what, sizeof(what), "reading job %s's processes", job);
  PGresult *res = siox_wh_query(c, what, owners_sql, 1, params, err, errlen);
  if (!res) return -EIO;
  int rc = 0;
  if (num(res, 0, 0) > 1) {
    snprintf(err, errlen, "job '%s' names processes of several users (uids %s): two jobs share the id", job,
             PQgetvalue(res, 0, 1));
    rc = -EINVAL;
  } else if (num(res, 0, 2) == 0) {
    snprintf(err, errlen, "job '%s': no process you may see carries this job id", job);
    rc = -ENOENT;
  }
  PQclear(res);
  return rc;
}

int whj_load(PGconn *c, const char *job, struct whj *j, char *err, size_t errlen) {
  memset(j, 0, sizeof(*j));
  int rc = whj_one_owner(c, job, err, errlen);
  if (rc) return rc;
  const char *params[] = {job};
  char what[160];
  snprintf(what, sizeof(what), "reading job %s's activities", job);
  if (!(j->res = siox_wh_query(c, what, acts_sql, 1, params, err, errlen))) {
    whj_free(j);
    return -EIO;
  }
  j->n = (size_t)PQntuples(j->res);
  if (j->n == 0) {
    snprintf(err, errlen, "job '%s': no HDF5, MPI-IO, POSIX or stdio activity you may see is recorded for it", job);
    whj_free(j);
    return -ENOENT;
  }
  j->a = malloc(j->n * sizeof(*j->a));
  if (!j->a) return whj_free(j), -ENOMEM;
  j->first_ns = INT64_MAX, j->last_ns = INT64_MIN;
  for (size_t i = 0; i < j->n; i++) {
    decode(j, (int)i, &j->a[i]);
    if (j->a[i].start_ns < j->first_ns) j->first_ns = j->a[i].start_ns;
    if (j->a[i].end_ns > j->last_ns) j->last_ns = j->a[i].end_ns;
  }
  qsort(j->a, j->n, sizeof(*j->a), by_proc_start);
  renumber_layers(j);
  j->uid = num(j->res, 0, 15);
  rc = resolve_files(j);
  if (!rc) rc = assign_ranks(c, j, job, err, errlen);
  if (rc) whj_free(j);
  return rc;
}

void whj_free(struct whj *j) {
  free(j->a);
  free(j->files);
  PQclear(j->res);
  memset(j, 0, sizeof(*j));
}
