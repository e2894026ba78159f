/*
 * Blame through the siblings of a collective call, with the warehouse
 * (blame_collective.h has the rules, README.md "Collective calls"): which
 * sibling a call that reached no shared resource waited for, and how much
 * of a call's unlinked time its waiting collectives spent waiting for ranks
 * its resource held up. Front ends present what these compute.
 */
#ifndef SIOX_CLI_BLAME_SIBLING_H
#define SIOX_CLI_BLAME_SIBLING_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "blame.h"
#include "blame_unlinked.h"
#include "blame_wait.h"

/* The sibling a collective call on blame's path waited for. */
struct siox_blame_sibling {
  const struct siox_act *coll; /* the collective on b's path (in b's tree); NULL: none */
  int64_t aid;                 /* the sibling's call; 0: none followed */
  int32_t pid;                 /* its process */
};

/* Fills out with the sibling to follow (siox_collective_pick over
 * siox_wh_siblings of the deepest collective on b's path), or out->aid 0
 * when the call reached a shared resource itself (w->resource: its own
 * evidence stands), has no collective on its path, or no sibling made
 * I/O. 0, or negative errno with a message in err. */
int siox_blame_sibling_find(PGconn *c, const struct siox_blame *b, const struct siox_blame_wait *w,
                            struct siox_blame_sibling *out, char *err, size_t errlen);

/* After siox_blame_wait_classify: finds the call's unlinked time into u
 * (siox_unlinked_find; release it with siox_unlinked_release, also on
 * error) and, when w names a fault or transient that time may withdraw,
 * sums the waits of EVERY waiting collective in the call's tree charged to
 * w's resource (siox_collective_waited, siblings from siox_wh_siblings);
 * then siox_blame_wait_unlinked. 0, or negative errno (-ENOMEM, -EIO) with
 * a message in err: the verdict is then not to be shown. */
int siox_blame_unlinked_run(PGconn *c, const struct siox_blame *b, struct siox_blame_wait *w,
                            struct siox_unlinked *u, char *err, size_t errlen);

#endif
