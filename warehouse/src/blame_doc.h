/* What the files of blame's document share (siox_blame_doc.h):
 * blame_words.c, blame_baseline.c, blame_explain.c, blame_document.c. */
#ifndef SIOX_WH_BLAME_DOC_INTERNAL_H
#define SIOX_WH_BLAME_DOC_INTERNAL_H

#include <stdio.h>

#include "siox/siox_blame_doc.h"

/* At or above this percentile of its baseline a component is abnormal. */
#define SIOX_BLAME_ABNORMAL_PCT 95.0

/* blame_words.c: the peers' latency line ("150.000 us + 9.500 ms/MiB"),
 * and how the evidence measured ("Per byte", ...). */
const char *blame_line_str(const struct siox_blame *b, char *buf, size_t len);
const char *blame_measure_str(const struct siox_blame *b);

/* blame_baseline.c: scores x into v (o->score; unknown without it). */
void blame_baseline_score(PGconn *c, const struct siox_blame_opts *o, const struct siox_blame *b,
                          const struct siox_act *x, const struct siox_peer_query *q, struct siox_blame_baseline *v);
/* -1 unknown, 0 normal, 1 abnormal: the baseline's vote in the class. */
int blame_baseline_vote(const struct siox_blame_baseline *v);
void blame_baseline_text(FILE *f, const struct siox_act *x, const struct siox_blame_baseline *v);
json_object *blame_baseline_json(const struct siox_blame_baseline *v);

#endif
