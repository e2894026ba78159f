/*
 * The time of a call that no linked component covers (README.md "Metadata
 * paths and unexplained time"): the call's interval minus the union of the
 * intervals of every activity below an implicit link (the work of another
 * process: a GlusterFS client, a brick). What is left, SIOX cannot explain
 * from the data: the call's own layers, the kernel, or requests that no
 * component linked to it (a lookup of a name that does not exist yet
 * carries no gfid). Blame says so, with the stretches of time it covers,
 * instead of charging them to a component. Pure.
 */
#ifndef SIOX_CLI_BLAME_UNLINKED_H
#define SIOX_CLI_BLAME_UNLINKED_H

#include <stdbool.h>

#include "graph.h"

struct siox_unlinked {
  int64_t start_ns;            /* the call's start */
  int64_t total_ns;            /* the call's inclusive time */
  int64_t unlinked_ns;         /* the part no linked component covers */
  struct siox_interval *gaps;  /* owned: those stretches, absolute, in time order */
  size_t ngaps;
  size_t linked;               /* activities below an implicit link */
};

/* Finds the stretches of root's interval no activity below an implicit
 * link covers. 0 or -ENOMEM; out owns its array (siox_unlinked_release). */
int siox_unlinked_find(const struct siox_act *root, struct siox_unlinked *out);
/* The longest stretch (NULL when there is none). */
const struct siox_interval *siox_unlinked_longest(const struct siox_unlinked *u);
void siox_unlinked_release(struct siox_unlinked *u);

/* Whether the call's unlinked time outweighs what blame charges to the
 * component it would name (charged_ns: the component's own service of the
 * call plus the time the call queued at it): most of the call, and more
 * than twice the charge. Then the component is not named: it was slow, but
 * the call's time went mostly where no link reaches (a creat of a name on
 * a healthy brick, slowed by unlinked lookups elsewhere), and naming it
 * would blame it for time it did not take. */
bool siox_unlinked_outweighs(const struct siox_unlinked *u, int64_t charged_ns);

#endif
