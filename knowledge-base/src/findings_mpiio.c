/*
 * MPI-IO analyses per file: which strategy ROMIO used for independent
 * noncontiguous accesses (data sieving or one operation per piece), seen in
 * the POSIX children of each call, and which one the file system's fitted
 * cost model predicts to be cheaper; collective buffering values from the
 * collective calls' sizes and the job's node count. Produces the romio321
 * hint set of each file pattern with a rationale per key.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"

#define DEFAULT_WR_BUF 524288  /* ROMIO's ind_wr_buffer_size */
#define DEFAULT_RD_BUF 4194304 /* ROMIO's ind_rd_buffer_size */
#define NWIN 5

enum { OBS_NONE, OBS_DIRECT, OBS_SIEVE };

/* Totals of one file and direction (independent noncontiguous accesses). */
struct ds_tally {
  long calls, sieved, direct, pieces, windows;
  int64_t bytes, moved;
  double observed_s, child_s, direct_s, sieve_s[NWIN + 1];
  double sieved_call_s, sieved_child_s; /* the sieved calls: their time, their operations' */
  long sieve_windows[NWIN + 1]; /* predicted */
  int ops[5];
  size_t nops;
  int procs_mask_n;
};

/* The value of key in a "k=v;k=v" hints text, or dflt. */
static long hint_value(const char *hints, const char *key, long dflt) {
  size_t kl = strlen(key);
  for (const char *p = hints; p && *p;) {
    if (!strncmp(p, key, kl) && p[kl] == '=') return strtol(p + kl + 1, NULL, 10) > 0 ? strtol(p + kl + 1, NULL, 10) : dflt;
    p = strchr(p, ';');
    if (p) p++;
  }
  return dflt;
}

struct start {
  int64_t off;
  int proc;
};

static int by_off(const void *a, const void *b) {
  int64_t x = ((const struct start *)a)->off, y = ((const struct start *)b)->off;
  return (x > y) - (x < y);
}

/* The piece size of a sieved file: data sieving hides the pieces, but the
 * ranks' accesses start one piece apart (each rank's view is displaced by
 * its share), so the smallest gap between different processes' starts,
 * reduced to divide every access size, is the piece. 0 when one process.
 * Sorted by offset, each start's nearest earlier start of another process
 * is the previous start or, when that is its own, the latest start of
 * another process before it: one pass. */
static int64_t piece_from_offsets(const struct fnd_job *j, int file, int write) {
  struct start *s = malloc((j->ncalls + 1) * sizeof *s);
  size_t n = 0;
  int64_t best = 0, g;
  if (!s) return 0;
  for (size_t a = 0; a < j->ncalls; a++) {
    const struct fnd_op *x = &j->ops[j->calls[a].op];
    if (x->file == file && !x->collective && (x->kind == FND_WRITE) == write && x->offset >= 0)
      s[n++] = (struct start){x->offset, x->proc};
  }
  qsort(s, n, sizeof *s, by_off);
  /* l1: the latest start; l2: the latest start of another process than l1's. */
  long l1 = -1, l2 = -1;
  for (long a = 0; a < (long)n; a++) {
    long o = l1 >= 0 && s[a].proc != s[l1].proc ? l1 : l2;
    if (o >= 0 && s[a].off > s[o].off && (!best || s[a].off - s[o].off < best)) best = s[a].off - s[o].off;
    if (l1 >= 0 && s[a].proc != s[l1].proc) l2 = l1;
    l1 = a;
  }
  free(s);
  for (size_t a = 0; best && a < j->ncalls; a++) {
    const struct fnd_op *x = &j->ops[j->calls[a].op];
    if (x->file != file || x->collective || (x->kind == FND_WRITE) != write || x->bytes <= 0) continue;
    int64_t m = best, q = x->bytes;
    while (q) g = m % q, m = q, q = g;
    best = m;
  }
  return best;
}

/* How one call was served and its layout; OBS_NONE when it is contiguous or
 * has no children to tell. */
static int observe(const struct fnd_call *k, const struct fnd_op *m, int64_t piece_hint, struct fnd_layout *l) {
  int write = m->kind == FND_WRITE;
  long nops = write ? k->n_wr : k->n_rd;
  int64_t moved = write ? k->wr_bytes : k->rd_bytes, span = k->max_end - k->min_off;
  if (nops == 0 || m->bytes <= 0 || k->min_off < 0) return OBS_NONE;
  int sieved = moved > m->bytes && (!write || k->n_rd > 0);
  if (!sieved && nops < 2) return OBS_NONE; /* contiguous: one operation */
  if (!sieved) {
    l->pieces = nops;
    l->piece = moved / nops;
    l->stride = nops > 1 ? (span - l->piece) / (nops - 1) : l->piece;
    return OBS_DIRECT;
  }
  if (piece_hint <= 0 || m->bytes % piece_hint) return OBS_NONE;
  l->pieces = (long)(m->bytes / piece_hint);
  l->piece = piece_hint;
  l->stride = l->pieces > 1 ? (span - piece_hint) / (l->pieces - 1) : piece_hint;
  if (l->stride < l->piece) l->stride = l->piece;
  return OBS_SIEVE;
}

static const int64_t candidates[NWIN] = {65536, 262144, 524288, 1048576, 4194304};

static void tally_call(struct ds_tally *t, const struct fnd_cost *m, const struct fnd_layout *l, int64_t cur_w,
                       int write, int obs, const struct fnd_call *k, const struct fnd_op *op, int opi) {
  t->calls++;
  t->sieved += obs == OBS_SIEVE;
  t->direct += obs == OBS_DIRECT;
  t->pieces += l->pieces;
  t->bytes += op->bytes;
  t->moved += write ? k->wr_bytes : k->rd_bytes;
  t->windows += obs == OBS_SIEVE ? (write ? k->n_wr : k->n_rd) : 0;
  t->observed_s += (double)(op->end_ns - op->start_ns) / 1e9;
  t->child_s += (double)k->child_ns / 1e9;
  if (obs == OBS_SIEVE) {
    t->sieved_call_s += (double)(op->end_ns - op->start_ns) / 1e9;
    t->sieved_child_s += (double)k->child_ns / 1e9;
  }
  t->direct_s += fnd_cost_direct(m, l);
  for (int w = 0; w <= NWIN; w++) {
    int64_t size = w == NWIN ? cur_w : candidates[w];
    t->sieve_s[w] += fnd_cost_sieve(m, l, size, write);
    t->sieve_windows[w] += fnd_ds_windows(l, size, NULL);
  }
  if (t->nops < 5) t->ops[t->nops++] = opi;
}

static const char *severity_of(double gain, double observed) {
  return observed > 0 && gain >= 0.5 * observed ? "critical" : observed > 0 && gain >= 0.1 * observed ? "warning" : "info";
}

static int procs_on(const struct fnd_job *j, int file, int write, int collective) {
  int n = 0;
  for (size_t p = 0; p < j->nprocs; p++) {
    for (size_t a = 0; a < j->ncalls; a++) {
      const struct fnd_op *x = &j->ops[j->calls[a].op];
      if (x->proc == (int)p && x->file == file && (x->kind == FND_WRITE) == write && x->collective == collective) {
        n++;
        break;
      }
    }
  }
  return n;
}

static json_object *cost_json(const struct fnd_cost *m) {
  json_object *o = json_object_new_object();
  fnd_jnum(o, "a_us", m->a_ns / 1e3);
  fnd_jnum(o, "b_ns_per_byte", m->b_ns);
  fnd_jint(o, "operations", m->samples);
  fnd_jint(o, "sizes", m->sizes);
  json_object_object_add(o, "how", json_object_new_string(m->how));
  return o;
}

/* The sieved calls' waiting per second of their operations; 0 below 5 % of
 * their time (the layers' own bookkeeping, not waiting). */
static double sieve_wait(const struct ds_tally *t) {
  double w = t->sieved_call_s - t->sieved_child_s;
  return t->sieved_child_s > 0 && w >= 0.05 * t->sieved_call_s ? w / t->sieved_child_s : 0;
}

/* Without a per-byte cost a window's cost is unknown: no prediction can
 * favour sieving over what was observed, or the reverse. */
static int cost_unknown(const struct fnd_cost *m) { return m->sizes == 1 && m->b_ns <= 0; }

/* The data-sieving decision of one file and direction from its tally. */
static void decide_ds(const struct fnd_job *j, int file, int write, const struct ds_tally *t, const struct fnd_cost *m,
                      int64_t cur_w, struct fnd_out *o) {
  /* Sieving locks each window (read, modify, write back) and ranks wait for
   * each other's: the sieved calls' time beyond their operations, per
   * second of operations, is added to every window size's prediction. */
  double wait = sieve_wait(t), eff[NWIN + 1];
  for (int w = 0; w <= NWIN; w++) eff[w] = t->sieve_s[w] * (1 + wait);
  /* Windows larger than both the current buffer and every operation the
   * line was fitted to are not weighed: the line is not trusted there (on
   * the FUSE testbed a 4 MiB pwrite cost 8x a 512 KiB one, where a line
   * through 4 KiB and 512 KiB operations predicted about the same). */
  int64_t limit = cur_w > (int64_t)m->max_size ? cur_w : (int64_t)m->max_size;
  int best_w = NWIN; /* the current buffer unless another is >= 5 % cheaper */
  for (int w = 0; w < NWIN && candidates[w] <= limit; w++)
    if (eff[w] < 0.95 * eff[best_w] && eff[w] < eff[best_w]) best_w = w;
  int64_t bw = best_w == NWIN ? cur_w : candidates[best_w];
  int unknown = cost_unknown(m);
  if (unknown) best_w = NWIN;
  int direct = unknown ? t->direct > t->sieved : t->direct_s < eff[best_w];
  double current = t->sieved >= t->direct ? eff[NWIN] : t->direct_s;
  double best = direct ? t->direct_s : eff[best_w];
  int nprocs = procs_on(j, file, write, 0);
  double gain = unknown ? 0 : (current - best) / (nprocs > 0 ? nprocs : 1);
  const char *ds_key = write ? "romio_ds_write" : "romio_ds_read", *buf_key = write ? "ind_wr_buffer_size" : "ind_rd_buffer_size";
  char model[800], wait_txt[160];
  snprintf(wait_txt, sizeof wait_txt,
           "; the sieved calls also waited %.2f s per second of their operations (locks, other ranks), added to "
           "every sieving prediction",
           wait);
  snprintf(model, sizeof model, "a = %.0f us + %.3f ns/B per operation (%s)%s%s", m->a_ns / 1e3, m->b_ns, m->how,
           unknown ? "; without a per-byte cost a window's cost is unknown, so the observed strategy is kept" : "",
           wait > 0 ? wait_txt : "");
  json_object *ev = json_object_new_object(), *pred = json_object_new_object();
  fnd_jint(ev, "calls", t->calls);
  fnd_jint(ev, "calls_sieved", t->sieved);
  fnd_jint(ev, "calls_direct", t->direct);
  fnd_jint(ev, "pieces", t->pieces);
  fnd_jint(ev, "bytes", t->bytes);
  fnd_jint(ev, "bytes_moved", t->moved);
  fnd_jnum(ev, "amplification", t->bytes ? (double)t->moved / (double)t->bytes : 0);
  fnd_jint(ev, "sieve_windows", t->windows);
  fnd_jint(ev, "processes", nprocs);
  fnd_jnum(ev, "observed_call_s", t->observed_s);
  fnd_jnum(ev, "observed_posix_s", t->child_s);
  fnd_jnum(ev, "sieving_wait_ratio", wait);
  fnd_jnum(pred, "direct_s", t->direct_s);
  for (int w = 0; w <= NWIN; w++) {
    char k[48];
    snprintf(k, sizeof k, "sieve_%lld_s", (long long)(w == NWIN ? cur_w : candidates[w]));
    fnd_jnum(pred, k, eff[w]);
  }
  json_object_object_add(ev, "predicted", pred);
  json_object_object_add(ev, "cost_model", cost_json(m));
  json_object_object_add(ev, "example_aids", fnd_aids(j, t->ops, t->nops));
  fnd_jnum(ev, "expected_gain_s", gain);
  const char *now = t->sieved >= t->direct ? "data sieving" : "one operation per piece";
  fnd_add(o, write ? "data_sieving_write" : "data_sieving_read", severity_of(gain, t->observed_s / (nprocs ? nprocs : 1)),
          file, ev, gain,
          "%ld independent noncontiguous %s calls (%ld pieces, %lld B) were served by %s (%.2fx bytes moved); "
          "predicted %.3f s one operation per piece vs %.3f s sieving with %lld B windows: %s",
          t->calls, write ? "write" : "read", t->pieces, (long long)t->bytes, now,
          t->bytes ? (double)t->moved / (double)t->bytes : 0, t->direct_s, eff[best_w], (long long)bw,
          direct ? "disable data sieving" : "keep data sieving");
  char bwtxt[32];
  snprintf(bwtxt, sizeof bwtxt, "%lld", (long long)bw);
  if (direct) {
    fnd_hint(o, file, ds_key, "disable",
             "%ld calls, %ld pieces of %lld B: one %s per piece predicted %.3f s, data sieving %.3f s "
             "(best buffer %lld B: %ld windows read%s); cost model %s. Observed %s.",
             t->calls, t->pieces, t->pieces ? (long long)(t->bytes / t->pieces) : 0LL, write ? "pwrite" : "pread",
             t->direct_s, eff[best_w], (long long)bw, t->sieve_windows[best_w], write ? " and written back" : "",
             model, now);
  } else {
    fnd_hint(o, file, ds_key, "enable",
             "%ld calls, %ld pieces: data sieving with %lld B windows predicted %.3f s, one operation per piece "
             "%.3f s; cost model %s. Observed %s.",
             t->calls, t->pieces, (long long)bw, eff[best_w], t->direct_s, model, now);
    fnd_hint(o, file, buf_key, bwtxt,
             "the cheapest of the window sizes 64 KiB..%lld B in the model (a window read%s per window; larger "
             "windows than the current buffer and the largest operation observed are not weighed): %.3f s vs %.3f s "
             "with the current %lld B",
             (long long)limit, write ? " and written back" : "", eff[best_w], eff[NWIN],
             (long long)cur_w);
  }
  struct fnd_hintset *s = fnd_set(o, file);
  if (s) {
    s->gain_s += gain;
    json_object_object_add(s->evidence, write ? "data_sieving_write" : "data_sieving_read", json_object_get(ev));
  }
}

static void analyze_ds(const struct fnd_job *j, int file, int write, const struct fnd_cost *m, struct fnd_out *o) {
  struct ds_tally t = {0};
  const char *hints = j->files[file].hints;
  int64_t cur_w = hint_value(hints, write ? "ind_wr_buffer_size" : "ind_rd_buffer_size",
                             write ? DEFAULT_WR_BUF : DEFAULT_RD_BUF);
  int64_t piece = piece_from_offsets(j, file, write);
  for (size_t a = 0; a < j->ncalls; a++) {
    const struct fnd_call *k = &j->calls[a];
    const struct fnd_op *op = &j->ops[k->op];
    struct fnd_layout l = {0};
    if (op->file != file || op->collective || (op->kind == FND_WRITE) != write) continue;
    int obs = observe(k, op, piece, &l);
    if (obs != OBS_NONE) tally_call(&t, m, &l, cur_w, write, obs, k, op, k->op);
  }
  if (t.calls) decide_ds(j, file, write, &t, m, cur_w, o);
}

static int64_t pow2_at_least(double v) {
  int64_t p = 1;
  while ((double)p < v && p < ((int64_t)1 << 40)) p <<= 1;
  return p;
}

/* The file-system operations under the file's collective calls of one
 * direction, as intervals (*n of them; NULL when none or out of memory). */
static struct fnd_interval *cb_ops(const struct fnd_job *j, int file, int write, size_t *n) {
  struct fnd_interval *v = malloc((j->nops + 1) * sizeof *v);
  *n = 0;
  if (!v) return NULL;
  for (size_t i = 0; i < j->nops; i++) {
    const struct fnd_op *x = &j->ops[i];
    if (x->layer != FND_POSIX || x->call < 0 || x->kind != (write ? FND_WRITE : FND_READ)) continue;
    const struct fnd_op *m = &j->ops[j->calls[x->call].op];
    if (m->file != file || !m->collective || (m->kind == FND_WRITE) != write) continue;
    v[(*n)++] = (struct fnd_interval){x->start_ns, x->end_ns, x->bytes, x->proc};
  }
  return v;
}

static json_object *agg_json(const struct fnd_agg *a) {
  json_object *o = json_object_new_object();
  fnd_jint(o, "processes", a->writers);
  fnd_jint(o, "aggregators", a->aggregators);
  fnd_jint(o, "operations", a->ops);
  fnd_jint(o, "operations_alone", a->solo);
  fnd_jint(o, "operations_overlapping", a->overlapped);
  fnd_jnum(o, "concurrency", a->concurrency);
  fnd_jnum(o, "alone_ns_per_byte", a->solo_ns_per_b);
  fnd_jnum(o, "overlapping_ns_per_byte", a->overlap_ns_per_b);
  json_object_object_add(o, "parallelism_helped",
                         a->parallel < 0 ? json_object_new_string("unknown") : json_object_new_boolean(a->parallel));
  return o;
}

/* What the data says about parallelism, for the rationale. */
static const char *parallel_txt(const struct fnd_agg *a) {
  return a->parallel > 0   ? "running them at once helped (operations overlapping another process's slowed down less "
                             "than the concurrency grew)"
         : a->parallel == 0 ? (a->overlapped ? "running them at once did not help (operations overlapping another "
                                               "process's slowed down as much as the concurrency grew)"
                                             : "no two processes' operations overlapped")
                            : "the data cannot tell whether running them at once helped (too few operations alone or "
                              "overlapping)";
}

/* Collective buffering of one file and direction: ROMIO's two-phase I/O.
 * The job had some aggregation already (the processes whose collective
 * calls made file-system operations, at the concurrency seen); the keys
 * change the aggregators (cb_nodes), the buffer and so the rounds
 * (cb_buffer_size), and whether aggregation happens at all. Each side's
 * time is its operations' cost over the parallel speedup its number of
 * aggregators gets (a single aggregator serializes). A set that reduces
 * the aggregators must show that their parallelism did not help; where
 * the model cannot decide, or predicts no gain, nothing is recommended. */
static void analyze_cb(const struct fnd_job *j, int file, int write, const struct fnd_cost *m, struct fnd_out *o) {
  long calls = 0, posix_ops = 0;
  int64_t bytes = 0, posix_bytes = 0;
  int ops[5], nops = 0, writers = procs_on(j, file, write, 1), *rank_calls = calloc(j->nprocs + 1, sizeof(int));
  size_t nv = 0;
  struct fnd_interval *v = cb_ops(j, file, write, &nv);
  if (!rank_calls || !v) goto out;
  for (size_t a = 0; a < j->ncalls; a++) {
    const struct fnd_call *k = &j->calls[a];
    const struct fnd_op *op = &j->ops[k->op];
    if (op->file != file || !op->collective || (op->kind == FND_WRITE) != write) continue;
    calls++, bytes += op->bytes > 0 ? op->bytes : 0, rank_calls[op->proc]++;
    posix_ops += write ? k->n_wr : k->n_rd;
    posix_bytes += write ? k->wr_bytes : k->rd_bytes;
    if (nops < 5) ops[nops++] = k->op;
  }
  if (!calls || !bytes) goto out;
  struct fnd_agg ag;
  fnd_agg_model(v, nv, writers, &ag);
  int rounds = 0;
  for (size_t p = 0; p < j->nprocs; p++) rounds = rank_calls[p] > rounds ? rank_calls[p] : rounds;
  long nodes = j->nhosts ? (long)j->nhosts : 1;
  int k_new = (int)(nodes < writers ? nodes : writers);
  double per_round = (double)bytes / rounds, per_rank = (double)bytes / (double)calls;
  int64_t cbuf = pow2_at_least(per_round / (double)k_new);
  cbuf = cbuf < 65536 ? 65536 : cbuf > 16777216 ? 16777216 : cbuf;
  /* Observed: the operations as they were, at the aggregation the job had.
   * Predicted: one operation per rank and call without aggregation, or one
   * per buffer with it. The exchange between ranks is not in the model
   * (memory copies, small next to a file-system operation here). */
  double seen_ops = posix_ops > 0 ? (double)posix_ops : (double)calls;
  double seen_size = posix_ops > 0 ? (double)posix_bytes / (double)posix_ops : per_rank;
  int k_seen = ag.aggregators > 0 ? ag.aggregators : writers;
  /* Where the data cannot tell what parallelism buys, no side is credited
   * with any (1); a change to fewer aggregators is then refused below. */
  double sp_seen = fnd_agg_speedup(&ag, k_seen), sp_new = fnd_agg_speedup(&ag, k_new);
  double sp_direct = fnd_agg_speedup(&ag, writers);
  sp_seen = isnan(sp_seen) ? 1 : sp_seen, sp_new = isnan(sp_new) ? 1 : sp_new, sp_direct = isnan(sp_direct) ? 1 : sp_direct;
  double seen_s = seen_ops * fnd_cost_op(m, seen_size) / 1e9 / sp_seen;
  double direct_s = (double)calls * fnd_cost_op(m, per_rank) / 1e9 / sp_direct;
  double agg_ops = ceil((double)bytes / (double)cbuf);
  double cb_s = agg_ops * fnd_cost_op(m, (double)cbuf) / 1e9 / sp_new;
  double two_phase_rounds = ceil(per_round / ((double)cbuf * k_new));
  int enable = cb_s <= direct_s, unknown = cost_unknown(m);
  double best = enable ? cb_s : direct_s, gain = seen_s - best;
  /* Fewer aggregators than the job had: allowed only when the data shows
   * that their parallelism did not help. */
  int fewer = (enable ? k_new : writers) < k_seen;
  const char *undecided = NULL;
  if (fewer && ag.parallel != 0)
    undecided = ag.parallel > 0 ? "it would reduce parallelism that helped" : "it would reduce the parallelism, and the data cannot tell whether that parallelism helped";
  else if (!(gain > 0.05 * seen_s))
    undecided = "no gain is predicted over the aggregation the job already had";
  /* Fewer aggregators on the evidence that theirs never overlapped: one
   * run's schedule can make that so (ranks sharing fewer cores, a client
   * that serializes a shared file), and then one aggregator does the
   * exchange for all ranks alone. Such a set is tried on one run and
   * judged (an experiment) before it is credited with a gain. */
  int unseen = fewer && ag.overlapped == 0; /* not "seen not to help": that is evidence */
  const char *why_exp = unknown ? "per-byte cost unknown" : unseen ? "fewer aggregators, their overlap unseen" : NULL;
  json_object *ev = json_object_new_object();
  fnd_jint(ev, "calls", calls);
  fnd_jint(ev, "rounds", rounds);
  fnd_jint(ev, "bytes", bytes);
  fnd_jnum(ev, "bytes_per_round", per_round);
  fnd_jnum(ev, "bytes_per_rank_call", per_rank);
  fnd_jint(ev, "processes", writers);
  fnd_jint(ev, "nodes", nodes);
  fnd_jint(ev, "aggregators_seen", ag.aggregators);
  json_object_object_add(ev, "aggregation_seen", agg_json(&ag));
  fnd_jint(ev, "aggregators_predicted", enable ? k_new : writers);
  fnd_jnum(ev, "two_phase_rounds_per_call", two_phase_rounds);
  fnd_jint(ev, "posix_operations", posix_ops);
  fnd_jint(ev, "posix_bytes", posix_bytes);
  fnd_jnum(ev, "observed_model_s", seen_s);
  fnd_jnum(ev, "predicted_direct_s", direct_s);
  fnd_jnum(ev, "predicted_collective_buffering_s", cb_s);
  json_object_object_add(ev, "cost_model", cost_json(m));
  json_object_object_add(ev, "example_aids", fnd_aids(j, ops, (size_t)nops));
  if (undecided) json_object_object_add(ev, "no_recommendation", json_object_new_string(undecided));
  char exp_note[96] = "";
  if (why_exp && !undecided) {
    json_object_object_add(ev, "experiment", json_object_new_string(unknown ? m->how : parallel_txt(&ag)));
    snprintf(exp_note, sizeof exp_note, " (%s: an experiment)", why_exp);
  }
  const char *key = write ? "romio_cb_write" : "romio_cb_read";
  fnd_add(o, write ? "collective_write" : "collective_read", "info", file, ev, undecided || why_exp ? 0 : gain,
          "%ld collective %s calls in %d rounds, %.0f B per round from %d processes on %ld node(s); %d aggregator(s) "
          "made %ld operations at concurrency %.2f: %s. Model: %.3f s as seen, %.3f s with %d aggregator(s) and %lld B "
          "buffers, %.3f s without aggregation%s%s%s",
          calls, write ? "write" : "read", rounds, per_round, writers, nodes, ag.aggregators, ag.ops, ag.concurrency,
          parallel_txt(&ag), seen_s, cb_s, k_new, (long long)cbuf, direct_s, undecided ? ": nothing recommended, " : "",
          undecided ? undecided : "", exp_note);
  if (undecided) goto out;
  struct fnd_hintset *s = fnd_set(o, file);
  if (!s) goto out;
  if (unknown) {
    s->experiment = 1;
    snprintf(s->experiment_why, sizeof s->experiment_why,
             "%s: collective buffering priced with a per-byte cost the data did not determine (%.200s)",
             write ? "romio_cb_write" : "romio_cb_read", m->how);
  } else if (why_exp) {
    s->experiment = 1;
    snprintf(s->experiment_why, sizeof s->experiment_why,
             "%s: %d aggregator(s) instead of %d, whose operations never overlapped in this run: whether their "
             "parallelism would help was not seen, so the set is tried on one run first",
             write ? "romio_cb_write" : "romio_cb_read", enable ? k_new : writers, k_seen);
  } else {
    s->gain_s += gain;
  }
  fnd_hint(o, file, key, enable ? "enable" : "disable",
           "%.0f B per rank and call; as seen %d aggregator(s), %ld operations of %.0f B at concurrency %.2f (%s): "
           "%.3f s; %ld direct operations %.3f s; aggregated into %.0f operations of %lld B by %d aggregator(s) "
           "%.3f s (cost model a = %.0f us + %.3f ns/B, %s)",
           per_rank, ag.aggregators, ag.ops, seen_size, ag.concurrency, parallel_txt(&ag), seen_s, calls, direct_s,
           agg_ops, (long long)cbuf, k_new, cb_s, m->a_ns / 1e3, m->b_ns, m->how);
  if (enable) {
    char val[32];
    snprintf(val, sizeof val, "%lld", (long long)cbuf);
    fnd_hint(o, file, "cb_buffer_size", val,
             "%.0f B per collective round over %d aggregator(s), rounded up to a power of two (kept in 64 "
             "KiB..16 MiB): %.0f two-phase round(s) per call. No striping_unit/striping_factor: the file "
             "systems seen (GlusterFS distribute, local) keep a whole file on one brick and do not stripe",
             per_round, k_new, two_phase_rounds);
    snprintf(val, sizeof val, "%d", k_new);
    fnd_hint(o, file, "cb_nodes", val,
             "one aggregator per node: the job ran on %ld node(s) (%zu processes); the job had %d aggregator(s)%s", nodes,
             j->nprocs, ag.aggregators,
             !(k_new < k_seen) ? ""
             : unseen          ? ", whose operations never overlapped in this run (an experiment)"
                               : ", and their parallelism did not help");
  }
  json_object_object_add(s->evidence, write ? "collective_write" : "collective_read", json_object_get(ev));
out:
  free(rank_calls);
  free(v);
}

/* Which MPI-IO component served the file: 1 ROMIO, 0 OMPIO, -1 unknown.
 * What it did weighs most: data sieving (reads paired with the writes of an
 * independent write) and ROMIO's keys in MPI_File_get_info are ROMIO's.
 * Then the component the MPI layer recorded at open (from OMPI_MCA_io,
 * which an MCA parameter file can override). Both components (see
 * instrumentation/mpi/README.md) echo only the keys given at open, so an
 * empty mpi/hints says nothing, and keys without ROMIO's names point to
 * OMPIO. */
static int used_romio(const struct fnd_job *j, int file) {
  const char *h = j->files[file].hints, *c = j->files[file].component;
  if (strstr(h, "romio_") || strstr(h, "cb_buffer_size") || strstr(h, "ind_wr_buffer_size")) return 1;
  for (size_t a = 0; a < j->ncalls; a++) {
    const struct fnd_op *x = &j->ops[j->calls[a].op];
    if (x->file == file && !x->collective && x->kind == FND_WRITE && j->calls[a].n_rd > 0 &&
        j->calls[a].wr_bytes > x->bytes)
      return 1;
  }
  if (c[0]) return strncmp(c, "romio", 5) == 0;
  return h[0] ? 0 : -1;
}

/* One operation size and nothing smaller on the mount leave the per-byte
 * cost unknown; an earlier job of the same application and pattern that saw
 * several sizes knows it. */
static void use_prior(const struct fnd_file *f, struct fnd_cost *m) {
  if (m->sizes != 1 || m->b_ns > 0 || f->prior_b_ns < 0) return;
  double lat = m->a_ns;
  m->b_ns = f->prior_b_ns;
  m->a_ns = lat - m->b_ns * m->one_size > 0 ? lat - m->b_ns * m->one_size : 0;
  char how[sizeof m->how];
  snprintf(how, sizeof how,
           "one size observed (%.0f B, mean %.0f us); per-byte cost %.3f ns/B from the analysis of job %.100s "
           "(same application and file pattern, several sizes), the rest fixed",
           m->one_size, lat / 1e3, m->b_ns, f->prior_job);
  memcpy(m->how, how, sizeof how);
}

void fnd_analyze_mpiio(const struct fnd_job *j, struct fnd_out *o) {
  for (size_t f = 0; f < j->nfiles; f++) {
    int has_calls = 0;
    for (size_t a = 0; a < j->ncalls && !has_calls; a++) has_calls = j->ops[j->calls[a].op].file == (int)f;
    if (!has_calls) continue;
    struct fnd_cost m, floor;
    int have_floor = fnd_job_cost(j, (int)f, FND_SCOPE_MOUNT, NULL, &floor) == 0;
    if (fnd_job_cost(j, (int)f, FND_SCOPE_FILE, have_floor ? &floor : NULL, &m) < 0) {
      if (!have_floor) continue; /* no POSIX layer under MPI-IO: nothing to model */
      m = floor;
    }
    use_prior(&j->files[f], &m);
    for (int w = 1; w >= 0; w--) analyze_ds(j, (int)f, w, &m, o);
    for (int w = 1; w >= 0; w--) analyze_cb(j, (int)f, w, &m, o);
    if (used_romio(j, (int)f) == 0 && fnd_set(o, (int)f)) {
      json_object *ev = json_object_new_object();
      json_object_object_add(ev, "mpi_hints", json_object_new_string(j->files[f].hints));
      json_object_object_add(ev, "io_component", json_object_new_string(j->files[f].component));
      fnd_add(o, "mpiio_component", "warning", (int)f, ev, 0,
              "the job used OpenMPI's ompio (%s), which ignores ROMIO hints: the suggested set is stored for "
              "romio321; run with OMPI_MCA_io=romio321 to use it",
              j->files[f].component[0] ? "recorded at MPI_File_open, and MPI_File_get_info shows no ROMIO keys"
                                       : "MPI_File_get_info shows no ROMIO keys");
    }
  }
}
