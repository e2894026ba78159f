/*
 * Internal to the block codec: the "previous value of the same attribute id"
 * that numeric activity attributes are delta-coded against (siox.proto,
 * Activities.attr_delta). A small open-addressing map; a block rarely holds
 * more than a handful of ids, so the inline table usually suffices and the
 * map costs no malloc.
 */
#ifndef SIOX_ATTR_PREV_H
#define SIOX_ATTR_PREV_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct attr_prev_slot {
  uint64_t key1; /* attribute id + 1; 0: empty */
  uint64_t val;
};

struct attr_prev {
  struct attr_prev_slot *s;
  size_t cap, n; /* cap: a power of two */
  struct attr_prev_slot inline_[32];
};

static inline void attr_prev_init(struct attr_prev *m) {
  memset(m->inline_, 0, sizeof m->inline_);
  m->s = m->inline_;
  m->cap = sizeof m->inline_ / sizeof m->inline_[0];
  m->n = 0;
}

static inline void attr_prev_free(struct attr_prev *m) {
  if (m->s != m->inline_) free(m->s);
}

static inline struct attr_prev_slot *attr_prev_find(struct attr_prev_slot *s, size_t cap, uint64_t key1) {
  size_t i = (size_t)(key1 * 0x9e3779b97f4a7c15ull >> 32) & (cap - 1);
  while (s[i].key1 && s[i].key1 != key1) i = (i + 1) & (cap - 1);
  return &s[i];
}

/* Doubles the table, keeping it at most half full so probes stay short. */
static inline int attr_prev_grow(struct attr_prev *m) {
  size_t cap = m->cap * 2;
  struct attr_prev_slot *s = calloc(cap, sizeof *s);
  if (!s) return -1;
  for (size_t i = 0; i < m->cap; i++)
    if (m->s[i].key1) *attr_prev_find(s, cap, m->s[i].key1) = m->s[i];
  attr_prev_free(m);
  m->s = s;
  m->cap = cap;
  return 0;
}

/* Returns the previous-value slot of id (0 when first seen), or NULL on ENOMEM. */
static inline uint64_t *attr_prev_get(struct attr_prev *m, uint32_t id) {
  struct attr_prev_slot *e = attr_prev_find(m->s, m->cap, (uint64_t)id + 1);
  if (e->key1) return &e->val;
  if ((m->n + 1) * 2 > m->cap) {
    if (attr_prev_grow(m)) return NULL;
    e = attr_prev_find(m->s, m->cap, (uint64_t)id + 1);
  }
  e->key1 = (uint64_t)id + 1;
  e->val = 0;
  m->n++;
  return &e->val;
}

#endif
