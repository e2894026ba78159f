/*
 * The document `siox graph AID --json` prints and siox web's /api/graph
 * serves (documents.h): the causal tree with inclusive and exclusive times
 * and each link's kind and confidence, blame's walk marked as the critical
 * path (so the picture and blame agree), and how complete the trace is (a
 * graph of a trace that lost activities may miss children).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "blame.h"
#include "documents.h"
#include "json_build.h"

int siox_wh_graph_completeness(PGconn *c, const struct siox_act *root, struct siox_wh_loss *lp,
                               struct siox_wh_loss *lj) {
  char err[512];
  if (root->proc_id <= 0 || siox_wh_loss(c, NULL, root->proc_id, lp, err, sizeof err) != 0) return 0;
  if (!root->job || !*root->job || siox_wh_loss(c, root->job, 0, lj, err, sizeof err) != 0) return 1;
  return 2;
}

static json_object *completeness_json(int n, const struct siox_wh_loss *lp, const struct siox_wh_loss *lj) {
  json_object *o = json_object_new_object();
  if (n >= 1) json_object_object_add(o, "process", siox_wh_loss_json(lp));
  if (n >= 2) json_object_object_add(o, "job", siox_wh_loss_json(lj));
  return o;
}

int siox_wh_graph_document(PGconn *c, int64_t aid, int depth, json_object **out, char *err, size_t errlen) {
  struct siox_tree *t = NULL;
  struct siox_wh_loss lp, lj;
  *out = NULL;
  err[0] = '\0';
  int rc = siox_wh_load_tree(c, aid, depth, &t, err, errlen);
  if (rc == -ENOENT)
    snprintf(err, errlen, "activity %lld is not in the warehouse (see `siox top` for ids)", (long long)aid);
  else if (rc && !err[0])
    snprintf(err, errlen, "%s", strerror(-rc));
  if (rc) return rc;
  int have = siox_wh_graph_completeness(c, t->root, &lp, &lj);
  struct siox_blame b;
  if (siox_blame_walk(t, &SIOX_BLAME_RULE_DEFAULT, &b) == 0) siox_tree_mark(t, b.path, b.npath, NULL);
  siox_blame_release(&b);
  *out = siox_json_act(t->root, t->root, true);
  if (*out) json_object_object_add(*out, "trace_completeness", completeness_json(have, &lp, &lj));
  siox_tree_destroy(t);
  if (*out) return 0;
  snprintf(err, errlen, "out of memory");
  return -ENOMEM;
}
