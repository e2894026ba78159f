/*
 * `siox graph` as text: the causal tree of one call, one activity per line,
 * indented under its parent, with the times graph.c computed. The critical
 * path is marked with '*'.
 */
#include <inttypes.h>
#include <string.h>

#include "format.h"
#include "graph_view.h"

const char *siox_view_link(const struct siox_act *a, char *buf, size_t len) {
  if (a->link == SIOX_LINK_ROOT)
    snprintf(buf, len, "%s", "");
  else if (a->link == SIOX_LINK_EXPLICIT)
    snprintf(buf, len, "[explicit]");
  else
    snprintf(buf, len, "[implicit %.2f%s%s]", a->confidence, a->flags[0] ? " " : "", a->flags);
  return buf;
}

static void print_attrs(FILE *f, const struct siox_act *a) {
  char v[512];
  for (size_t i = 0; i < a->nattrs; i++) fprintf(f, "  %s=%s", a->attrs[i].name, siox_fmt_attr(&a->attrs[i], v, sizeof(v)));
}

static void print_line(FILE *f, const struct siox_tree *t, const struct siox_act *a, bool absolute) {
  char node[512], when[64], incl[32], excl[32], link[96];
  if (absolute || a == t->root) {
    siox_fmt_iso(a->start_ns, when, sizeof(when));
  } else {
    char d[32];
    siox_fmt_duration(a->start_ns - t->root->start_ns, d, sizeof(d));
    snprintf(when, sizeof(when), "%s%s", a->start_ns >= t->root->start_ns ? "+" : "", d);
  }
  fprintf(f, "%s %" PRId64 "  %s  %s  %s  incl %s  excl %s", a->critical ? "*" : " ", a->aid,
          siox_fmt_node(a, node, sizeof(node)), a->name, when, siox_fmt_duration(a->inclusive_ns, incl, sizeof(incl)),
          siox_fmt_duration(a->exclusive_ns, excl, sizeof(excl)));
  if (a->err) fprintf(f, "  err=%d", a->err);
  print_attrs(f, a);
  if (a->link != SIOX_LINK_ROOT) fprintf(f, "  %s", siox_view_link(a, link, sizeof(link)));
  fputc('\n', f);
}

/* prefix holds the ancestors' guide lines ("|  " or "   " per level). */
static void print_subtree(FILE *f, const struct siox_tree *t, const struct siox_act *a, char *prefix, size_t cap,
                          bool absolute) {
  for (size_t i = 0; i < a->nchildren; i++) {
    bool last = i + 1 == a->nchildren;
    fprintf(f, "%s%s", prefix, last ? "`-" : "+-");
    print_line(f, t, a->children[i], absolute);
    size_t len = strlen(prefix);
    if (len + 4 < cap) { /* beyond ~300 levels the guides just stop growing */
      memcpy(prefix + len, last ? "   " : "|  ", 4);
    }
    print_subtree(f, t, a->children[i], prefix, cap, absolute);
    prefix[len] = '\0';
  }
}

void siox_view_text(FILE *f, const struct siox_tree *t, bool absolute) {
  char prefix[1024] = "";
  const struct siox_act *r = t->root;
  int depth = 0;
  for (size_t i = 0; i < t->n; i++)
    if (t->acts[i].depth > depth) depth = t->acts[i].depth;
  fprintf(f, "Causal tree of activity %" PRId64 ": %zu activities, %d levels below the root", r->aid,
          siox_tree_size(t), depth);
  if (r->job[0]) fprintf(f, ", job %s", r->job);
  fprintf(f, ", process %d on %s\n", r->pid, r->host[0] ? r->host : "?");
  fprintf(f, "incl = end - start; excl = incl minus the union of the children's intervals; "
             "* = critical path (blame's walk: the heaviest group of same-kind children at each level)\n\n");
  print_line(f, t, r, absolute);
  print_subtree(f, t, r, prefix, sizeof(prefix), absolute);
}
