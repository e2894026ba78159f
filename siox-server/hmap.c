/*
 * Hash map behind the server's in-memory ingest caches (see hmap.h). Linear
 * probing with backward-shift deletion, so there are no tombstones and a
 * long-running server never degrades.
 */
#include "hmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const void *key, size_t len) {
  const unsigned char *p = key;
  uint64_t h = 1469598103934665603ull; /* FNV-1a, then a final mix */
  for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 33);
}

void siox_hmap_init(struct siox_hmap *m) { memset(m, 0, sizeof *m); }

void siox_hmap_clear(struct siox_hmap *m) {
  for (size_t i = 0; i < m->cap; i++) free(m->slots[i].key);
  free(m->slots);
  siox_hmap_init(m);
}

static size_t find_slot(const struct siox_hmap *m, uint64_t h, const void *key, size_t klen) {
  size_t mask = m->cap - 1, i = h & mask;
  while (m->slots[i].key) {
    const struct siox_hmap_entry *e = &m->slots[i];
    if (e->hash == h && e->klen == klen && memcmp(e->key, key, klen) == 0) return i;
    i = (i + 1) & mask;
  }
  return i;
}

uint64_t *siox_hmap_get(const struct siox_hmap *m, const void *key, size_t klen) {
  if (m->cap == 0) return NULL;
  size_t i = find_slot(m, hash_bytes(key, klen), key, klen);
  return m->slots[i].key ? m->slots[i].v : NULL;
}

static int grow(struct siox_hmap *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  struct siox_hmap_entry *ns = calloc(ncap, sizeof *ns);
  if (!ns) return -ENOMEM;
  struct siox_hmap old = *m;
  m->slots = ns;
  m->cap = ncap;
  for (size_t i = 0; i < old.cap; i++)
    if (old.slots[i].key) m->slots[find_slot(m, old.slots[i].hash, old.slots[i].key, old.slots[i].klen)] = old.slots[i];
  free(old.slots);
  return 0;
}

int siox_hmap_put(struct siox_hmap *m, const void *key, size_t klen, uint64_t v0, uint64_t v1) {
  /* Keep the load factor under 1/2 so that probes stay short. */
  if ((m->n + 1) * 2 > m->cap && grow(m) != 0) return -ENOMEM;
  uint64_t h = hash_bytes(key, klen);
  size_t i = find_slot(m, h, key, klen);
  struct siox_hmap_entry *e = &m->slots[i];
  if (!e->key) {
    char *k = malloc(klen ? klen : 1);
    if (!k) return -ENOMEM;
    memcpy(k, key, klen);
    *e = (struct siox_hmap_entry){.hash = h, .key = k, .klen = (uint32_t)klen};
    m->n++;
  }
  e->v[0] = v0;
  e->v[1] = v1;
  return 0;
}

void siox_hmap_del(struct siox_hmap *m, const void *key, size_t klen) {
  if (m->cap == 0) return;
  size_t mask = m->cap - 1, i = find_slot(m, hash_bytes(key, klen), key, klen);
  if (!m->slots[i].key) return;
  free(m->slots[i].key);
  m->slots[i].key = NULL;
  m->n--;
  /* Backward shift: move later entries of the probe run into the hole when
   * their home slot allows it. */
  for (size_t j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
    size_t home = m->slots[j].hash & mask;
    if (((j - home) & mask) >= ((j - i) & mask)) {
      m->slots[i] = m->slots[j];
      m->slots[j].key = NULL;
      i = j;
    }
  }
}
