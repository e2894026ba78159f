/*
 * The outcome rule of an applied hint set (outcome_rule.c, pure, no
 * database): did the runs that applied the set spend less time per byte in
 * the affected MPI-IO calls than comparable runs without it, beyond noise?
 */
#ifndef SIOX_KB_OUTCOME_RULE_H
#define SIOX_KB_OUTCOME_RULE_H

#include <stddef.h>

/* One affected MPI-IO call: its duration and the bytes it moved. */
struct kb_call {
  double s;
  double bytes;
};

/* One run (job) as its affected calls. */
struct kb_run {
  const struct kb_call *calls;
  size_t n;
};

enum kb_verdict {
  KB_NOT_MEASURED, /* no run with the set, or none without it */
  KB_NO_CHANGE,    /* the interval holds 1: within noise */
  KB_FASTER,       /* the whole interval above 1 */
  KB_SLOWER        /* the whole interval below 1 */
};

struct kb_outcome {
  enum kb_verdict verdict;
  /* median time per unit of the runs without / with the set: > 1 the set
   * made the calls faster. The interval is the bootstrap's 2.5 .. 97.5 %. */
  double speedup, ci_low, ci_high;
  int per_byte; /* 1: time per byte; 0: time per call (no call moved bytes) */
  size_t runs_with, runs_without;
  size_t calls_with, calls_without;
};

#define KB_BOOTSTRAP_ROUNDS 2000

/* Judges with[nw] against without[nwo]. A run's figure is the sum of its
 * calls' time over the sum of their bytes (per call when no call of either
 * side moved bytes); each side's figure is the median of its runs'. The
 * interval comes from a two-stage bootstrap (runs with replacement, then
 * each chosen run's calls with replacement), so it holds the noise between
 * runs when a side has several and the noise between calls always; with one
 * run a side, only the latter. The generator is seeded with a constant: the
 * same runs give the same verdict. Runs without calls are ignored. Returns
 * 0, or -1 when out of memory. */
int kb_outcome_judge(const struct kb_run *with, size_t nw, const struct kb_run *without, size_t nwo,
                     struct kb_outcome *out);

const char *kb_verdict_name(enum kb_verdict v);

#endif
