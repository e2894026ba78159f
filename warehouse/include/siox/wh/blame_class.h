/*
 * The class of a blame verdict (README.md "Classes"): fault, transient,
 * interference, self-inflicted or normal, decided from the resource's
 * service time (against its peers, its kind's latency model or its own
 * baseline, in that order) and from what the call waited behind
 * (waiting.h). Also the kind's latency model: a fixed cost plus a cost per
 * byte, learned across all components of a kind and robust to the slow
 * ones. Pure: no database.
 */
#ifndef SIOX_CLI_BLAME_CLASS_H
#define SIOX_CLI_BLAME_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waiting.h"

/* ---- the kind's latency model ------------------------------------------- */

/* One operation of the kind (any component, any time). */
struct siox_kind_sample {
  int32_t node_id;
  int64_t ns;
  int64_t bytes; /* -1 unknown */
};

struct siox_kind_model {
  bool have;       /* fitted: samples of at least KIND_MIN_NODES components */
  double a_s, b_s; /* seconds = a_s + b_s * bytes */
  size_t nodes, samples, points;
};

#define SIOX_KIND_MIN_NODES 2
#define SIOX_KIND_CLASS_SHARE 4 /* a size class enters the fit from 1/4 of the components */

/* Fits the model: per component and size class (power of two) the median
 * size and time; per size class the median over the components (so one
 * slow component, however many samples it has, does not move it), using
 * only size classes seen on >= 2 components and on >= 1/4 of them (each
 * class is one point of the line, so classes only a few components served,
 * e.g. HDF5's small metadata writes on the one slowed brick of each job,
 * would otherwise outvote the sizes every component served); then blame's Theil-Sen line
 * through those points (one point: its time as a fixed cost, or per byte).
 * 0 (m->have says whether a model came out) or -ENOMEM. */
int siox_kind_model_fit(const struct siox_kind_sample *s, size_t n, struct siox_kind_model *m);
double siox_kind_model_expect_s(const struct siox_kind_model *m, int64_t bytes);

/* Median of the ratios time / model(bytes) of n operations: how the
 * component served around the call (0 without a model or operations). */
double siox_kind_model_median_ratio(const struct siox_kind_model *m, const struct siox_kind_sample *s, size_t n);

/* ---- the class ---------------------------------------------------------- */

enum siox_class {
  SIOX_CLASS_NONE,         /* no evidence at all: no verdict */
  SIOX_CLASS_NORMAL,       /* served normally, and did not wait to speak of */
  SIOX_CLASS_FAULT,        /* the resource's service time per request is abnormal */
  SIOX_CLASS_TRANSIENT,    /* this request was slow, the resource's other operations were not */
  SIOX_CLASS_INTERFERENCE, /* normal service, busy with other jobs' requests */
  SIOX_CLASS_SELF,         /* normal service, busy with the call's own job's requests */
};

enum siox_evidence {
  SIOX_EVIDENCE_NONE,
  SIOX_EVIDENCE_PEERS,    /* the same layer and operation on other nodes in the window */
  SIOX_EVIDENCE_KIND,     /* the kind's latency model */
  SIOX_EVIDENCE_BASELINE, /* the component's own history (knowledge base) */
};

/* A judgement from one source of evidence: -1 none, 0 normal, 1 abnormal. */
struct siox_class_input {
  int peers;         /* the peer rule on the call's own request(s) */
  int kind;          /* the call's own request against the kind's model (ratio) */
  int baseline;      /* the component's baseline (>= p95: abnormal) */
  double ops_ratio;  /* the component's operations around the call against the model (0: unknown) */
  size_t ops;        /* how many of them */
  double ops_shared_ratio; /* the same with concurrent service shared out per request (0: unknown) */
  double ratio;      /* the rule's ratio (abnormal at >= ratio x) */
  const struct siox_wait *wait; /* NULL when no resource was reached */
  double wait_share; /* queued at >= this share of the call's time counts as waiting (0.5) */
};

#define SIOX_CLASS_MIN_OPS 5 /* the component's own operations needed to call a slow request a transient */

struct siox_class_verdict {
  enum siox_class cls;
  enum siox_evidence by;  /* which evidence judged the service time */
  bool slow_service;      /* the evidence found the call's request(s) abnormal */
};

/* The rules, in order (README.md "Classes"):
 * 1. The service evidence is the first of peers, kind model, baseline that
 *    exists; it says whether the call's own request was served abnormally.
 * 2. Abnormal, but the component's other operations around the call (>=
 *    SIOX_CLASS_MIN_OPS, judged against the peers' median when peers judged
 *    the call, else the kind's model: ops_ratio) are within the ratio:
 *    the request is a lone outlier (a transient), not a fault — unless the
 *    call waited, which is then classified by rule 4.
 * 3. Abnormal otherwise (or the component's operations are abnormal): fault
 *    -- unless the operations are normal per request once concurrent
 *    service is shared out (ops_shared_ratio) and the call queued >=
 *    wait_share mostly behind other jobs: the component was busy serving
 *    them, not faulty (rule 4 decides).
 * 4. Queued >= wait_share of the call: interference when other jobs hold
 *    most of the queued time, else self-inflicted.
 * 5. Otherwise normal; with no evidence at all, none. */
struct siox_class_verdict siox_classify(const struct siox_class_input *in);

const char *siox_class_name(enum siox_class c);
const char *siox_evidence_name(enum siox_evidence e);

#endif
