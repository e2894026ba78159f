/*
 * Implicit-link confidence (server side of causal matching, after the
 * candidate search in match.c). One receive at a time: keep the candidates
 * of R's kind of range (ranged or not) when there are any, and of those
 * the best class (inside, else before-parent, else after-parent), split
 * the confidence by overlapping bytes, and give 1.0 only to a single inside
 * candidate that covers the whole received range.
 */
#include "link.h"

/* The weight of a candidate: its overlapping bytes; 1 for all when R names
 * no byte range (equal shares); all of R when S names none (see unranged). */
static double weight(const struct siox_link_cand *c, uint64_t r_len) {
  if (r_len == 0) return 1.0;
  return c->overlap ? (double)c->overlap : (double)r_len;
}

/* A sender without a byte range cannot show that it covers R's bytes. */
static int unranged(const struct siox_link_cand *c, uint64_t r_len) { return r_len > 0 && c->overlap == 0; }

/* Same kind of range first. Matching is by object, so a metadata fop
 * (no range: a client open, flush or fsync) inside a concurrent write to
 * the same file by another process has the write as a candidate besides
 * its own open/close/fsync, and a brick writev inside a concurrent client
 * fsync has the fsync besides its writev. The sender of R's own kind (no
 * range for no range, overlapping bytes for a range) is the call that made
 * it; the other kind only stands in when none of R's kind is there. */
static int own_kind(const struct siox_link_cand *c, uint64_t r_len) {
  return r_len == 0 ? !c->s_ranged : c->overlap > 0;
}

int siox_link_cand_better(const struct siox_link_cand *a, const struct siox_link_cand *b, uint64_t r_len) {
  if (a->cls != b->cls) return a->cls < b->cls;
  if (a->overlap != b->overlap) return a->overlap > b->overlap;
  if (own_kind(a, r_len) != own_kind(b, r_len)) return own_kind(a, r_len);
  if (a->strict != b->strict) return a->strict;
  return a->contains > b->contains;
}

/* Whether candidate c takes part: of R's kind, or no candidate is. */
static int of_kind(const struct siox_link_cand *c, size_t n, size_t i, uint64_t r_len) {
  if (own_kind(&c[i], r_len)) return 1;
  for (size_t k = 0; k < n; k++)
    if (own_kind(&c[k], r_len)) return 0;
  return 1;
}

/* Strictly inside first, for an unranged R. No bytes tell apart two
 * metadata fops of one client on the same file (a lookup and the open
 * right after it), and the clock widening lets R sit inside both; the
 * sender whose own interval holds R is the one that made it. Across
 * hosts, where the widening matters, none may hold R strictly: then all
 * stand, as before. */
static int eligible(const struct siox_link_cand *c, size_t n, size_t i, uint64_t r_len) {
  if (!of_kind(c, n, i, r_len)) return 0;
  if (r_len > 0 || c[i].cls != SIOX_LINK_INSIDE || c[i].strict) return 1;
  for (size_t k = 0; k < n; k++)
    if (k != i && c[k].cls == SIOX_LINK_INSIDE && c[k].strict && of_kind(c, n, k, r_len)) return 0;
  return 1;
}

static int best_class(const struct siox_link_cand *c, size_t n, uint64_t r_len) {
  int best = SIOX_LINK_AFTER;
  for (size_t i = 0; i < n; i++)
    if (eligible(c, n, i, r_len) && c[i].cls < best) best = c[i].cls;
  return best;
}

static const char *const flags[] = {[SIOX_LINK_INSIDE] = "", [SIOX_LINK_BEFORE] = "before-parent",
                                    [SIOX_LINK_AFTER] = "after-parent"};

size_t siox_link_confidence(const struct siox_link_cand *c, size_t n, uint64_t r_len, struct siox_link *out) {
  if (n == 0) return 0;
  int cls = best_class(c, n, r_len);
  double total = 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (c[i].cls == cls && eligible(c, n, i, r_len)) total += weight(&c[i], r_len), k++;
  /* Uncovered bytes of R count against every candidate: a single sender
   * covering half of R is a 0.5 link, not a certain one. */
  double denom = (r_len > 0 && (double)r_len > total) ? (double)r_len : total;
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (c[i].cls != cls || !eligible(c, n, i, r_len)) continue;
    double conf = (k == 1 && c[i].contains) ? 1.0 : weight(&c[i], r_len) / denom;
    if (unranged(&c[i], r_len) && conf > SIOX_LINK_UNRANGED_MAX) conf = SIOX_LINK_UNRANGED_MAX;
    if (cls == SIOX_LINK_BEFORE) conf *= SIOX_LINK_BEFORE_MAX;
    if (cls == SIOX_LINK_AFTER) conf *= SIOX_LINK_AFTER_MAX;
    if (conf > 1.0) conf = 1.0;
    if (conf < 1e-6) conf = 1e-6; /* the warehouse demands > 0: tiny, never dropped */
    out[m++] = (struct siox_link){c[i].parent, conf, c[i].overlap, flags[cls]};
  }
  return m;
}
