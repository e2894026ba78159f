/*
 * Shared by ingest.c and objects.c: the state of one batch being stored and
 * the small helpers both need (integer text, cache lookups of process-local
 * ids). Not used outside the ingest path.
 */
#ifndef SIOX_INGEST_H
#define SIOX_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "server.h"
#include "siox_block.h"

struct siox_batch_ctx {
  struct siox_db *db;
  const Siox__Batch *msg;
  const char *hostname;
  const struct siox_owner *owner; /* the session's identity (auth.c) */
  struct siox_block blk;
  int64_t *proc_ids; /* warehouse proc_id per blk.processes entry */
  char *reason;      /* -EBADMSG explanation */
  size_t reason_len;
};

/* Writes v as decimal into buf (>= 24 bytes) and returns buf. */
char *siox_i64s(char *buf, int64_t v);
/* Global activity id of a client-local aid. */
static inline int64_t siox_global_aid(int64_t proc_id, uint64_t aid) { return (int64_t)(((uint64_t)proc_id << 32) | aid); }
/* The warehouse node_id of a process-local unid: cache, then process_nodes.
 * Returns 0, -ENOENT or -EIO. */
int siox_node_of(struct siox_db *db, int64_t proc_id, uint32_t unid, int64_t *node_id);

#endif
