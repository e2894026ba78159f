/*
 * Union-find for descriptor -> object resolution (see uf.h). Lives on the
 * server's database worker thread; objects.c mirrors every merge into the
 * warehouse tables objects/descriptors/remote_calls.
 */
#include "uf.h"

#include <errno.h>

void siox_uf_init(struct siox_uf *u) { siox_hmap_init(&u->parent); }

void siox_uf_clear(struct siox_uf *u) { siox_hmap_clear(&u->parent); }

static uint64_t *parent_of(struct siox_uf *u, int64_t x) { return siox_hmap_get(&u->parent, &x, sizeof x); }

int64_t siox_uf_find(struct siox_uf *u, int64_t x) {
  int64_t root = x;
  uint64_t *p;
  while ((p = parent_of(u, root))) root = (int64_t)p[0];
  /* Path compression: point every visited id at the root. */
  while (x != root) {
    p = parent_of(u, x);
    int64_t next = (int64_t)p[0];
    p[0] = (uint64_t)root;
    x = next;
  }
  return root;
}

int64_t siox_uf_union(struct siox_uf *u, int64_t a, int64_t b, int64_t *loser) {
  int64_t ra = siox_uf_find(u, a), rb = siox_uf_find(u, b);
  *loser = 0;
  if (ra == rb) return ra;
  int64_t win = ra < rb ? ra : rb, lose = ra < rb ? rb : ra;
  int rc = siox_hmap_put(&u->parent, &lose, sizeof lose, (uint64_t)win, 0);
  if (rc != 0) return rc;
  *loser = lose;
  return win;
}
