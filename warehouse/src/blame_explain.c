/*
 * Blame's verdict in sentences (siox_blame_explain): the headline by class,
 * the waiting step (blame_wait_report.c), the unlinked time, where the time
 * went, the evidence against the peers, the baseline and the rule. The CLI
 * prints it; the document carries it as "explanation".
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blame_doc.h"
#include "blame_wait_report.h"
#include "format.h"

static void explain_where(FILE *f, const struct siox_blame *b) {
  const struct siox_act *x = b->suspect, *r = b->path[0];
  char node[256], who[512], incl[32], excl[32], total[32];
  /* Just named in the line above: "It" reads better than the name again. */
  if (b->verdict == SIOX_VERDICT_CULPRIT)
    snprintf(who, sizeof(who), "It");
  else
    snprintf(who, sizeof(who), "%s (%s)", siox_fmt_node(x, node, sizeof(node)), x->name);
  fprintf(f, "%s held %s of the call's %s (%.0f%%), %s of it in itself (exclusive).\n", who,
          siox_fmt_duration(x->inclusive_ns, incl, sizeof(incl)), siox_fmt_duration(r->inclusive_ns, total, sizeof(total)),
          siox_blame_share(b, x), siox_fmt_duration(x->exclusive_ns, excl, sizeof(excl)));
}

static void explain_evidence(FILE *f, const struct siox_blame *b, long margin_s) {
  const struct siox_act *x = b->suspect;
  char v[64], med[64], p90[64], own[64], line[128], took[32], want[32];
  if (b->line)
    fprintf(f, "Its peers' latency line (fitted to their sizes and times) is %s: for its %" PRId64
               " B it took %s where the line gives %s.\n",
            blame_line_str(b, line, sizeof(line)), x->bytes, siox_fmt_duration(x->inclusive_ns, took, sizeof(took)),
            siox_fmt_duration((int64_t)(siox_blame_line_s(b, x->bytes) * 1e9), want, sizeof(want)));
  fprintf(f, "%s it took %s; its peers (%s %s on %zu other node%s, %zu sample%s in the job's window +/- %ld s) took "
             "a median of %s, p%.0f %s: %.1fx the median.\n",
          blame_measure_str(b), siox_blame_value_str(b, b->value, v, sizeof(v)), x->swid, x->name, b->npeers,
          b->npeers == 1 ? "" : "s", b->peer_samples, b->peer_samples == 1 ? "" : "s", margin_s,
          siox_blame_value_str(b, b->peer_median, med, sizeof(med)), b->rule.pct * 100, siox_blame_value_str(b, b->peer_p90, p90, sizeof(p90)),
          b->ratio);
  if (b->own_samples)
    fprintf(f, "Its node's %zu other sample%s in the window: median %s.\n", b->own_samples,
            b->own_samples == 1 ? "" : "s", siox_blame_value_str(b, b->own_median, own, sizeof(own)));
  if (b->peer_skipped)
    fprintf(f, "(%zu peer sample%s without a byte count were left out.)\n", b->peer_skipped,
            b->peer_skipped == 1 ? "" : "s");
}

/* "job B (62%), job C (20%)": the other jobs the call waited behind. */
static void other_jobs(FILE *f, const struct siox_wait *w) {
  const char *sep = "";
  for (size_t i = 0; i < w->nby; i++) {
    if (w->by[i].same_job) continue;
    bool seen = false;
    for (size_t k = 0; k < i && !seen; k++) seen = !w->by[k].same_job && strcmp(w->by[k].job, w->by[i].job) == 0;
    if (seen) continue;
    double share = 0;
    for (size_t k = i; k < w->nby; k++)
      if (strcmp(w->by[k].job, w->by[i].job) == 0) share += w->by[k].share;
    fprintf(f, "%sjob %s (%.0f%% of the wait)", sep, w->by[i].job[0] ? w->by[i].job : "(none)", 100 * share);
    sep = ", ";
  }
}

/* What the verdict lacked, for "No verdict". */
static void missing(FILE *f, const struct siox_blame *b, const struct siox_blame_wait *o,
                    const struct siox_unlinked *u) {
  char d[32];
  if (o->outweighed) {
    char node[512], t[32], c[32];
    fprintf(f, "No verdict: %s of the call's %s is covered by no linked component, more than twice the %s that "
               "%s (%s), the component it reached, accounts for (its service of the call and the time the call "
               "queued there), although its request was slow (%s, by %s). Naming it would blame it for time it "
               "did not take: the call's time is unexplained.\n",
            siox_fmt_duration(u->unlinked_ns, d, sizeof(d)), siox_fmt_duration(u->total_ns, t, sizeof(t)),
            siox_fmt_duration(o->w.own_ns + o->queue->queued_ns, c, sizeof(c)),
            siox_fmt_node(o->resource, node, sizeof(node)), o->resource->name, siox_class_name(o->named.cls),
            siox_evidence_name(o->named.by));
    return;
  }
  if (!o->resource) {
    fprintf(f, "No verdict: the call reached no shared resource SIOX records (no brick, device or server below "
               "it), so its %s are unexplained.\n",
            siox_fmt_duration(b->path[0]->inclusive_ns, d, sizeof(d)));
    return;
  }
  fprintf(f, "No verdict: no peers in the window (%zu comparable samples on other nodes, need %zu), ",
          o->peer_judged ? o->peer.peer_samples : b->peer_samples, b->rule.min_peers);
  if (o->resource)
    fprintf(f, "no latency model of its kind (history on %zu component%s, need %d)", o->kind.nodes,
            o->kind.nodes == 1 ? "" : "s", SIOX_KIND_MIN_NODES);
  else
    fprintf(f, "no shared resource reached to model");
  fprintf(f, " and no baseline of the component (need %d samples).\n", SIOX_KB_MIN_BASELINE);
}

/* What the component's other operations were judged against (the class's ops_ratio). */
static const char *ops_reference(const struct siox_blame_wait *o) {
  return o->ops_by_peers ? "its peers' median" : "its kind's model";
}

static void headline(FILE *f, const struct siox_blame *b, const struct siox_blame_wait *o,
                     const struct siox_unlinked *u) {
  const struct siox_act *x = o->resource ? o->resource : b->suspect, *c = siox_blame_culprit(b, o);
  char node[512], d[32];
  siox_fmt_node(x, node, sizeof(node));
  switch (o->v.cls) {
  case SIOX_CLASS_FAULT:
    fprintf(f, "Culprit: %s (%s), activity %" PRId64 ": fault (its service time is abnormal; decided by %s).\n",
            siox_fmt_node(c, node, sizeof(node)), c->name, c->aid, siox_evidence_name(o->v.by));
    break;
  case SIOX_CLASS_TRANSIENT:
    fprintf(f, "Transient: %s (%s), activity %" PRId64 ", was slow (decided by %s), but the component's %zu other "
               "operations around the call took a median of %.1fx %s: a lone outlier, not a fault.\n",
            node, x->name, x->aid, siox_evidence_name(o->v.by), o->ops, o->in.ops_ratio, ops_reference(o));
    break;
  case SIOX_CLASS_INTERFERENCE:
    fprintf(f, "Interference at %s: it served normally (decided by %s), but the call queued %s behind other jobs' "
               "requests: ",
            node, siox_evidence_name(o->v.by), siox_fmt_duration(o->queue->queued_ns, d, sizeof(d)));
    other_jobs(f, o->queue);
    fprintf(f, ". No component is faulty.\n");
    break;
  case SIOX_CLASS_SELF:
    fprintf(f, "Self-inflicted: the call queued %s at %s behind its own job's requests while it served normally "
               "(decided by %s). Spread the job's files over more servers or make fewer, larger requests; see "
               "`siox hints` and `siox anomalies` for the knowledge base's findings.\n",
            siox_fmt_duration(o->queue->queued_same_job_ns, d, sizeof(d)), node, siox_evidence_name(o->v.by));
    break;
  case SIOX_CLASS_NORMAL:
    if (o->outweighed) {
      char t[32];
      fprintf(f, "Nothing stands out in the components it reached: %s (%s), activity %" PRId64 ", was slow (decided "
                 "by %s), but its %zu other operations around the call took a median of %.1fx %s, "
                 "and %s of the call's %s is covered by no linked component (below): a lone outlier under time "
                 "SIOX does not trace, not a fault.\n",
              node, x->name, x->aid, siox_evidence_name(o->v.by), o->ops, o->in.ops_ratio, ops_reference(o),
              siox_fmt_duration(u->unlinked_ns, d, sizeof(d)), siox_fmt_duration(u->total_ns, t, sizeof(t)));
      break;
    }
    fprintf(f, "Nothing stands out: the time went where it usually goes (decided by %s).\n",
            siox_evidence_name(o->v.by));
    break;
  case SIOX_CLASS_NONE:
    missing(f, b, o, u);
    break;
  }
}

/* The time no linked component covers (blame_unlinked.h), when it is a
 * tenth of the call or more, or the call reached no component at all. */
static void explain_unlinked(FILE *f, const struct siox_unlinked *u, const struct siox_blame_wait *o) {
  if (u->unlinked_ns <= 0 || (o->resource && 10 * u->unlinked_ns < u->total_ns)) return;
  char d[32], t[32], a[32], z[32];
  const struct siox_interval *l = siox_unlinked_longest(u);
  fprintf(f, "Unlinked: %s of the call's %s (%.0f%%) covered by no activity of a component linked to it, in %zu "
             "stretch%s, the longest from +%s to +%s after the call started. Links cannot say where that time went: "
             "the call's own layers, the kernel, or requests no component linked to it (a lookup of a name that "
             "does not exist yet carries no file id; such requests show above as served for processes without a "
             "job). What the waiting analysis above does not account for is unexplained.\n",
          siox_fmt_duration(u->unlinked_ns, d, sizeof(d)), siox_fmt_duration(u->total_ns, t, sizeof(t)),
          100.0 * (double)u->unlinked_ns / (double)u->total_ns, u->ngaps, u->ngaps == 1 ? "" : "es",
          siox_fmt_duration(l->start - u->start_ns, a, sizeof(a)), siox_fmt_duration(l->end - u->start_ns, z, sizeof(z)));
}

char *siox_blame_explain(const struct siox_blame_call *k, long margin_s) {
  const struct siox_blame *b = &k->b;
  const struct siox_blame_wait *o = &k->w;
  const struct siox_blame_baseline *v = &k->v;
  const struct siox_unlinked *u = &k->u;
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&s, &len);
  if (!f) return NULL;
  const struct siox_act *x = b->suspect;
  headline(f, b, o, u);
  siox_blame_wait_text(f, o, b->path[0]);
  explain_unlinked(f, u, o);
  explain_where(f, b);
  if (b->verdict != SIOX_VERDICT_NO_PEERS) explain_evidence(f, b, margin_s);
  if (b->verdict == SIOX_VERDICT_NORMAL)
    fprintf(f, "Against its peers that is below the rule's %.1fx (or within the peers' p%.0f).\n", b->rule.ratio,
            b->rule.pct * 100);
  if (b->verdict == SIOX_VERDICT_NO_PEERS)
    fprintf(f, "Peers: only %zu comparable sample%s of %s %s on other nodes in the window +/- %ld s (need %zu).\n",
            b->peer_samples, b->peer_samples == 1 ? "" : "s", x->swid, x->name, margin_s, b->rule.min_peers);
  blame_baseline_text(f, o->resource ? o->resource : x, v);
  fprintf(f, "Rule: named when its time%s is >= %.1fx the peers' median and above their p%.0f, with >= %zu peer "
             "samples; without peers, >= %.1fx its kind's latency model, else at or above p%.0f of its own baseline; "
             "a fault only when the component's other operations around the call are slow too.\n",
          b->line ? " over the peers' latency line for its size" : b->per_byte ? " per byte" : "", b->rule.ratio,
          b->rule.pct * 100, b->rule.min_peers, b->rule.ratio, SIOX_BLAME_ABNORMAL_PCT);
  fclose(f);
  return s;
}
