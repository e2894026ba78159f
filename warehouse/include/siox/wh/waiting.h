/*
 * Waiting made visible (README.md "Waiting"): a shared resource (a brick, a
 * client's connection to one brick) is a queue. Given the interval of one
 * call, the requests the call itself made at the resource (its own
 * service) and every request the resource served around it (with the
 * process and job each came from), this says how much of the call's time
 * the resource spent serving the call, how much serving others while the
 * call waited (the `waited-for` relation, per origin, with the share of the
 * gap it explains and a confidence), and how much is left unexplained.
 * Pure: no database; the warehouse query is in warehouse_waiting.c.
 */
#ifndef SIOX_CLI_WAITING_H
#define SIOX_CLI_WAITING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One request the resource served. Strings are borrowed. */
struct siox_served {
  int64_t aid;
  int64_t start_ns, end_ns;
  int64_t bytes;   /* io/bytes, or -1 */
  int64_t origin;  /* aid of the call it served (top of its causal chain) */
  int32_t pid;     /* the origin's process */
  const char *host, *job; /* the origin's host and job ("" unknown) */
  bool own;        /* one of the analysed call's own requests */
  int64_t queued_ns; /* glusterfs/queued_ns: in its process before it was wound (0 unknown) */
  /* Own requests: when the request joined this resource's queue (its wind
   * one level up, e.g. the client fop's start for a brick request; 0:
   * unknown). When any own request has it, the queue intervals are exact:
   * only [queue_from_ns, start_ns) of the own requests counts as queued
   * here (README.md "Waiting", exact queue intervals). Others' requests:
   * the same, to tell which were ahead of an own one in the queue. */
  int64_t queue_from_ns;
  /* Own requests: when the request's part below this resource ended while
   * it was still held here (its brick fop's end, for a client fop in the
   * client process's channel; 0: none). [reply_from_ns, end_ns) is the
   * wait for its reply to be taken up: not service, a queue window. */
  int64_t reply_from_ns;
  /* The node one level up that wound the request into this resource's
   * queue (with queue_from_ns; the client subvolume over a brick): the
   * requests of one queue, e.g. one client's connection to the brick. */
  int32_t queue_node;
};

/* The requests of one origin process that the call waited behind. */
struct siox_waited_for {
  const char *job, *host; /* borrowed */
  int32_t pid;
  bool same_job;      /* the call's own job */
  size_t requests;    /* its requests served during the gap */
  int64_t charged_ns; /* its part of the gap (concurrent requests split it) */
  double share;       /* charged_ns / gap */
  double confidence;  /* see waiting.c: the resource's busy share of the gap, halved for requests that arrived after
                         the call's own first request (not queued ahead of it) */
  int64_t median_service_ns; /* its requests' median time at the resource */
  int64_t first_aid;  /* an example request */
};

struct siox_wait {
  int64_t total_ns;        /* the call's inclusive time */
  int64_t own_ns;          /* union of the call's own requests at the resource, inside the call */
  size_t own_requests;
  int64_t own_bytes;       /* their io/bytes (0 when unknown) */
  int64_t gap_ns;          /* total - own: the time the call was not being served there */
  int64_t queued_ns;       /* part of the gap the resource was serving others */
  int64_t queued_same_job_ns, queued_other_jobs_ns;
  int64_t unexplained_ns;  /* gap - queued */
  size_t others;           /* requests of others served during the gap */
  int64_t others_median_ns;
  struct siox_waited_for *by; /* owned; largest charge first */
  size_t nby;
  bool exact;              /* queued time from recorded queue intervals, not inferred from the gap */
};

/* Analyses the call [start_ns, end_ns) of job `job` against the n requests
 * s[] of one resource. Others' requests are clipped to the gap (the call's
 * interval minus its own service); time when several others were served at
 * once is split evenly among them. out owns its array (siox_wait_release).
 * 0, -EINVAL (end < start), -ENOMEM. */
int siox_wait_analyze(int64_t start_ns, int64_t end_ns, const char *job, const struct siox_served *s, size_t n,
                      struct siox_wait *out);
void siox_wait_release(struct siox_wait *w);

/* Each request's time at the resource with concurrent service shared out
 * (processor sharing): every instant at which k of the n requests were in
 * service counts 1/k to each. A busy component serving several requests at
 * once takes longer for each, yet no longer per request: this is the
 * service time per request the fault rule judges (README.md "Classes").
 * out[i] for s[i]. 0 or -ENOMEM. */
int siox_served_shared_ns(const struct siox_served *s, size_t n, int64_t *out);

/* The call's waiting in two queues in tandem along its path (the FUSE
 * channel, then the brick): a's own service, gap and total with the queued
 * time of both (at most the gap) and their waited-for relations merged per
 * origin process. Meant for queues analysed over disjoint windows of the
 * same call (exact intervals). out owns its array. 0 or -ENOMEM. */
int siox_wait_merge(const struct siox_wait *a, const struct siox_wait *b, struct siox_wait *out);

#endif
