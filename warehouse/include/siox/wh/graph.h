/*
 * Causal trees in memory: the activities of one call and everything it caused,
 * as loaded from the warehouse (warehouse_tree.c) or built by tests. Pure:
 * no I/O. graph.c computes inclusive/exclusive times and the critical path;
 * blame.c walks the result.
 */
#ifndef SIOX_CLI_GRAPH_H
#define SIOX_CLI_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum siox_link_kind {
  SIOX_LINK_ROOT = 0,     /* the tree's root: no parent in this tree */
  SIOX_LINK_EXPLICIT = 1, /* parent known in-process (activity stack, layer) */
  SIOX_LINK_IMPLICIT = 2, /* reconstructed by the server, with a confidence */
};

enum siox_attr_kind { SIOX_AV_I64, SIOX_AV_U64, SIOX_AV_F64, SIOX_AV_TEXT };

struct siox_attr {
  char *name; /* ontology name, or "attr#<id>" for an unknown id */
  char *unit; /* ontology unit, "-" when dimensionless */
  enum siox_attr_kind kind;
  union {
    int64_t i;
    uint64_t u;
    double f;
    char *text;
  } v;
};

/* What a caller supplies per activity; strings are copied by siox_tree_add. */
struct siox_act_info {
  int64_t aid;
  int64_t parent; /* 0: none (the root, or an orphan) */
  enum siox_link_kind link;
  double confidence; /* 1.0 for explicit links */
  const char *flags; /* e.g. "before-parent"; NULL or "" when none */
  int32_t node_id, proc_id, pid;
  const char *hwid, *swid, *iid, *name, *host, *job;
  int64_t start_ns, end_ns;
  int32_t err;
};

struct siox_act {
  int64_t aid, parent;
  enum siox_link_kind link;
  double confidence;
  char *flags;
  int32_t node_id, proc_id, pid;
  char *hwid, *swid, *iid, *name, *host, *job;
  int64_t start_ns, end_ns;
  int32_t err;
  int64_t bytes; /* io/bytes when present, else -1 */
  struct siox_attr *attrs;
  size_t nattrs;
  /* Computed by siox_tree_finish: */
  int64_t inclusive_ns, exclusive_ns;
  bool critical; /* on the critical path from the root */
  int depth;     /* 0 at the root */
  struct siox_act **children; /* sorted by start time */
  size_t nchildren;
};

struct siox_tree {
  struct siox_act *acts; /* owned; stable only after siox_tree_finish */
  size_t n, cap;
  struct siox_act **by_aid; /* sorted index, built by siox_tree_finish */
  struct siox_act *root;
  size_t unreachable; /* activities whose parent is not in the tree */
  bool finished;
};

/* Returns a new empty tree (NULL on ENOMEM); free it with siox_tree_destroy. */
struct siox_tree *siox_tree_create(void);
void siox_tree_destroy(struct siox_tree *t);

/* Copies one activity into the tree. 0, -EINVAL after finish, -ENOMEM. */
int siox_tree_add(struct siox_tree *t, const struct siox_act_info *info);

/* Links children to parents, picks root_aid as the root and computes
 * inclusive/exclusive times, depths and the critical path. Returns 0,
 * -ENOENT when root_aid is not in the tree, -ENOMEM. */
int siox_tree_finish(struct siox_tree *t, int64_t root_aid);

/* The activity with this aid, or NULL. Needs a finished tree. */
struct siox_act *siox_tree_find(const struct siox_tree *t, int64_t aid);

/* Appends a numeric attribute (copies name and unit); when the name is
 * io/bytes it also sets act->bytes. 0 or -ENOMEM. */
int siox_act_add_num(struct siox_act *a, const char *name, const char *unit, enum siox_attr_kind kind, int64_t i,
                     double f);
/* Appends a text attribute (copies everything). 0 or -ENOMEM. */
int siox_act_add_text(struct siox_act *a, const char *name, const char *unit, const char *text);

/* The activity's component as "hwid SWID[#iid]" into buf (truncated to
 * len); the key job-level blame sums by and the name the front ends print.
 * Returns buf. */
char *siox_act_component(const struct siox_act *a, char *buf, size_t len);

struct siox_interval {
  int64_t start, end;
};

/* Exclusive time of [start, end) given its children's intervals: the length
 * minus the union of the children's intervals clipped to [start, end).
 * Children overlap in parallel I/O, so a sum would count time twice. iv is
 * scratch: it gets clipped and sorted. */
int64_t siox_exclusive_ns(int64_t start, int64_t end, struct siox_interval *iv, size_t n);

/* The child of a on the critical path (latest end; ties: longer, then lower
 * aid), or NULL for a leaf. */
struct siox_act *siox_act_critical_child(const struct siox_act *a);

/* Re-marks `critical`: only the n activities of path (blame's walk, so the
 * picture and blame agree), and mark with all its ancestors (a culprit off
 * the path; NULL for none). */
void siox_tree_mark(struct siox_tree *t, const struct siox_act *const *path, size_t n, const struct siox_act *mark);

/* Number of activities reachable from the root (the tree as displayed). */
size_t siox_tree_size(const struct siox_tree *t);

#endif
