/*
 * Blame's waiting step (blame_wait.h): the resource, what it served around
 * the call, the kind's model and the peers of the resource's request.
 */
#include "blame_wait.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below an implicit link: another process's work (a component), not the
 * caller waiting for it. */
static bool remote_on_path(const struct siox_blame *b, size_t i) {
  for (size_t k = 1; k <= i && k < b->npath; k++)
    if (b->path[k]->link == SIOX_LINK_IMPLICIT) return true;
  return false;
}

static const struct siox_act *pick_resource(const struct siox_blame *b) {
  if (b->verdict == SIOX_VERDICT_CULPRIT && b->suspect_idx >= b->npath) return b->suspect; /* a candidate */
  if (b->verdict == SIOX_VERDICT_CULPRIT && remote_on_path(b, b->suspect_idx)) return b->suspect;
  for (size_t i = b->npath; i-- > 1;)
    if (remote_on_path(b, i)) return b->path[i];
  const struct siox_act *best = NULL;
  for (size_t i = 0; i < b->ncands; i++)
    if (!best || b->cands[i]->inclusive_ns > best->inclusive_ns) best = b->cands[i];
  return best;
}

/* The heaviest child of x on another node (the component x waits for). */
static const struct siox_act *deeper(const struct siox_act *x) {
  const struct siox_act *best = NULL;
  for (size_t i = 0; i < x->nchildren; i++)
    if (x->children[i]->node_id != x->node_id && (!best || x->children[i]->inclusive_ns > best->inclusive_ns))
      best = x->children[i];
  return best;
}

/* Share of x's interval during which the served set's node was serving
 * anything (x's own requests or others'). */
static double busy_share(const struct siox_act *x, const struct siox_served_set *set) {
  struct siox_wait w;
  struct siox_served *s = malloc((set->n + 1) * sizeof(*s));
  if (!s) return 0;
  for (size_t i = 0; i < set->n; i++) {
    s[i] = set->s[i];
    s[i].own = false;
  }
  double share = 0;
  if (siox_wait_analyze(x->start_ns, x->end_ns, "", s, set->n, &w) == 0 && w.total_ns > 0)
    share = (double)w.queued_ns / (double)w.total_ns;
  siox_wait_release(&w);
  free(s);
  return share;
}

/* Whether x's own request stands out against the other components of its
 * kind in the window (a culprit's verdict by its peers). */
static int stands_out(const struct siox_blame *b, const struct siox_act *x, siox_blame_fetch_fn fetch, void *ctx,
                      bool *out) {
  struct siox_blame t;
  int rc = siox_blame_judge_act(b, x, fetch, ctx, &t);
  *out = rc == 0 && t.verdict == SIOX_VERDICT_CULPRIT;
  free(t.peers);
  return rc;
}

/* A client subvolume whose time went to waiting for its brick is charged
 * through to the brick: descend while the component below was busy
 * (serving this request, its sibling pieces or others) for >= half of the
 * component's time, or while the call's own request below stands out
 * against its peers. The second: a subvolume queued behind the job's
 * other requests to one slow brick is slow because of that brick, even
 * when the brick sat idle between them (the requests then wait in the
 * client or the connection); judged against the other subvolumes, it
 * looked faulty itself (integration_sys_blame, once under ASan). A slow
 * connection to a healthy brick still stops at the subvolume. Leaves the
 * chosen resource in o->resource and what it served in o->served. */
static int descend(PGconn *c, const struct siox_blame *b, siox_blame_fetch_fn fetch, void *ctx,
                   struct siox_blame_wait *o, char *err, size_t errlen) {
  const struct siox_act *r = b->path[0], *y;
  int64_t from = r->start_ns - SIOX_AROUND_NS, to = r->end_ns + SIOX_AROUND_NS;
  int rc = siox_wh_served(c, o->resource->node_id, from, to, r->start_ns, r->end_ns, &o->served, err, errlen);
  while (rc == 0 && (y = deeper(o->resource)) != NULL) {
    struct siox_served_set below = {0};
    bool slow = false;
    if ((rc = siox_wh_served(c, y->node_id, from, to, r->start_ns, r->end_ns, &below, err, errlen)) != 0) break;
    if (busy_share(o->resource, &below) < 0.5 && ((rc = stands_out(b, y, fetch, ctx, &slow)) != 0 || !slow)) {
      siox_wh_served_free(&below);
      break;
    }
    siox_wh_served_free(&o->served);
    o->served = below;
    o->resource = y;
  }
  return rc;
}

/* The call's own activities at node: the aids of the tree below a. */
static void own_aids(const struct siox_act *a, int32_t node, int64_t *out, size_t *n) {
  if (a->node_id == node) out[(*n)++] = a->aid;
  for (size_t i = 0; i < a->nchildren; i++) own_aids(a->children[i], node, out, n);
}

static size_t tree_count(const struct siox_act *a) {
  size_t n = 1;
  for (size_t i = 0; i < a->nchildren; i++) n += tree_count(a->children[i]);
  return n;
}

static int mark_own(struct siox_served_set *set, const struct siox_act *root, int32_t node) {
  int64_t *aids = malloc(tree_count(root) * sizeof(*aids));
  size_t n = 0;
  if (!aids) return -ENOMEM;
  own_aids(root, node, aids, &n);
  for (size_t i = 0; i < set->n; i++)
    for (size_t k = 0; k < n && !set->s[i].own; k++) set->s[i].own = set->s[i].aid == aids[k];
  free(aids);
  return 0;
}

/* Exact queue windows at node (waiting.h queue_from_ns): an own request
 * there whose parent in the call's tree is a remote component on another
 * node (the client fop over a brick fop) joined the resource's queue when
 * that parent wound it: [parent start, own start) is its time in the
 * connection and the brick's queue, from recorded intervals alone. */
static void set_windows(const struct siox_act *a, int32_t node, struct siox_served_set *set) {
  for (size_t i = 0; i < a->nchildren; i++) {
    const struct siox_act *ch = a->children[i];
    if (ch->node_id == node && a->node_id != node && a->link == SIOX_LINK_IMPLICIT)
      for (size_t k = 0; k < set->n; k++)
        if (set->s[k].aid == ch->aid) {
          set->s[k].queue_from_ns = a->start_ns;
          set->s[k].queue_node = a->node_id;
        }
    set_windows(ch, node, set);
  }
}

int64_t siox_blame_connection_windows(const struct siox_act *a, int32_t node, struct siox_served_set *set) {
  int64_t moved = 0;
  const struct siox_act *y = a->node_id == node ? deeper(a) : NULL;
  if (y && y->start_ns > a->start_ns && y->start_ns < a->end_ns)
    for (size_t k = 0; k < set->n; k++) {
      struct siox_served *s = &set->s[k];
      if (!s->own || s->aid != a->aid || y->start_ns <= s->start_ns) continue;
      moved += y->start_ns - s->start_ns;
      s->start_ns = y->start_ns;
    }
  for (size_t i = 0; i < a->nchildren; i++) moved += siox_blame_connection_windows(a->children[i], node, set);
  return moved;
}

/* Marks the call's own activities in a set spanning several nodes. */
static void mark_tree(const struct siox_act *a, struct siox_served_set *set) {
  for (size_t k = 0; k < set->n; k++)
    if (set->s[k].aid == a->aid) set->s[k].own = true;
  for (size_t i = 0; i < a->nchildren; i++) mark_tree(a->children[i], set);
}

/* The FUSE channel's windows: an own client fop directly below one of the
 * application's calls (an implicit link from a local layer) waited in the
 * kernel and the FUSE channel from that call's start to its arrival in the
 * client process. */
static void local_windows(const struct siox_act *a, struct siox_served_set *set) {
  for (size_t i = 0; i < a->nchildren; i++) {
    const struct siox_act *ch = a->children[i];
    if (ch->link != SIOX_LINK_IMPLICIT) {
      local_windows(ch, set);
      continue;
    }
    for (size_t k = 0; k < set->n; k++)
      if (set->s[k].aid == ch->aid) {
        set->s[k].queue_from_ns = a->start_ns;
        set->s[k].queue_node = a->node_id;
      }
  }
}

/* The reply windows (waiting.h reply_from_ns): an own client fop whose
 * brick fops had all ended before it unwound waited that long for the
 * client process to take the reply up, while the process worked on
 * others' fops (scenario (f) on a loaded machine: a 4 KiB write served by
 * the brick in 59 us held its client fop 11.7 ms after that). */
static void reply_windows(const struct siox_act *a, struct siox_served_set *set) {
  int64_t below = 0;
  for (size_t i = 0; i < a->nchildren; i++) {
    const struct siox_act *ch = a->children[i];
    if (ch->node_id != a->node_id && ch->link == SIOX_LINK_IMPLICIT && ch->end_ns > below) below = ch->end_ns;
    reply_windows(ch, set);
  }
  if (below > 0 && below < a->end_ns)
    for (size_t k = 0; k < set->n; k++)
      if (set->s[k].own && set->s[k].aid == a->aid) set->s[k].reply_from_ns = below;
}

/* Every fop of the channel is in it from its arrival in the client process
 * (start - glusterfs/queued_ns; its start when not recorded) to its
 * unwind. */
static void channel_windows(const struct siox_act *root, struct siox_served_set *set) {
  for (size_t k = 0; k < set->n; k++) set->s[k].start_ns -= set->s[k].queued_ns;
  mark_tree(root, set);
  local_windows(root, set);
  reply_windows(root, set);
}

/* Exact mode (the resource's own requests have queue windows): the call's
 * waiting is the sum of the two queues in tandem on its path, each over
 * its own windows: the FUSE channel of the client process (call start to
 * arrival) and the connection with the brick (client wind to brick wind).
 * u is the call's client fop above the resource. */
static int tandem(PGconn *c, const struct siox_act *r, const struct siox_act *u, struct siox_blame_wait *o,
                  char *err, size_t errlen) {
  int rc = siox_wh_served_proc(c, u->node_id, u->proc_id, r->start_ns - SIOX_AROUND_NS, r->end_ns + SIOX_AROUND_NS,
                               r->start_ns, r->end_ns, &o->chan_served, err, errlen);
  if (rc != 0) return rc;
  channel_windows(r, &o->chan_served);
  rc = siox_wait_analyze(r->start_ns, r->end_ns, r->job, o->chan_served.s, o->chan_served.n, &o->chan_w);
  if (rc == 0) rc = siox_wait_merge(&o->w, &o->chan_w, &o->tandem);
  if (rc != 0) return rc;
  o->chan_at = u;
  o->queue = &o->tandem;
  o->queue_at = o->resource;
  o->unexplained_ns = o->tandem.unexplained_ns;
  return 0;
}

/* The call's request one queue up: the nearest remote activity above the
 * resource on blame's path, on another node (a client subvolume). */
static const struct siox_act *upper_level(const struct siox_blame *b, const struct siox_act *x) {
  size_t i = 0;
  while (i < b->npath && b->path[i] != x) i++;
  for (size_t k = i; k-- > 1;)
    if (remote_on_path(b, k) && b->path[k]->node_id != x->node_id) return b->path[k];
  return NULL;
}

/* The queue the call waited in: the resource's, or the one above it when
 * that explains more of the call's time (a FUSE client's connection to a
 * brick, busy with another job's large writes, while the brick itself
 * serves each quickly). */
static int choose_queue(PGconn *c, const struct siox_blame *b, struct siox_blame_wait *o, char *err,
                        size_t errlen) {
  const struct siox_act *r = b->path[0], *u = upper_level(b, o->resource);
  o->queue = &o->w;
  o->queue_at = o->resource;
  int rc = 0;
  if (u) {
    rc = siox_wh_served(c, u->node_id, r->start_ns - SIOX_AROUND_NS, r->end_ns + SIOX_AROUND_NS, r->start_ns,
                        r->end_ns, &o->upper_served, err, errlen);
    if (rc == 0) rc = mark_own(&o->upper_served, r, u->node_id);
    if (rc == 0)
      rc = siox_wait_analyze(r->start_ns, r->end_ns, r->job, o->upper_served.s, o->upper_served.n, &o->upper_w);
    if (rc == 0 && o->upper_w.queued_ns > o->w.queued_ns) {
      o->queue = &o->upper_w;
      o->queue_at = o->upper = u;
    }
  }
  o->unexplained_ns = o->w.gap_ns - o->queue->queued_ns;
  if (o->unexplained_ns < 0) o->unexplained_ns = 0;
  return rc;
}

/* The component's operations of the resource's kind around the call (not
 * the call's own), against the kind's model. */
static int judge_ops(struct siox_blame_wait *o) {
  size_t n = o->served.n;
  struct siox_kind_sample *ops = malloc((n + 1) * sizeof(*ops));
  double *ns = malloc((n + 1) * sizeof(*ns)), *sh = malloc((n + 1) * sizeof(*sh));
  double *pb = malloc((n + 1) * sizeof(*pb));
  int64_t *shared = malloc((n + 1) * sizeof(*shared));
  int rc = ops && ns && sh && pb && shared ? siox_served_shared_ns(o->served.s, n, shared) : -ENOMEM;
  o->ops_share = 1;
  for (size_t i = 0; i < n && rc == 0; i++) {
    const struct siox_served *s = &o->served.s[i];
    if (s->own) {
      if (strcmp(o->served.names[i], o->resource->name) == 0 && s->bytes > 0) o->own_bytes += s->bytes;
      continue;
    }
    if (strcmp(o->served.names[i], o->resource->name) != 0) continue;
    ns[o->ops] = (double)(s->end_ns - s->start_ns);
    sh[o->ops] = (double)shared[i];
    if (s->bytes > 0) pb[o->ops_sized++] = ns[o->ops] / 1e9 / (double)s->bytes;
    ops[o->ops++] = (struct siox_kind_sample){.node_id = o->resource->node_id, .ns = s->end_ns - s->start_ns,
                                              .bytes = s->bytes};
  }
  if (rc == 0) {
    o->ops_ratio = siox_kind_model_median_ratio(&o->kind, ops, o->ops);
    o->ops_median_ns = o->ops ? (int64_t)siox_median(ns, o->ops) : 0;
    double raw = o->ops ? siox_median(ns, o->ops) : 0;
    if (raw > 0) o->ops_share = siox_median(sh, o->ops) / raw;
    o->ops_s_per_byte = o->ops_sized ? siox_median(pb, o->ops_sized) : 0;
  }
  free(ops);
  free(ns);
  free(sh);
  free(pb);
  free(shared);
  return rc;
}

/* The kind's model for the call: the kept one (schema 024, fitted by the
 * analysis thread on the kind's history up to the minute boundary before
 * the call), else fitted here on the history up to the call's start. */
static int kind_model(PGconn *c, const struct siox_blame *b, const struct siox_act *x, struct siox_blame_wait *o,
                      char *err, size_t errlen) {
  int64_t start = b->path[0]->start_ns;
  int rc = b->rule.refit_kind ? 0
                              : siox_wh_kind_model(c, x->swid, x->name, start, SIOX_KIND_MODEL_MAX_LAG_NS, &o->kind,
                                                   &o->kind_to_ns, err, errlen);
  if (rc != 0) return rc < 0 ? rc : 0;
  o->kind_to_ns = start;
  o->kind_refit = true;
  return siox_wh_kind_model_fit_at(c, x->swid, x->name, start, &o->kind, err, errlen);
}

static int peer_judgement(const struct siox_blame_wait *o, const struct siox_blame *b) {
  const struct siox_blame *p = o->resource == b->suspect ? b : o->peer_judged ? &o->peer : NULL;
  if (!p || p->verdict == SIOX_VERDICT_NO_PEERS) return -1;
  return p->verdict == SIOX_VERDICT_CULPRIT;
}

/* The component's other operations around the call against the same
 * reference that judged the call: when peers in the window judged it, its
 * node's other samples over the peers' median, else its operations around
 * the call (the ones the class counts, o->ops) per byte over that median.
 * Not the kind's model: it is learned from history and may hold earlier
 * faults of every component of a small kind; with two components, one of
 * them slow, it sits between them, and the slow one's operations, all as
 * slow as the call, looked normal (a fault called a transient).
 * 0 when the peers give no such figure. */
static double peer_ops_ratio(const struct siox_blame_wait *o, const struct siox_blame *b) {
  const struct siox_blame *p = o->resource == b->suspect ? b : o->peer_judged ? &o->peer : NULL;
  if (!p || p->verdict == SIOX_VERDICT_NO_PEERS || p->peer_median <= 0) return 0;
  if (p->own_samples >= SIOX_CLASS_MIN_OPS) return p->own_median / p->peer_median;
  if (o->ops_sized >= SIOX_CLASS_MIN_OPS) return o->ops_s_per_byte / p->peer_median;
  return 0;
}

int siox_blame_wait_run(PGconn *c, const struct siox_blame *b, siox_blame_fetch_fn fetch, void *ctx,
                        struct siox_blame_wait *o, char *err, size_t errlen) {
  const struct siox_act *r = b->path[0];
  memset(o, 0, sizeof(*o));
  o->in = (struct siox_class_input){.peers = -1, .kind = -1, .baseline = -1, .ratio = b->rule.ratio,
                                    .wait_share = 0.5};
  /* No shared resource below the call (an open whose lookups are not
   * linked to it): its time is unexplained, and the application's own
   * layers are no component to call faulty (siox_blame_wait_classify). */
  if (!(o->resource = pick_resource(b))) return 0;
  int rc = descend(c, b, fetch, ctx, o, err, errlen);
  const struct siox_act *x = o->resource;
  if (rc == 0) rc = mark_own(&o->served, r, x->node_id);
  if (rc == 0) set_windows(r, x->node_id, &o->served);
  /* A client subvolume the descent stopped at (its brick mostly idle):
   * the call's request was in the connection until the brick took it. */
  if (rc == 0 && deeper(x)) o->in_connection_ns = siox_blame_connection_windows(r, x->node_id, &o->served);
  if (rc == 0) rc = siox_wait_analyze(r->start_ns, r->end_ns, r->job, o->served.s, o->served.n, &o->w);
  if (rc == 0) rc = choose_queue(c, b, o, err, errlen);
  const struct siox_act *u = upper_level(b, x);
  if (rc == 0 && o->w.exact && u && u->proc_id) rc = tandem(c, r, u, o, err, errlen);
  if (rc == 0) rc = kind_model(c, b, x, o, err, errlen);
  if (rc == 0) rc = judge_ops(o);
  if (rc == 0 && x != b->suspect) {
    rc = siox_blame_judge_act(b, x, fetch, ctx, &o->peer);
    o->peer_judged = rc == 0;
  }
  if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
  if (rc != 0) return rc;
  if (o->kind.have) {
    o->own_expected_s = siox_kind_model_expect_s(&o->kind, x->bytes);
    o->own_ratio = o->own_expected_s > 0 ? (double)x->inclusive_ns / 1e9 / o->own_expected_s : 0;
    o->in.kind = o->own_expected_s > 0 ? o->own_ratio >= b->rule.ratio : -1;
  }
  o->in.peers = peer_judgement(o, b);
  double by_peers = peer_ops_ratio(o, b);
  o->in.ops_ratio = by_peers > 0 ? by_peers : o->ops_ratio;
  o->ops_by_peers = by_peers > 0;
  /* The same figure per request, with concurrent service shared out. */
  o->in.ops_shared_ratio = o->in.ops_ratio * o->ops_share;
  o->in.ops = o->ops;
  o->in.wait = o->queue;
  return 0;
}

void siox_blame_wait_classify(struct siox_blame_wait *o, int baseline) {
  o->in.baseline = baseline;
  o->v = o->resource ? siox_classify(&o->in) : (struct siox_class_verdict){.cls = SIOX_CLASS_NONE};
}

void siox_blame_wait_unlinked(struct siox_blame_wait *o, const struct siox_unlinked *u, int64_t collective_ns) {
  if (!o->resource || (o->v.cls != SIOX_CLASS_FAULT && o->v.cls != SIOX_CLASS_TRANSIENT)) return;
  o->collective_wait_ns = collective_ns;
  /* The larger of the two, as they may overlap: the queue's figure
   * inferred over the gap (no exact windows) counts unlinked instants too. */
  int64_t queued = o->queue->queued_ns > collective_ns ? o->queue->queued_ns : collective_ns;
  /* Time in the connection is the component's, queued or not (a slow link
   * to a brick with nothing else on it): never charge less than before it
   * left own service (its queued part counts twice; this only compares). */
  if (!siox_unlinked_outweighs(u, o->w.own_ns + o->in_connection_ns + queued)) return;
  o->outweighed = true;
  o->named = o->v;
  /* A transient already says the component is sound (its operations
   * around the call were normal): with the slow request withdrawn too,
   * nothing it reached stands out, and the unlinked time is reported as
   * unexplained. A fault withdrawn leaves no verdict: the component is
   * abnormal, but the call's time is not its. */
  if (o->named.cls == SIOX_CLASS_TRANSIENT)
    o->v = (struct siox_class_verdict){.cls = SIOX_CLASS_NORMAL, .by = o->named.by};
  else
    o->v = (struct siox_class_verdict){.cls = SIOX_CLASS_NONE, .by = SIOX_EVIDENCE_NONE};
}

void siox_blame_wait_release(struct siox_blame_wait *o) {
  siox_wh_served_free(&o->served);
  siox_wait_release(&o->w);
  siox_wait_release(&o->upper_w);
  siox_wh_served_free(&o->upper_served);
  siox_wait_release(&o->chan_w);
  siox_wait_release(&o->tandem);
  siox_wh_served_free(&o->chan_served);
  free(o->peer.peers);
  o->peer.peers = NULL;
}
