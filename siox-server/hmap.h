/*
 * Small open-addressing hash map from byte-string keys to two 64-bit values.
 * The server's ingest caches ((daemon,pid,nonce) -> proc_id, (proc,unid) ->
 * node_id, descriptor key -> (desc_id, object_id), ...) are all built on it.
 */
#ifndef SIOX_HMAP_H
#define SIOX_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct siox_hmap_entry {
  uint64_t hash;
  char *key; /* NULL: empty slot */
  uint32_t klen;
  uint64_t v[2];
};

struct siox_hmap {
  struct siox_hmap_entry *slots;
  size_t cap, n;
};

void siox_hmap_init(struct siox_hmap *m);
/* Frees every key and the slot array; the map is empty and reusable after. */
void siox_hmap_clear(struct siox_hmap *m);
/* Returns the two values stored for key, or NULL. */
uint64_t *siox_hmap_get(const struct siox_hmap *m, const void *key, size_t klen);
/* Stores (copies) key with values v0, v1, replacing an old entry.
 * Returns 0 or -ENOMEM. */
int siox_hmap_put(struct siox_hmap *m, const void *key, size_t klen, uint64_t v0, uint64_t v1);
/* Removes key if present. */
void siox_hmap_del(struct siox_hmap *m, const void *key, size_t klen);

/* Key of two 64-bit integers, for the many (id, id) caches. */
struct siox_key2 {
  uint64_t a, b;
};

#endif
