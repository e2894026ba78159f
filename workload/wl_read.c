/*
 * Reads the text format of README.md back, strictly: the first line must
 * name the format and a version this library knows, every line must parse
 * whole, fids and ranks must be in range, and the `end` line must come last
 * with the counts of what was read, so a cut-off file is refused instead of
 * replayed in part. Each rejection names the line and the reason.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "wl_model.h"

struct rd {
  FILE *f;
  char *line;
  size_t cap;
  long no;
  char *err;
  size_t errlen;
  siox_workload *w;
  size_t rows;
  uint64_t version; /* the file's format version */
};

static int fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct rd *r, const char *fmt, ...) {
  int n = r->no ? snprintf(r->err, r->errlen, "line %ld: ", r->no) : 0;
  if (n < 0 || (size_t)n >= r->errlen) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
  va_end(ap);
  return -EINVAL;
}

/* Next meaningful line without its newline (comments and blank lines
 * skipped). 1 with r->line set, 0 at EOF, -EIO. */
static int next_line(struct rd *r) {
  for (;;) {
    errno = 0;
    ssize_t n = getline(&r->line, &r->cap, r->f);
    if (n < 0) return ferror(r->f) ? -EIO : 0;
    r->no++;
    if (n > 0 && r->line[n - 1] == '\n') r->line[--n] = '\0';
    else return fail(r, "the line has no newline: the file is truncated");
    if (memchr(r->line, '\0', (size_t)n)) return fail(r, "binary data (a NUL byte): not a SIOX workload file");
    if (n == 0 || r->line[0] == '#') continue;
    return 1;
  }
}

static char *tok(char **p) {
  char *s = *p;
  if (!s || !*s) return NULL;
  char *sp = strchr(s, ' ');
  if (sp) {
    *sp = '\0';
    *p = sp + 1;
  } else {
    *p = NULL;
  }
  return s;
}

static int to_u64(const char *s, uint64_t *v) {
  if (!s || *s < '0' || *s > '9') return -1;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || *end) return -1;
  *v = x;
  return 0;
}

static int to_i64(const char *s, int64_t *v) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || *end || end == s) return -1;
  *v = x;
  return 0;
}

static int to_u32(const char *s, uint32_t *v) {
  uint64_t x;
  if (to_u64(s, &x) || x >= UINT32_MAX) return -1;
  *v = (uint32_t)x;
  return 0;
}

/* Undoes put_escaped in place. 0 or -1 (bad escape). */
static int unescape(char *s) {
  char *o = s;
  for (char *p = s; *p; p++) {
    if (*p != '%') {
      *o++ = *p;
      continue;
    }
    unsigned v;
    if (!p[1] || !p[2] || sscanf(p + 1, "%2x", &v) != 1 || v == 0) return -1;
    *o++ = (char)v;
    p += 2;
  }
  *o = '\0';
  return 0;
}

/* The part of the line after "key " (the whole rest, names may hold spaces). */
static char *rest_after(char *line, const char *key) {
  size_t k = strlen(key);
  return strncmp(line, key, k) == 0 && line[k] == ' ' ? line + k + 1 : strncmp(line, key, k) == 0 && !line[k] ? line + k : NULL;
}

static int read_header(struct rd *r) {
  int rc = next_line(r);
  if (rc <= 0) return rc ? rc : fail(r, "empty file: not a SIOX workload file");
  char *p = r->line, *magic = tok(&p), *ver = tok(&p), *form = tok(&p);
  if (!magic || strcmp(magic, "siox-workload") != 0)
    return fail(r, "not a SIOX workload file (it must start with 'siox-workload VERSION FORM')");
  uint64_t v;
  if (to_u64(ver, &v) || v == 0) return fail(r, "bad format version '%s'", ver ? ver : "");
  if (v > SIOX_WL_VERSION)
    return fail(r, "format version %" PRIu64 " is newer than this siox understands (%d)", v, SIOX_WL_VERSION);
  r->version = v;
  enum siox_wl_form fm;
  if (form && strcmp(form, "trace") == 0 && !p)
    fm = SIOX_WL_TRACE;
  else if (form && strcmp(form, "characterization") == 0 && !p)
    fm = SIOX_WL_CHARACTERIZATION;
  else
    return fail(r, "unknown form '%s' (trace or characterization)", form ? form : "");
  if ((rc = next_line(r)) <= 0) return rc ? rc : fail(r, "truncated: no 'job' line");
  char *job = rest_after(r->line, "job");
  if (!job || unescape(job)) return fail(r, "expected 'job NAME'");
  char *jcopy = strdup(job);
  if (!jcopy) return -ENOMEM;
  if ((rc = next_line(r)) <= 0) {
    free(jcopy);
    return rc ? rc : fail(r, "truncated: no 'ranks' line");
  }
  p = r->line;
  char *k = tok(&p), *n = tok(&p);
  uint32_t ranks;
  if (!k || strcmp(k, "ranks") || to_u32(n, &ranks) || p || ranks == 0 || ranks > (1u << 20)) {
    free(jcopy);
    return fail(r, "expected 'ranks N' with 1 <= N <= 1048576");
  }
  r->w = siox_wl_new(fm, jcopy, ranks);
  free(jcopy);
  return r->w ? 0 : -ENOMEM;
}

static int read_file_line(struct rd *r, char *p) {
  char *id = tok(&p);
  uint64_t fid;
  if (to_u64(id, &fid) || !p) return fail(r, "expected 'file FID NAME'");
  if (fid != r->w->nfiles) return fail(r, "file ids must count up from 0: expected %zu, got %s", r->w->nfiles, id);
  if (unescape(p)) return fail(r, "bad %%XX escape in the file name");
  int64_t rc = siox_wl_add_file(r->w, p);
  return rc < 0 ? (int)rc : 0;
}

static int read_rec(struct rd *r, char *p) {
  struct siox_wl_rec x = {0};
  char *rank = tok(&p), *op = tok(&p), *fid = tok(&p), *off = tok(&p), *by = tok(&p), *gap = tok(&p), *dur = tok(&p);
  int o = siox_wl_op_parse(op ? op : "");
  if (o == SIOX_WL_MPI_VIEW && r->version < 3) return fail(r, "operation 'mpi_view' is new in format version 3");
  char *ext = o == SIOX_WL_MPI_VIEW ? tok(&p) : dur;
  if (!dur || !ext || p)
    return fail(r, o == SIOX_WL_MPI_VIEW ? "an mpi_view record has 8 fields: r RANK mpi_view FID FIRST BLOCK GAP_NS "
                                           "DUR_NS EXTENT"
                                         : "a record has 7 fields: r RANK OP FID OFFSET BYTES GAP_NS DUR_NS");
  if (o < 0) return fail(r, "unknown operation '%s'", op);
  x.op = (uint32_t)o;
  if (to_u32(rank, &x.rank) || x.rank >= r->w->ranks)
    return fail(r, "rank '%s' is not in 0..%" PRIu32, rank, r->w->ranks - 1);
  if (strcmp(fid, "-") == 0) {
    x.fid = SIOX_WL_NOFILE;
    if (o != SIOX_WL_BARRIER) return fail(r, "operation '%s' needs a file id", op);
  } else if (to_u32(fid, &x.fid) || x.fid >= r->w->nfiles || o == SIOX_WL_BARRIER) {
    return fail(r, "file id '%s' is not declared by a 'file' line (barriers take '-')", fid);
  }
  if (to_u64(off, &x.offset) || to_u64(by, &x.bytes) || (int64_t)x.offset < 0 || (int64_t)x.bytes < 0)
    return fail(r, "bad offset or size");
  if (to_i64(gap, &x.gap_ns) || to_i64(dur, &x.dur_ns) || x.gap_ns < 0 || x.dur_ns < 0)
    return fail(r, "bad gap or duration (nanoseconds >= 0)");
  if (o == SIOX_WL_MPI_VIEW && (to_u64(ext, &x.extent) || (int64_t)x.extent < 0 || x.bytes > x.extent ||
                                (x.bytes == 0) != (x.extent == 0)))
    return fail(r, "bad view: BLOCK and EXTENT are both 0, or 0 < BLOCK <= EXTENT");
  return siox_wl_add_rec(r->w, &x);
}

/* key=value fields of a rank or counters line, looked up by name. */
struct kv {
  const char *key;
  int kind; /* 'u' u64, 'i' i64, 'd' int flag, 'h' histogram, 'c' common sizes */
  void *dst;
  int seen;
};

static int parse_list(char *v, uint64_t *a, uint64_t *b, int n, int pairs) {
  if (pairs && strcmp(v, "-") == 0) return 0;
  int i = 0;
  for (char *s = strtok(v, ","); s; s = strtok(NULL, ","), i++) {
    if (i >= n) return -1;
    if (pairs) {
      char *c = strchr(s, ':');
      if (!c) return -1;
      *c = '\0';
      if (to_u64(s, &a[i]) || to_u64(c + 1, &b[i]) || b[i] == 0) return -1;
    } else if (to_u64(s, &a[i])) {
      return -1;
    }
  }
  return pairs ? 0 : (i == n ? 0 : -1);
}

static int read_kv(struct rd *r, char *p, struct kv *kv, size_t n) {
  for (char *t = tok(&p); t; t = tok(&p)) {
    char *eq = strchr(t, '=');
    if (!eq) return fail(r, "expected KEY=VALUE, got '%s'", t);
    *eq = '\0';
    size_t i = 0;
    while (i < n && strcmp(kv[i].key, t)) i++;
    if (i == n) return fail(r, "unknown counter '%s'", t);
    if (kv[i].seen++) return fail(r, "counter '%s' given twice", t);
    char *v = eq + 1;
    int bad;
    switch (kv[i].kind) {
    case 'u': bad = to_u64(v, kv[i].dst); break;
    case 'i': bad = to_i64(v, kv[i].dst) || *(int64_t *)kv[i].dst < 0; break;
    case 'd': bad = strcmp(v, "0") && strcmp(v, "1"); *(int *)kv[i].dst = v[0] == '1'; break;
    case 'h': bad = parse_list(v, kv[i].dst, NULL, SIOX_WL_HIST_BINS, 0); break;
    default: {
      struct siox_wl_dir *d = kv[i].dst;
      bad = parse_list(v, d->common_size, d->common_count, SIOX_WL_COMMON, 1);
    }
    }
    if (bad) return fail(r, "bad value for '%s'", t);
  }
  for (size_t i = 0; i < n; i++)
    if (!kv[i].seen) return fail(r, "counter '%s' missing", kv[i].key);
  return 0;
}

static int read_rank(struct rd *r, char *p) {
  struct siox_wl_rank k = {0};
  char *id = tok(&p);
  if (to_u32(id, &k.rank) || k.rank >= r->w->ranks) return fail(r, "rank '%s' out of range", id ? id : "");
  if (siox_wl_rank_info(r->w, k.rank)) return fail(r, "rank %" PRIu32 " given twice", k.rank);
  struct kv kv[] = {{"ops", 'u', &k.ops, 0}, {"barriers", 'u', &k.barriers, 0},
                    {"compute_ns", 'i', &k.compute_ns, 0}, {"io_ns", 'i', &k.io_ns, 0}};
  int rc = read_kv(r, p, kv, sizeof(kv) / sizeof(kv[0]));
  return rc ? rc : siox_wl_set_rank(r->w, &k);
}

#define DIR_KV(c, d)                                                                                            \
  {#c "_count", 'u', &(d).count, 0}, {#c "_bytes", 'u', &(d).bytes, 0}, {#c "_coll", 'u', &(d).coll, 0},      \
      {#c "_seq", 'u', &(d).seq, 0}, {#c "_consec", 'u', &(d).consec, 0}, {#c "_hist", 'h', (d).hist, 0},      \
      {#c "_common", 'c', &(d), 0}, {#c "_first", 'u', &(d).first_offset, 0},                                \
      {#c "_max_end", 'u', &(d).max_end, 0}, {#c "_time_ns", 'i', &(d).time_ns, 0}

static int read_counters(struct rd *r, char *p) {
  struct siox_wl_counters c = {0};
  char *rank = tok(&p), *fid = tok(&p);
  if (to_u32(rank, &c.rank) || c.rank >= r->w->ranks) return fail(r, "rank '%s' out of range", rank ? rank : "");
  if (to_u32(fid, &c.fid) || c.fid >= r->w->nfiles) return fail(r, "file id '%s' not declared", fid ? fid : "");
  /* The MPI opens and closes came with version 2: last, so that a version
   * 1 line is the same list without them. */
  struct kv kv[] = {{"mpi", 'd', &c.mpi, 0},         {"opens", 'u', &c.opens, 0},  {"closes", 'u', &c.closes, 0},
                    {"seeks", 'u', &c.seeks, 0},     {"stats", 'u', &c.stats, 0},  {"fsyncs", 'u', &c.fsyncs, 0},
                    {"meta_ns", 'i', &c.meta_ns, 0}, DIR_KV(r, c.rd),              DIR_KV(w, c.wr),
                    {"mpi_opens", 'u', &c.mpi_opens, 0}, {"mpi_closes", 'u', &c.mpi_closes, 0}};
  c.mpi_split = r->version >= 2;
  int rc = read_kv(r, p, kv, sizeof(kv) / sizeof(kv[0]) - (c.mpi_split ? 0 : 2));
  if (rc) return rc;
  if (c.rd.seq > c.rd.count || c.wr.seq > c.wr.count || c.rd.coll > c.rd.count || c.wr.coll > c.wr.count ||
      c.mpi_opens > c.opens || c.mpi_closes > c.closes)
    return fail(r, "a share (seq, coll, mpi_opens, mpi_closes) exceeds its count");
  if (!c.mpi && (c.mpi_opens || c.mpi_closes)) return fail(r, "MPI opens or closes on a file with mpi=0");
  return siox_wl_add_counters(r->w, &c);
}

static int read_body(struct rd *r) {
  int rc;
  while ((rc = next_line(r)) > 0) {
    char *p = r->line, *k = tok(&p);
    if (strcmp(k, "end") == 0) {
      uint64_t nf, nr;
      char *a = tok(&p), *b = tok(&p);
      if (to_u64(a, &nf) || to_u64(b, &nr) || p) return fail(r, "expected 'end NFILES NROWS'");
      if (nf != r->w->nfiles || nr != r->rows)
        return fail(r, "the end line counts %" PRIu64 " files and %" PRIu64 " rows, the file holds %zu and %zu: "
                       "the file is damaged", nf, nr, r->w->nfiles, r->rows);
      if ((rc = next_line(r)) != 0) return rc < 0 ? rc : fail(r, "text after the end line");
      return 0;
    }
    if (strcmp(k, "file") == 0) {
      if (r->rows) return fail(r, "'file' lines must come before the records");
      rc = read_file_line(r, p);
    } else if (r->w->form == SIOX_WL_TRACE && strcmp(k, "r") == 0) {
      rc = read_rec(r, p);
    } else if (r->w->form == SIOX_WL_CHARACTERIZATION && strcmp(k, "rank") == 0) {
      rc = read_rank(r, p);
    } else if (r->w->form == SIOX_WL_CHARACTERIZATION && strcmp(k, "c") == 0) {
      rc = read_counters(r, p);
    } else {
      return fail(r, "unexpected '%s' line in a %s file", k,
                  r->w->form == SIOX_WL_TRACE ? "trace" : "characterization");
    }
    if (rc) return rc == -EINVAL && !r->err[0] ? fail(r, "value out of range") : rc;
    if (strcmp(k, "file")) r->rows++;
  }
  return rc < 0 ? rc : fail(r, "truncated: the file ends before its 'end' line");
}

int siox_wl_read(FILE *f, siox_workload **out, char *err, size_t errlen) {
  struct rd r = {.f = f, .err = err, .errlen = errlen};
  err[0] = '\0';
  int rc = read_header(&r);
  if (!rc) rc = read_body(&r);
  if (rc == -EIO) snprintf(err, errlen, "read error after line %ld", r.no);
  if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
  free(r.line);
  if (rc) {
    siox_wl_free(r.w);
    return rc;
  }
  *out = r.w;
  return 0;
}

int siox_wl_read_path(const char *path, siox_workload **out, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (!f) {
    int e = errno;
    snprintf(err, errlen, "%s: %s", path, strerror(e));
    return -e;
  }
  char sub[512];
  int rc = siox_wl_read(f, out, sub, sizeof(sub));
  fclose(f);
  if (rc) snprintf(err, errlen, "%s: %s", path, sub);
  return rc;
}
