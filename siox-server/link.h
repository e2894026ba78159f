/*
 * Confidence of implicit (cross-process) causal links: given every candidate
 * sender S of one receive R, decide which links to write and how sure each
 * one is. Pure computation; siox-server/match.c feeds it from SQL. The rules
 * are documented in siox-server/README.md.
 */
#ifndef SIOX_LINK_H
#define SIOX_LINK_H

#include <stddef.h>
#include <stdint.h>

enum siox_link_class {
  SIOX_LINK_INSIDE = 0, /* R inside S's widened interval */
  SIOX_LINK_BEFORE = 1, /* R started before S (read-ahead): low, flagged */
  SIOX_LINK_AFTER = 2,  /* R outlived S, within the lateness window (write-behind): low, flagged */
};

/* The confidence of a link that relies on R starting before S never exceeds this. */
#define SIOX_LINK_BEFORE_MAX 0.2
/* ...nor does that of a link that relies on R outliving S. */
#define SIOX_LINK_AFTER_MAX 0.2
/* ...and that of a sender that names no byte range while R does, this. */
#define SIOX_LINK_UNRANGED_MAX 0.5

struct siox_link_cand {
  int64_t parent;      /* S's global aid */
  int cls;             /* enum siox_link_class */
  uint64_t overlap;    /* bytes of R's range that S's range covers (0: S has no range) */
  int contains;        /* S's range contains R's whole range (or R has none) */
  int s_ranged;        /* S names a byte range (length > 0); consulted when R names none */
  int strict;          /* R lies inside S's own interval, not only the widened one */
};

struct siox_link {
  int64_t parent;
  double confidence; /* in (0, 1] */
  uint64_t overlap;
  const char *flags; /* "", "before-parent" or "after-parent" (static) */
};

/* A sender with several records on R's object is one candidate: its best
 * record. Whether a is better than b: the better class, then more
 * overlapping bytes, then of R's own kind of range, then strictly inside,
 * then containing R. (Before, ties kept whichever row came first, and the
 * SQL matcher's row order is not fixed.) */
int siox_link_cand_better(const struct siox_link_cand *a, const struct siox_link_cand *b, uint64_t r_len);

/* Computes the links of one receive of r_len bytes (0: no byte range) from
 * its n candidates into out[] (room for n); returns how many were written.
 * Candidates of R's own kind of range come first (ranged for a ranged R,
 * unranged for an unranged R), when there are any; of those, only the best
 * class present is linked: inside, else before, else after. An unranged R
 * with several inside candidates keeps those that contain it without the
 * clock widening, when any does. */
size_t siox_link_confidence(const struct siox_link_cand *c, size_t n, uint64_t r_len, struct siox_link *out);

#endif
