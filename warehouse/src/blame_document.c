/*
 * The document `siox blame AID --json` prints and `siox web` serves
 * (siox_blame_document): verdict, culprit, suspect, the waiting step's
 * fields (blame_wait_report.c), unlinked time, path, peers, evidence, rule,
 * baseline, explanation and the collective the call waited in. Key order
 * and number formats are the document's contract: front ends compare it
 * byte for byte (bench/bench_blame_latency.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "blame_doc.h"
#include "blame_wait_report.h"
#include "json_build.h"

static json_object *culprit_json(const struct siox_blame *b, const struct siox_act *x) {
  json_object *o = siox_json_act_id(x);
  if (!o) return NULL;
  siox_json_str(o, "host", x->host);
  siox_json_dbl(o, "inclusive_s", (double)x->inclusive_ns / 1e9);
  siox_json_dbl(o, "exclusive_s", (double)x->exclusive_ns / 1e9);
  siox_json_dbl(o, "share", siox_blame_share(b, x) / 100);
  json_object_object_add(o, "bytes", x->bytes >= 0 ? json_object_new_int64(x->bytes) : NULL);
  return o;
}

static json_object *evidence_json(const struct siox_blame *b, const struct siox_peer_query *q, long margin_s) {
  json_object *o = json_object_new_object();
  siox_json_str(o, "metric", b->line       ? "inclusive seconds over the peers' latency line for the size"
                             : b->per_byte ? "inclusive seconds per byte"
                                           : "inclusive seconds");
  siox_json_str(o, "unit", b->line ? "x" : b->per_byte ? "s/B" : "s");
  if (b->line) {
    json_object *l = json_object_new_object();
    siox_json_dbl(l, "a_s", b->line_a_s);
    siox_json_dbl(l, "b_s_per_byte", b->line_b_s);
    json_object_object_add(o, "line", l);
  }
  siox_json_dbl(o, "value", b->value);
  siox_json_dbl(o, "peer_median", b->peer_median);
  siox_json_dbl(o, "peer_p90", b->peer_p90);
  siox_json_dbl(o, "ratio", b->ratio);
  siox_json_int(o, "peer_samples", (int64_t)b->peer_samples);
  siox_json_int(o, "peer_nodes", (int64_t)b->npeers);
  siox_json_int(o, "peer_skipped", (int64_t)b->peer_skipped);
  siox_json_int(o, "own_samples", (int64_t)b->own_samples);
  siox_json_dbl(o, "own_median", b->own_median);
  siox_json_str(o, "job", q->job);
  siox_json_int(o, "window_from_ns", q->from_ns);
  siox_json_int(o, "window_to_ns", q->to_ns);
  siox_json_int(o, "margin_s", margin_s);
  return o;
}

static json_object *rule_json(const struct siox_blame *b) {
  json_object *o = json_object_new_object();
  siox_json_dbl(o, "ratio", b->rule.ratio);
  siox_json_dbl(o, "percentile", b->rule.pct);
  siox_json_int(o, "min_peers", (int64_t)b->rule.min_peers);
  siox_json_dbl(o, "path_share", b->rule.share);
  return o;
}

/* "unlinked": the time no linked component covers, with its stretches
 * (seconds after the call's start, and absolute ns). */
static json_object *unlinked_json(const struct siox_unlinked *u) {
  json_object *j = json_object_new_object(), *arr = json_object_new_array();
  siox_json_dbl(j, "unlinked_s", (double)u->unlinked_ns / 1e9);
  siox_json_dbl(j, "share", u->total_ns > 0 ? (double)u->unlinked_ns / (double)u->total_ns : 0);
  siox_json_int(j, "linked_activities", (int64_t)u->linked);
  for (size_t i = 0; i < u->ngaps; i++) {
    json_object *g = json_object_new_object();
    siox_json_dbl(g, "from_s", (double)(u->gaps[i].start - u->start_ns) / 1e9);
    siox_json_dbl(g, "to_s", (double)(u->gaps[i].end - u->start_ns) / 1e9);
    siox_json_int(g, "start_ns", u->gaps[i].start);
    siox_json_int(g, "end_ns", u->gaps[i].end);
    json_object_array_add(arr, g);
  }
  json_object_object_add(j, "stretches", arr);
  return j;
}

static json_object *via_json(const struct siox_blame_via *x) {
  if (!x->used) return NULL;
  json_object *o = json_object_new_object();
  siox_json_int(o, "aid", x->root_aid);
  siox_json_str(o, "name", x->root_name);
  siox_json_dbl(o, "inclusive_s", (double)x->root_ns / 1e9);
  siox_json_int(o, "collective_aid", x->coll_aid);
  siox_json_str(o, "collective_name", x->coll_name);
  siox_json_int(o, "sibling_aid", x->sibling_aid);
  siox_json_int(o, "sibling_pid", x->sibling_pid);
  siox_json_str(o, "rule", "the call's collective reached no shared resource; followed the sibling call of the same "
                           "job overlapping it longest that made I/O itself");
  return o;
}

json_object *siox_blame_call_json(const struct siox_blame_call *k, long margin_s, const char *prose) {
  const struct siox_blame *b = &k->b;
  const struct siox_blame_wait *w = &k->w;
  static const char *const verdicts[] = {"culprit", "normal", "no-peers"};
  json_object *o = json_object_new_object(), *path = json_object_new_array(), *peers = json_object_new_array();
  siox_json_int(o, "aid", b->path[0]->aid);
  siox_json_str(o, "verdict", verdicts[b->verdict]);
  const struct siox_act *c = siox_blame_culprit(b, w);
  json_object_object_add(o, "culprit", c ? culprit_json(b, c) : NULL);
  json_object_object_add(o, "suspect", culprit_json(b, b->suspect));
  siox_blame_wait_json(o, w);
  json_object_object_add(o, "unlinked", unlinked_json(&k->u));
  for (size_t i = 0; i < b->npath; i++) {
    json_object *a = siox_json_act(b->path[i], b->path[0], false);
    siox_json_dbl(a, "share", siox_blame_share(b, b->path[i]) / 100);
    json_object_array_add(path, a);
  }
  json_object_object_add(o, "path", path);
  siox_json_int(o, "suspect_index", (int64_t)b->suspect_idx);
  for (size_t i = 0; i < b->npeers; i++) {
    json_object *p = json_object_new_object();
    siox_json_str(p, "hwid", b->peers[i].hwid);
    siox_json_str(p, "iid", b->peers[i].iid);
    siox_json_int(p, "samples", (int64_t)b->peers[i].n);
    siox_json_dbl(p, "median", b->peers[i].median);
    json_object_array_add(peers, p);
  }
  json_object_object_add(o, "peers", peers);
  json_object_object_add(o, "evidence", evidence_json(b, &k->f.q, margin_s));
  json_object_object_add(o, "rule", rule_json(b));
  json_object_object_add(o, "baseline", blame_baseline_json(&k->v));
  siox_json_str(o, "explanation", prose);
  /* "waited_in_collective": the call asked about, when blame followed a
   * sibling (null otherwise); everything else describes the sibling. */
  json_object_object_add(o, "waited_in_collective", via_json(&k->via));
  return o;
}

int siox_blame_document(PGconn *c, int64_t aid, const struct siox_blame_opts *o, json_object **out, char *err,
                        size_t errlen) {
  struct siox_blame_call k;
  char *prose = NULL;
  *out = NULL;
  int rc = siox_blame_call_run(c, o, aid, &k, err, errlen);
  if (!rc && !(prose = siox_blame_explain(&k, o->margin_s))) rc = -ENOMEM;
  if (!rc && !(*out = siox_blame_call_json(&k, o->margin_s, prose))) rc = -ENOMEM;
  if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
  free(prose);
  siox_blame_call_release(&k);
  return rc;
}
