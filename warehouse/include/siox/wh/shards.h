/*
 * A site of N warehouses (shards) and the coordinator that queries them as
 * one (issue 15 §2). Design: warehouse/README.md, "Shards and the
 * coordinator".
 */
#ifndef SIOX_WH_SHARDS_H
#define SIOX_WH_SHARDS_H

#include <libpq-fe.h>
#include <stddef.h>

/* Largest shard number (ids of shard k are drawn from k's own range:
 * integers [k<<24, (k+1)<<24), bigints [k<<48, (k+1)<<48)). */
#define SIOX_WH_SHARDS_MAX 127

/* Makes the (migrated) warehouse at c shard k of n: its sequences draw from
 * shard k's id range and schema siox_shard shows each table with a column
 * "shard" = k, for the coordinator. Idempotent; refused (-EIO, err says
 * why) when the warehouse is another shard or already holds processes
 * numbered outside k's range. Serialised with siox_wh_migrate. */
int siox_wh_shard_setup(PGconn *c, int k, int n, char *err, size_t errlen);

/* Builds the coordinator database at coord from the shards at conninfo[0..n)
 * (libpq conninfos, user and password included): migrates each shard in
 * turn (siox_wh_migrate; a shard's server migrates under the same lock),
 * checks each is a shard (siox_wh_shard_setup done, numbers distinct), then
 * in one transaction on coord replaces schema public with one partitioned
 * table per warehouse table, list-partitioned on "shard", whose partitions
 * are postgres_fdw foreign tables on the shards' siox_shard views, plus the
 * warehouse's views and a local copy of the ontology. A failure leaves the
 * coordinator as it was; running it again resumes (migrations done are not
 * redone). log (may be NULL) hears each step. 0 or -EIO/-ECONNREFUSED with
 * err naming the shard. */
int siox_wh_coordinator_build(PGconn *coord, const char *const *conninfo, int n, void (*log)(void *, const char *),
                              void *ctx, char *err, size_t errlen);

#endif
