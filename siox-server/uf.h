/*
 * Union-find over canonical object ids: descriptors resolve to objects, and a
 * MAP record joins two objects into one. The root is always the smallest id,
 * so the result does not depend on the order of merges (and a restarted
 * server agrees with the warehouse, which stores it flattened).
 */
#ifndef SIOX_UF_H
#define SIOX_UF_H

#include <stdint.h>

#include "hmap.h"

struct siox_uf {
  struct siox_hmap parent; /* object id -> parent id (absent: a root) */
};

void siox_uf_init(struct siox_uf *u);
void siox_uf_clear(struct siox_uf *u);
/* Returns the root of x (x itself when never merged); compresses paths. */
int64_t siox_uf_find(struct siox_uf *u, int64_t x);
/* Joins the sets of a and b (ids > 0). Returns the surviving root, or
 * -ENOMEM; *loser gets the root merged away, or 0 when already one object. */
int64_t siox_uf_union(struct siox_uf *u, int64_t a, int64_t b, int64_t *loser);

#endif
