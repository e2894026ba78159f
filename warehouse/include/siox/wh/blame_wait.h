/*
 * Blame that charges waiting to its cause (README.md "Waiting" and
 * "Classes"): after blame.c's walk and peer judgement, find the resource
 * the call's time went to, what it served around the call (waiting.c), how
 * it served (its peers, its kind's latency model, its baseline) and the
 * class of the verdict (blame_class.c). This file fetches; the rules are
 * in the pure files.
 */
#ifndef SIOX_CLI_BLAME_WAIT_H
#define SIOX_CLI_BLAME_WAIT_H

#include <libpq-fe.h>

#include "blame.h"
#include "blame_class.h"
#include "blame_unlinked.h"
#include "warehouse.h"
#include "waiting.h"

#define SIOX_KIND_HISTORY_PER_NODE 2000
/* A kept kind model (schema 024) serves a call when the fold has reached
 * the call's start less this: a live server folds 120 s behind now (its
 * settle time), plus its period and the minute alignment. Otherwise blame
 * fits the model itself. */
#define SIOX_KIND_MODEL_MAX_LAG_NS 300000000000LL
#define SIOX_AROUND_NS 2000000000LL /* the component's operations around the call: +/- 2 s */

struct siox_blame_wait {
  const struct siox_act *resource; /* the call's request at the resource (the heaviest); NULL: none reached */
  struct siox_served_set served;   /* what the resource served around the call */
  struct siox_wait w;               /* at the resource: own service, queued, unexplained */
  /* The queue one level up (the client's connection to the brick), when it
   * explains more of the gap than the resource itself. */
  const struct siox_act *upper;    /* the call's request there; NULL: none */
  struct siox_served_set upper_served;
  struct siox_wait upper_w;
  /* Exact queue intervals (README.md "Waiting"): the FUSE channel of the
   * client process that served the call's client fop (chan_at), analysed
   * over the call's time before its fops arrived there, and the tandem of
   * both queues (w over its windows, plus chan_w). */
  const struct siox_act *chan_at;  /* NULL: not analysed (no exact windows) */
  struct siox_served_set chan_served;
  struct siox_wait chan_w, tandem;
  const struct siox_wait *queue;   /* &w, &upper_w or &tandem: the queue the call waited in */
  const struct siox_act *queue_at; /* resource or upper */
  int64_t unexplained_ns;          /* the resource's gap minus the queue's queued time */
  /* The resource is a client subvolume whose brick took the call's request
   * late: the time from the client's wind to the brick's start, moved from
   * own service to the gap (siox_blame_connection_windows). */
  int64_t in_connection_ns;
  struct siox_kind_model kind;
  int64_t kind_to_ns;              /* the model's history: operations that started before this */
  bool kind_refit;                 /* fitted for this call (else read as kept by the fold) */
  int64_t own_bytes;               /* of the call's own requests of the resource's kind */
  double own_expected_s;           /* the kind's model for one of them (resource->bytes) */
  double own_ratio;                /* resource time over that */
  double ops_ratio;                /* the component's operations of that kind around the call, median ratio */
  double ops_share;                /* their median time with concurrent service shared out (siox_served_shared_ns)
                                      over their median whole time (1: none concurrent) */
  size_t ops;
  int64_t ops_median_ns;
  size_t ops_sized;                /* those of them that moved bytes */
  double ops_s_per_byte;           /* their median seconds per byte (0: none) */
  bool ops_by_peers;               /* in.ops_ratio is against the peers' median, not the kind's model */
  struct siox_blame peer;          /* the resource against its peers (peer.peers owned) */
  bool peer_judged;
  struct siox_class_input in;
  struct siox_class_verdict v;
  /* Set by siox_blame_wait_unlinked when the call's unlinked time outweighs
   * the component the class would name: v is then class none (over a
   * fault) or normal (over a transient, decided by the same evidence), and
   * named is the verdict it replaced. */
  bool outweighed;
  int64_t collective_wait_ns; /* what siox_blame_wait_unlinked charged for collective waits */
  struct siox_class_verdict named;
};

/* Picks the resource of b (the culprit; else the deepest remote activity
 * on the path; else the heaviest candidate) and runs the queries and
 * rules. baseline: the resource's baseline judgement (-1 unknown, 0
 * normal, 1 abnormal), filled in later by the caller through
 * siox_blame_wait_classify. 0, or negative errno with a message in err. */
int siox_blame_wait_run(PGconn *c, const struct siox_blame *b, siox_blame_fetch_fn fetch, void *ctx,
                        struct siox_blame_wait *out, char *err, size_t errlen);
/* The connection as a queue (README.md "Waiting", step 5): every own
 * request in set (activities of a's tree at node) that has a child on
 * another node (a client fop over its brick fop) is served only from that
 * child's start; before it the request sat in the client's connection to
 * the brick, behind whatever else the subvolume had in flight. Pure: edits
 * set's start times, returns the time moved out of own service. */
int64_t siox_blame_connection_windows(const struct siox_act *a, int32_t node, struct siox_served_set *set);
/* Decides the class from what run found and the baseline judgement. */
void siox_blame_wait_classify(struct siox_blame_wait *out, int baseline);
/* After classify: withdraws a fault or transient whose component the
 * call's unlinked time outweighs (siox_unlinked_outweighs): the component
 * is charged its service of the call, the time the call queued there, and
 * collective_ns, the call's waits in collectives for ranks the component
 * held up (siox_collective_wait_ns, summed over siox_collective_waits).
 * A withdrawn fault leaves class none; a withdrawn transient leaves class
 * normal (see outweighed). */
void siox_blame_wait_unlinked(struct siox_blame_wait *out, const struct siox_unlinked *u, int64_t collective_ns);
void siox_blame_wait_release(struct siox_blame_wait *out);

#endif
