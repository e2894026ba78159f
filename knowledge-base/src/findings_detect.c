/*
 * The job-wide detections of issue 4 item 2 besides the MPI-IO hint
 * decisions (findings_mpiio.c): small requests, misaligned requests, random
 * access, contention on a shared file, rank imbalance and stragglers,
 * metadata-heavy phases and stdio used for bulk data. Each works on the
 * loaded causal data (struct fnd_job) and adds a finding with its evidence
 * only when the data shows the pattern.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"

#define ALIGN 4096     /* a brick's (and local file system's) block */
#define MIN_OPS 32     /* fewer operations than this are no pattern */
#define EX 5

static int data_op(const struct fnd_op *o) {
  return (o->layer == FND_POSIX || o->layer == FND_STDIO) && (o->kind == FND_READ || o->kind == FND_WRITE) &&
         !o->runtime;
}

static double dur_s(const struct fnd_op *o) { return (double)(o->end_ns - o->start_ns) / 1e9; }

static const char *sev(double share, double warn, double crit) {
  return share >= crit ? "critical" : share >= warn ? "warning" : "info";
}

/* Requests below the size where the fixed cost of an operation equals its
 * transfer cost (a / b of the job's cost model) are small: most of their
 * time is per-operation overhead. */
static void small_requests(const struct fnd_job *j, const struct fnd_cost *m, struct fnd_out *o) {
  double thr = m->b_ns > 0 ? fmin(fmax(m->a_ns / m->b_ns, 4096), 1 << 20) : 65536, t_all = 0, t_small = 0;
  long n = 0, small = 0;
  int64_t bytes = 0;
  int ex[EX];
  size_t nex = 0;
  for (size_t i = 0; i < j->nops; i++) {
    const struct fnd_op *p = &j->ops[i];
    if (!data_op(p) || p->bytes < 0) continue;
    n++, t_all += dur_s(p);
    if ((double)p->bytes >= thr) continue;
    small++, t_small += dur_s(p), bytes += p->bytes;
    if (nex < EX) ex[nex++] = (int)i;
  }
  if (small < MIN_OPS || t_all <= 0 || t_small / t_all < 0.5) return;
  json_object *ev = json_object_new_object();
  fnd_jint(ev, "operations", n);
  fnd_jint(ev, "small_operations", small);
  fnd_jint(ev, "small_bytes", bytes);
  fnd_jnum(ev, "threshold_bytes", thr);
  fnd_jnum(ev, "share_of_io_time", t_small / t_all);
  fnd_jnum(ev, "small_s", t_small);
  json_object_object_add(ev, "example_aids", fnd_aids(j, ex, nex));
  /* Aggregated into operations of the threshold size, the fixed cost would
   * be paid bytes / thr times instead of once per request. */
  double gain = t_small - (ceil((double)bytes / thr) * m->a_ns + m->b_ns * (double)bytes) / 1e9;
  fnd_add(o, "small_requests", sev(t_small / t_all, 0.5, 0.8), -1, ev, gain,
          "%ld of %ld requests are smaller than %.0f B (where an operation's fixed cost equals its transfer "
          "cost) and take %.0f%% of the I/O time",
          small, n, thr, 100 * t_small / t_all);
}

static void misaligned(const struct fnd_job *j, struct fnd_out *o) {
  long n = 0, bad = 0;
  double t = 0, tb = 0;
  int ex[EX];
  size_t nex = 0;
  for (size_t i = 0; i < j->nops; i++) {
    const struct fnd_op *p = &j->ops[i];
    if (!data_op(p) || p->layer != FND_POSIX || p->bytes < ALIGN || p->offset < 0) continue;
    n++, t += dur_s(p);
    if (p->offset % ALIGN == 0 && (p->offset + p->bytes) % ALIGN == 0) continue;
    bad++, tb += dur_s(p);
    if (nex < EX) ex[nex++] = (int)i;
  }
  if (bad < MIN_OPS || (double)bad < 0.5 * (double)n) return;
  json_object *ev = json_object_new_object();
  fnd_jint(ev, "operations", n);
  fnd_jint(ev, "misaligned", bad);
  fnd_jint(ev, "alignment_bytes", ALIGN);
  fnd_jnum(ev, "share_of_io_time", t > 0 ? tb / t : 0);
  json_object_object_add(ev, "example_aids", fnd_aids(j, ex, nex));
  fnd_add(o, "misaligned_requests", sev(t > 0 ? tb / t : 0, 0.3, 0.8), -1, ev, 0,
          "%ld of %ld requests of >= %d B start or end off a %d B block boundary (GlusterFS distribute does not "
          "stripe: the brick's block is the boundary); each costs a read-modify-write of a partial block",
          bad, n, ALIGN, ALIGN);
}

/* Per process, in order: sequential (starts where the previous ended),
 * forward (skips ahead) or random (goes back). */
static void access_order(const struct fnd_job *j, struct fnd_out *o) {
  long seq = 0, fwd = 0, back = 0;
  int ex[EX];
  size_t nex = 0;
  for (size_t p = 0; p < j->nprocs; p++) {
    int64_t prev_end = -1;
    for (size_t i = 0; i < j->nops; i++) {
      const struct fnd_op *x = &j->ops[i];
      if (x->proc != (int)p || !data_op(x) || x->layer != FND_POSIX || x->offset < 0 || x->bytes < 0) continue;
      if (prev_end >= 0) {
        if (x->offset == prev_end) seq++;
        else if (x->offset > prev_end) fwd++;
        else if (back++, nex < EX) ex[nex++] = (int)i;
      }
      prev_end = x->offset + x->bytes;
    }
  }
  long n = seq + fwd + back;
  if (n < MIN_OPS || (double)(back + fwd) < 0.5 * (double)n) return;
  json_object *ev = json_object_new_object();
  fnd_jint(ev, "transitions", n);
  fnd_jint(ev, "sequential", seq);
  fnd_jint(ev, "forward_skips", fwd);
  fnd_jint(ev, "backward", back);
  json_object_object_add(ev, "example_aids", fnd_aids(j, ex, nex));
  int random = back >= fwd;
  fnd_add(o, random ? "random_access" : "strided_access", "info", -1, ev, 0,
          "%.0f%% of consecutive requests of a process are not sequential (%ld backward, %ld skipping ahead, %ld "
          "sequential)%s",
          100.0 * (double)(back + fwd) / (double)n, back, fwd, seq,
          random ? ": random access defeats read-ahead and write-behind" : ": a strided pattern");
}

static int by_start(const void *a, const void *b, void *arg) {
  const struct fnd_job *j = arg;
  int64_t x = j->ops[*(const int *)a].start_ns, y = j->ops[*(const int *)b].start_ns;
  return (x > y) - (x < y);
}

/* MPI-IO time on a file that its POSIX operations do not explain is time
 * spent waiting (locks, other ranks) when several processes share it.
 * Overlap: calls sorted by start; a call overlaps the later calls that
 * start before it ends (at most 64 looked at: enough to find another
 * process in any real interleave). */
static void contention_file(const struct fnd_job *j, int f, int *calls, struct fnd_out *o) {
  double call_s = 0, child_s = 0;
  long n = 0, overlapping = 0;
  int procs = 0, ex[EX];
  size_t nex = 0;
  char *seen = calloc(j->nprocs + 1, 1), *ov = calloc(j->ncalls + 1, 1);
  if (!seen || !ov) goto out;
  for (size_t a = 0; a < j->ncalls; a++) {
    if (j->ops[j->calls[a].op].file != f) continue;
    calls[n++] = j->calls[a].op;
    call_s += dur_s(&j->ops[j->calls[a].op]), child_s += (double)j->calls[a].child_ns / 1e9;
    if (!seen[j->ops[j->calls[a].op].proc]) seen[j->ops[j->calls[a].op].proc] = 1, procs++;
  }
  qsort_r(calls, (size_t)n, sizeof *calls, by_start, (void *)j);
  for (long a = 0; a < n; a++)
    for (long b = a + 1; b < n && b <= a + 64 && j->ops[calls[b]].start_ns < j->ops[calls[a]].end_ns; b++)
      if (j->ops[calls[b]].proc != j->ops[calls[a]].proc) ov[a] = ov[b] = 1;
  for (long a = 0; a < n; a++)
    if (ov[a] && (overlapping++, nex < EX)) ex[nex++] = calls[a];
  double wait = call_s - child_s;
  if (procs < 2 || call_s <= 0 || wait / call_s < 0.3 || overlapping < 2) goto out;
  json_object *ev = json_object_new_object();
  fnd_jint(ev, "processes", procs);
  fnd_jint(ev, "calls", n);
  fnd_jint(ev, "calls_overlapping_another_process", overlapping);
  fnd_jnum(ev, "call_s", call_s);
  fnd_jnum(ev, "posix_s", child_s);
  fnd_jnum(ev, "waiting_share", wait / call_s);
  json_object_object_add(ev, "example_aids", fnd_aids(j, ex, nex));
  fnd_add(o, "shared_file_contention", sev(wait / call_s, 0.3, 0.6), f, ev, wait / procs,
          "%d processes share %s: %.0f%% of their %ld MPI-IO calls' time is not spent in their own POSIX "
          "operations (waiting for locks or each other), %ld calls overlap another process's",
          procs, j->files[f].path, 100 * wait / call_s, n, overlapping);
out:
  free(seen);
  free(ov);
}

static void contention(const struct fnd_job *j, struct fnd_out *o) {
  int *calls = malloc((j->ncalls + 1) * sizeof *calls);
  for (size_t f = 0; calls && f < j->nfiles; f++) contention_file(j, (int)f, calls, o);
  free(calls);
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* I/O time per process: its MPI-IO data calls when it made any, else its
 * POSIX/stdio data operations. */
static void imbalance(const struct fnd_job *j, struct fnd_out *o) {
  if (j->nprocs < 2) return;
  double *t = calloc(j->nprocs, sizeof *t), *s = calloc(j->nprocs, sizeof *s);
  if (!t || !s) goto out;
  for (size_t a = 0; a < j->ncalls; a++) t[j->ops[j->calls[a].op].proc] += dur_s(&j->ops[j->calls[a].op]);
  if (!j->ncalls)
    for (size_t i = 0; i < j->nops; i++)
      if (data_op(&j->ops[i])) t[j->ops[i].proc] += dur_s(&j->ops[i]);
  memcpy(s, t, j->nprocs * sizeof *s);
  qsort(s, j->nprocs, sizeof *s, cmp_dbl);
  double med = j->nprocs % 2 ? s[j->nprocs / 2] : (s[j->nprocs / 2 - 1] + s[j->nprocs / 2]) / 2, max = s[j->nprocs - 1];
  if (med <= 0 || max / med < 1.5) goto out;
  json_object *ev = json_object_new_object(), *st = json_object_new_array();
  for (size_t p = 0; p < j->nprocs; p++) {
    if (t[p] < 1.5 * med) continue;
    json_object *x = json_object_new_object();
    fnd_jint(x, "proc_id", j->procs[p].proc_id);
    json_object_object_add(x, "host", json_object_new_string(j->procs[p].host));
    fnd_jnum(x, "io_s", t[p]);
    json_object_array_add(st, x);
  }
  fnd_jint(ev, "processes", (int64_t)j->nprocs);
  fnd_jnum(ev, "median_io_s", med);
  fnd_jnum(ev, "max_io_s", max);
  fnd_jnum(ev, "max_over_median", max / med);
  json_object_object_add(ev, "stragglers", st);
  fnd_add(o, "rank_imbalance", sev(max / med, 2, 4), -1, ev, max - med,
          "the slowest of %zu processes spent %.3f s in I/O, %.1fx the median %.3f s: %zu straggler(s) hold the "
          "job up",
          j->nprocs, max, max / med, med, json_object_array_length(st));
out:
  free(t);
  free(s);
}

static void metadata(const struct fnd_job *j, struct fnd_out *o) {
  long meta = 0;
  double tm = 0, tall = 0;
  int64_t first = INT64_MAX;
  int ex[EX];
  size_t nex = 0;
  for (size_t i = 0; i < j->nops; i++) {
    const struct fnd_op *p = &j->ops[i];
    if (p->layer == FND_MPIIO || p->layer == FND_MPI || p->runtime) continue;
    if (data_op(p)) tall += dur_s(p);
    if (p->kind != FND_META && p->kind != FND_OPEN) continue;
    meta++, tm += dur_s(p), tall += dur_s(p);
    if (p->start_ns < first) first = p->start_ns;
    if (nex < EX) ex[nex++] = (int)i;
  }
  if (meta < MIN_OPS || tall <= 0 || tm / tall < 0.3) return;
  /* The busiest second of metadata operations: where the phase is. */
  long best = 0;
  int64_t best_t = first;
  for (size_t i = 0; i < j->nops; i++) {
    const struct fnd_op *p = &j->ops[i];
    if (p->layer == FND_MPIIO || p->layer == FND_MPI || p->runtime || (p->kind != FND_META && p->kind != FND_OPEN))
      continue;
    long n = 0;
    for (size_t k = i; k < j->nops && k < i + 100000; k++) {
      const struct fnd_op *q = &j->ops[k];
      if (q->layer != FND_MPIIO && q->layer != FND_MPI && !q->runtime && (q->kind == FND_META || q->kind == FND_OPEN) &&
          q->start_ns >= p->start_ns &&
          q->start_ns < p->start_ns + 1000000000)
        n++;
    }
    if (n > best) best = n, best_t = p->start_ns;
    i += (size_t)(n > 1 ? n - 1 : 0); /* windows start at the next op outside */
  }
  json_object *ev = json_object_new_object();
  fnd_jint(ev, "metadata_operations", meta);
  fnd_jnum(ev, "metadata_s", tm);
  fnd_jnum(ev, "share_of_io_time", tm / tall);
  fnd_jint(ev, "busiest_second_start_ns", best_t);
  fnd_jint(ev, "busiest_second_operations", best);
  json_object_object_add(ev, "example_aids", fnd_aids(j, ex, nex));
  fnd_add(o, "metadata_heavy", sev(tm / tall, 0.3, 0.6), -1, ev, 0,
          "%ld metadata operations (open, close, stat, ...) take %.0f%% of the I/O time; busiest second: %ld "
          "operations",
          meta, 100 * tm / tall, best);
}

static void stdio_bulk(const struct fnd_job *j, struct fnd_out *o) {
  int64_t sb = 0, pb = 0;
  long n = 0;
  int ex[EX];
  size_t nex = 0;
  for (size_t i = 0; i < j->nops; i++) {
    const struct fnd_op *p = &j->ops[i];
    if (!data_op(p) || p->bytes <= 0) continue;
    if (p->layer == FND_POSIX) {
      pb += p->bytes;
      continue;
    }
    sb += p->bytes, n++;
    if (nex < EX) ex[nex++] = (int)i;
  }
  if (sb < (1 << 20) || sb < pb) return;
  json_object *ev = json_object_new_object();
  fnd_jint(ev, "stdio_bytes", sb);
  fnd_jint(ev, "stdio_calls", n);
  fnd_jint(ev, "posix_bytes", pb);
  json_object_object_add(ev, "example_aids", fnd_aids(j, ex, nex));
  fnd_add(o, "stdio_bulk", "warning", -1, ev, 0,
          "%lld B (%.0f%% of the data) moved through stdio in %ld calls: stdio's small buffer splits it into "
          "many small requests; use read/write or MPI-IO for bulk data",
          (long long)sb, 100.0 * (double)sb / (double)(sb + pb), n);
}

void fnd_analyze_detect(const struct fnd_job *j, struct fnd_out *o) {
  struct fnd_cost m;
  if (fnd_job_cost(j, -1, FND_SCOPE_ALL, NULL, &m) == 0) small_requests(j, &m, o);
  misaligned(j, o);
  access_order(j, o);
  contention(j, o);
  imbalance(j, o);
  metadata(j, o);
  stdio_bulk(j, o);
}
