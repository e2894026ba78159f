/*
 * The documents `siox graph AID --json` and `siox top --json` print, built
 * here so that every front end (the CLI, `siox web`'s /api/graph and
 * /api/top) answers with the same bytes from one place, as blame's
 * (siox_blame_doc.h). The caller owns the connection and the document
 * (json_object_put); functions return 0 or a negative errno with a one-line
 * message in err.
 */
#ifndef SIOX_WH_DOCUMENTS_H
#define SIOX_WH_DOCUMENTS_H

#include <json-c/json.h>
#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "warehouse.h"

/* How many levels of links `siox graph` follows unless told (--depth). */
#define SIOX_WH_GRAPH_DEPTH 32

/* The causal tree of aid down to depth levels (siox_wh_load_tree) as nested
 * objects (siox_json_act), blame's walk marked as the critical path, with
 * "trace_completeness": how complete the trace of the root's process and
 * job is. 0, -ENOENT (no such activity, or not this role's: err names it),
 * -EIO, -ENOMEM. */
int siox_wh_graph_document(PGconn *c, int64_t aid, int depth, json_object **out, char *err, size_t errlen);

/* How complete the trace of root's process (*lp) and of its job (*lj) is
 * (siox_wh_loss): returns how many were filled, 0 (the warehouse could not
 * tell: not an error for a graph), 1 (the process; no job) or 2. */
int siox_wh_graph_completeness(PGconn *c, const struct siox_act *root, struct siox_wh_loss *lp,
                               struct siox_wh_loss *lj);

/* {"activities": [...]}: the rows of siox_wh_top, slowest first. 0, -EIO,
 * -ENOMEM. */
int siox_wh_top_document(PGconn *c, const struct siox_top_query *q, json_object **out, char *err, size_t errlen);

/* A trace's completeness (siox_wh_loss) as an object: processes, made,
 * stored, dropped per place, unaccounted. The caller owns it. */
json_object *siox_wh_loss_json(const struct siox_wh_loss *l);
/* Its complete_percent: stored (of the processes that reported) out of
 * made, 100 when nothing was made. */
double siox_wh_loss_percent(const struct siox_wh_loss *l);

#endif
