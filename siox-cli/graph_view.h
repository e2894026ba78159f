/*
 * Views of one causal tree for `siox graph` (and the path in `siox blame`):
 * an indented text tree and Graphviz DOT. JSON is in json_out.c.
 */
#ifndef SIOX_CLI_GRAPH_VIEW_H
#define SIOX_CLI_GRAPH_VIEW_H

#include <stdbool.h>
#include <stdio.h>

#include "graph.h"

/* One line per activity, children indented under their parent; absolute
 * prints ISO start times everywhere instead of offsets from the root. */
void siox_view_text(FILE *f, const struct siox_tree *t, bool absolute);

/* A digraph for `dot -Tsvg`: implicit links dashed with their confidence,
 * the marked path (blame's walk) in red; the activity mark_aid (0: none)
 * filled and headed by mark_label (blame's culprit and class). */
void siox_view_dot(FILE *f, const struct siox_tree *t, int64_t mark_aid, const char *mark_label);

/* "[implicit 0.50 before-parent]", "[explicit]" or "" for the root. */
const char *siox_view_link(const struct siox_act *a, char *buf, size_t len);

#endif
