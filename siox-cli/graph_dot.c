/*
 * `siox graph --format dot`: the causal tree as a Graphviz digraph, ready for
 * `dot -Tsvg`. Explicit links are solid, implicit ones dashed and labelled
 * with their confidence; blame's path is drawn red and bold, its culprit
 * filled.
 */
#include <inttypes.h>

#include "format.h"
#include "graph_view.h"

/* DOT string literal contents: quotes and backslashes escaped. */
static void put_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    if (*s == '\n')
      fputs("\\n", f);
    else
      fputc(*s, f);
  }
}

struct mark {
  int64_t aid;
  const char *label;
};

static void put_node(FILE *f, const struct siox_act *a, const struct mark *m) {
  char incl[32], excl[32], bytes[32];
  bool marked = m->aid && a->aid == m->aid;
  fprintf(f, "  a%" PRId64 " [label=\"", a->aid);
  if (marked) {
    put_escaped(f, m->label);
    fputs("\\n", f);
  }
  put_escaped(f, a->hwid);
  fputs("\\n", f);
  put_escaped(f, a->swid);
  if (a->iid[0]) {
    fputc('#', f);
    put_escaped(f, a->iid);
  }
  fputs("\\n", f);
  put_escaped(f, a->name);
  fprintf(f, "\\nincl %s / excl %s", siox_fmt_duration(a->inclusive_ns, incl, sizeof(incl)),
          siox_fmt_duration(a->exclusive_ns, excl, sizeof(excl)));
  if (a->bytes >= 0) fprintf(f, "\\n%s", siox_fmt_bytes(a->bytes, bytes, sizeof(bytes)));
  if (a->err) fprintf(f, "\\nerr %d", a->err);
  fprintf(f, "\\naid %" PRId64 "\"", a->aid);
  if (a->critical) fputs(", color=red, penwidth=2", f);
  if (marked)
    fputs(", style=filled, fillcolor=\"#ff9a9a\", penwidth=3", f);
  else if (a->err)
    fputs(", style=filled, fillcolor=\"#ffe0e0\"", f);
  fputs("];\n", f);
}

static void put_edge(FILE *f, const struct siox_act *p, const struct siox_act *c) {
  fprintf(f, "  a%" PRId64 " -> a%" PRId64 " [", p->aid, c->aid);
  if (c->link == SIOX_LINK_IMPLICIT) {
    fprintf(f, "style=dashed, label=\"%.2f", c->confidence);
    if (c->flags[0]) {
      fputc(' ', f);
      put_escaped(f, c->flags);
    }
    fputs("\", ", f);
  }
  fputs(c->critical ? "color=red, penwidth=2" : "color=gray40", f);
  fputs("];\n", f);
}

static void put_subtree(FILE *f, const struct siox_act *a, const struct mark *m) {
  put_node(f, a, m);
  for (size_t i = 0; i < a->nchildren; i++) {
    put_edge(f, a, a->children[i]);
    put_subtree(f, a->children[i], m);
  }
}

void siox_view_dot(FILE *f, const struct siox_tree *t, int64_t mark_aid, const char *mark_label) {
  const struct mark m = {mark_aid, mark_label ? mark_label : ""};
  fprintf(f, "digraph siox_%" PRId64 " {\n", t->root->aid);
  fputs("  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
        "  edge [fontname=\"Helvetica\", fontsize=9];\n",
        f);
  put_subtree(f, t->root, &m);
  fputs("}\n", f);
}
