/*
 * Blame's baseline step: the culprit (else the suspect) ranked against its
 * own component's learned latency baseline (the knowledge base's, scored
 * by the function the front end passes: this library cannot link libsiox-kb,
 * which links it), with the call's run left out so that the episode being
 * judged is not its own normal.
 */
#include <inttypes.h>
#include <string.h>

#include "blame_doc.h"
#include "format.h"
#include "json_build.h"

static const char *judgement(const struct siox_blame_baseline *v) {
  if (!v->have || !v->s.found) return "unknown";
  return v->s.percentile >= SIOX_BLAME_ABNORMAL_PCT ? "abnormal" : "normal";
}

/* The call's run (its job's span and the peer window q) is left out. */
void blame_baseline_score(PGconn *c, const struct siox_blame_opts *o, const struct siox_blame *b,
                          const struct siox_act *x, const struct siox_peer_query *q, struct siox_blame_baseline *v) {
  char err[512];
  memset(v, 0, sizeof *v);
  v->aid = x->aid;
  v->from_ns = q->from_ns;
  v->to_ns = q->to_ns;
  siox_wh_job_span(c, b->path[0]->aid, q->job, &v->from_ns, &v->to_ns, err, sizeof err); /* keeps the window on error */
  /* A warehouse without the knowledge base (or an error) leaves the
   * judgement unknown; the peer comparison still stands. */
  v->have = o->score && o->score(c, v->aid, v->from_ns, v->to_ns + 1, &v->s, err, sizeof err) == 1;
}

int blame_baseline_vote(const struct siox_blame_baseline *v) {
  if (!v->have || !v->s.found) return -1;
  return v->s.percentile >= SIOX_BLAME_ABNORMAL_PCT;
}

void blame_baseline_text(FILE *f, const struct siox_act *x, const struct siox_blame_baseline *v) {
  char p50[32], p99[32];
  if (!v->have || !v->s.found) {
    fprintf(f, "Baseline: %s %s on %s has no baseline yet (%" PRId64 " sample%s, need %d).\n", x->swid, x->name,
            x->hwid, v->have ? v->s.base_n : 0, v->have && v->s.base_n == 1 ? "" : "s", SIOX_KB_MIN_BASELINE);
    return;
  }
  fprintf(f, "Baseline: at p%.1f of its own component's %" PRId64 " %s outside this run (median %s, p99 %s): %s.\n",
          v->s.percentile, v->s.base_n, x->name, siox_fmt_duration((int64_t)v->s.p50_ns, p50, sizeof p50),
          siox_fmt_duration((int64_t)v->s.p99_ns, p99, sizeof p99),
          v->s.percentile >= SIOX_BLAME_ABNORMAL_PCT ? "ABNORMAL for this component (something changed)"
                                                     : "NORMALLY this slow (the component is slow, not faulty)");
}

json_object *blame_baseline_json(const struct siox_blame_baseline *v) {
  json_object *o = json_object_new_object();
  siox_json_int(o, "aid", v->aid);
  siox_json_str(o, "judgement", judgement(v));
  siox_json_dbl(o, "abnormal_at_percentile", SIOX_BLAME_ABNORMAL_PCT);
  json_object_object_add(o, "percentile", v->have && v->s.found ? json_object_new_double(v->s.percentile) : NULL);
  siox_json_int(o, "samples", v->have ? v->s.base_n : 0);
  siox_json_int(o, "size_class", v->have ? v->s.size_class : -1);
  siox_json_dbl(o, "p50_s", v->s.p50_ns / 1e9);
  siox_json_dbl(o, "p90_s", v->s.p90_ns / 1e9);
  siox_json_dbl(o, "p99_s", v->s.p99_ns / 1e9);
  siox_json_dbl(o, "latency_s", (double)v->s.latency_ns / 1e9);
  siox_json_int(o, "excluded_from_ns", v->from_ns);
  siox_json_int(o, "excluded_to_ns", v->to_ns);
  return o;
}
