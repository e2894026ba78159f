/*
 * `siox graph --format dot`: the causal tree as a Graphviz digraph, ready for
 * `dot -Tsvg`. Explicit links are solid, implicit ones dashed and labelled
 * with their confidence; the critical path is drawn red and bold.
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

static void put_node(FILE *f, const struct siox_act *a) {
  char incl[32], excl[32], bytes[32];
  fprintf(f, "  a%" PRId64 " [label=\"", a->aid);
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
  if (a->err) fputs(", style=filled, fillcolor=\"#ffe0e0\"", f);
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

static void put_subtree(FILE *f, const struct siox_act *a) {
  put_node(f, a);
  for (size_t i = 0; i < a->nchildren; i++) {
    put_edge(f, a, a->children[i]);
    put_subtree(f, a->children[i]);
  }
}

void siox_view_dot(FILE *f, const struct siox_tree *t) {
  fprintf(f, "digraph siox_%" PRId64 " {\n", t->root->aid);
  fputs("  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
        "  edge [fontname=\"Helvetica\", fontsize=9];\n",
        f);
  put_subtree(f, t->root);
  fputs("}\n", f);
}
