/*
 * Blame of one call as a whole (README.md, "Blame of one call"): the steps
 * `siox blame AID` runs in order (load the causal tree, walk it to the
 * suspect, judge it against its peers, the waiting step, the baseline, the
 * unlinked time, the sibling a collective waited for) and the document
 * `siox blame AID --json` prints, so that every front end (the CLI, `siox
 * web`'s /api/blame) answers with the same bytes from one place; and the
 * same for a job's slowest calls (`siox blame --job J --json`).
 *
 * Conventions as in siox_wh.h: the caller owns the connection (one thread
 * at a time), functions return 0 or a negative errno with a one-line
 * message in err (never printed here).
 */
#ifndef SIOX_BLAME_DOC_H
#define SIOX_BLAME_DOC_H

#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "siox/siox_kb_baselines.h"
#include "siox/siox_wh.h"

/* Scores an activity against its component's baseline: the knowledge
 * base's siox_kb_baseline_score (libsiox-kb links this library, so the
 * front end passes it in rather than this library calling it). */
typedef int (*siox_blame_score_fn)(PGconn *c, int64_t aid, int64_t exclude_from_ns, int64_t exclude_to_ns,
                                   struct siox_kb_score *out, char *err, size_t errcap);

struct siox_blame_opts {
  long margin_s;           /* peers' window: the call's interval widened by this each side */
  long depth;              /* causal links followed at most */
  double ratio;            /* a culprit at this many times the peers' median */
  bool refit_kind;         /* fit the kind's model per call (--refit-kind-model) */
  siox_blame_score_fn score; /* NULL: every baseline judgement is "unknown" */
};
/* `siox blame`'s defaults; set .score. */
#define SIOX_BLAME_OPTS_DEFAULT {.margin_s = 10, .depth = 32, .ratio = 3.0}
/* How many of a job's slowest calls `siox blame --job` blames by default. */
#define SIOX_BLAME_JOB_CALLS 20

/* The culprit's (else the suspect's) rank in its component's own baseline,
 * with the call's run (its job's span and the peer window) left out. */
struct siox_blame_baseline {
  int have; /* 1: scored (the knowledge base answered) */
  int64_t aid;
  int64_t from_ns, to_ns; /* left out of the baseline */
  struct siox_kb_score s;
};

/* A call that reached no shared resource itself and was blamed through the
 * sibling its collective waited for (blame_sibling.h). */
struct siox_blame_via {
  bool used;
  int64_t root_aid, root_ns, coll_aid, sibling_aid;
  int32_t sibling_pid;
  char root_name[64], coll_name[64];
};

/* Everything blame found about one call (the sibling's, when via.used);
 * the caller reads it and releases it with siox_blame_call_release. */
struct siox_blame_call {
  struct siox_tree *t;
  struct siox_blame b;
  struct siox_blame_wait w;
  struct siox_blame_peers f;
  struct siox_blame_baseline v;
  struct siox_blame_via via;
  struct siox_unlinked u; /* the call's time no linked component covers */
};

/* Blames call aid into *k; when its collective waited for another rank's
 * I/O that no link ties to it, blames that rank's call instead (k->via
 * says so). Release *k with siox_blame_call_release whatever this returns.
 * 0, -ENOENT (no such activity, or not this role's: row-level security),
 * -ENOMEM, -EIO (a query failed). */
int siox_blame_call_run(PGconn *c, const struct siox_blame_opts *o, int64_t aid, struct siox_blame_call *k, char *err,
                        size_t errlen);
void siox_blame_call_release(struct siox_blame_call *k);

/* The verdict in sentences (the CLI's text, the document's "explanation");
 * malloc'ed, the caller frees it. NULL on ENOMEM. */
char *siox_blame_explain(const struct siox_blame_call *k, long margin_s);

/* The document of a blamed call with its explanation prose; the caller
 * owns it (json_object_put). */
json_object *siox_blame_call_json(const struct siox_blame_call *k, long margin_s, const char *prose);

/* Blames call aid (siox_blame_call_run) and builds the document `siox
 * blame AID --json` prints into *out (the caller's; NULL on error). Errors
 * as siox_blame_call_run's. */
int siox_blame_document(PGconn *c, int64_t aid, const struct siox_blame_opts *o, json_object **out, char *err,
                        size_t errlen);

/* Blame of job J (`siox blame --job J`): its `calls` slowest calls that
 * nothing caused, each blamed as above and summed into *j (blame_job.h;
 * the caller releases it with siox_job_release whatever this returns).
 * 0, -ENOENT (the job has no such calls, or they are not this role's),
 * -ENOMEM, -EIO. */
int siox_blame_job_run(PGconn *c, const char *job, long calls, const struct siox_blame_opts *o,
                       struct siox_job_blame *j, char *err, size_t errlen);
/* The document `siox blame --job J --json` prints; the caller owns it. */
json_object *siox_blame_job_json(const char *job, const struct siox_job_blame *j);
/* Both: the job's document into *out (the caller's; NULL on error). */
int siox_blame_job_document(PGconn *c, const char *job, long calls, const struct siox_blame_opts *o,
                            json_object **out, char *err, size_t errlen);

/* The component blame names: the resource (else the suspect) when the
 * class is fault; NULL otherwise. */
const struct siox_act *siox_blame_culprit(const struct siox_blame *b, const struct siox_blame_wait *w);
/* a's share of the call's time, in percent. */
double siox_blame_share(const struct siox_blame *b, const struct siox_act *a);
/* A value in the evidence's unit ("1.20x the line", "3.1 ms/MiB", "5 ms"). */
const char *siox_blame_value_str(const struct siox_blame *b, double v, char *buf, size_t len);

#endif
