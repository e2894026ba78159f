/*
 * The owner of a remote call's object: a stable hash of the descriptor both
 * sides name (a GlusterFS client and its brick both name the gfid), so that
 * every shard computes the same owner without asking anyone.
 */
#include "shard_owner.h"

#include <stdio.h>

static uint64_t fnv1a(uint64_t h, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = (h ^ *p) * 1099511628211ull;
  return h;
}

int siox_shard_owner(uint32_t type, const char *value, int nshards) {
  char t[16];
  snprintf(t, sizeof t, "%u\x1f", type);
  uint64_t h = fnv1a(fnv1a(14695981039346656037ull, t), value);
  return nshards > 0 ? 1 + (int)(h % (uint64_t)nshards) : 1;
}
