/*
 * Where an object's senders go on a shard with peers (issue 15 §2): to the
 * owner of every global name of the object (shard_owner.h), since each of
 * those owners decides the receives named by its name. A MAP that joins
 * two objects with global names widens that set; every peer is told of it
 * (shard_map_outbox, schema 033). Only objects.c calls these, inside a
 * transaction of the database thread, and only with peers (db->forward).
 */
#ifndef SIOX_SHARD_CLASS_H
#define SIOX_SHARD_CLASS_H

#include <stdint.h>

#include "server.h"

/* A set of shards 1..127: shard k is bit k-1. */
struct siox_shards {
  uint64_t m[2];
};

static inline void siox_shards_add(struct siox_shards *s, int k) { s->m[(k - 1) / 64] |= 1ull << ((k - 1) % 64); }
static inline int siox_shards_has(const struct siox_shards *s, int k) { return (int)(s->m[(k - 1) / 64] >> ((k - 1) % 64) & 1); }

/* The owners of the global names of object root (db->owners, then the
 * warehouse's descriptors). 0 or -EIO/-ENOMEM. */
int siox_class_owners(struct siox_db *db, int64_t root, struct siox_shards *out);

/* Objects loser and win (roots until now) became one, win the root. Sends
 * this shard's stored senders of each side, when named globally, to the
 * owners only the other side had (shard_outbox), and with tell set (a MAP
 * recorded here) tells every peer which two names were joined, when both
 * sides have global names. Call before the rows move to win. 0 or <0. */
int siox_class_join(struct siox_db *db, int64_t win, int64_t loser, int tell);

#endif
