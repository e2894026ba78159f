/*
 * Capacity aggregates: folds the activities that ended since the last fold
 * into per-component load per time bucket (kb_capacity, schema 009).
 * siox-server runs it after its analyses; `siox capacity` reads the result.
 */
#include <stdio.h>

#include <siox/siox_kb.h>

#include "baselines_fold.h"

static const char batch_create_sql[] =
    "CREATE TEMP TABLE kb_cap_batch (kind text, key text, bucket_ns bigint, ns double precision, b bigint)"
    " ON COMMIT DROP";

/* Every activity is load on its own node. A client node and a job are
 * charged with their POSIX-layer activities only: the layer that hands the
 * I/O to the file system, counted once (MPI-IO and HDF5 above it would count
 * the same bytes again, the file system's own processes serve others). */
static const char batch_sql[] =
    "INSERT INTO kb_cap_batch"
    " WITH x AS ("
    "  SELECT a.aid, a.node_id, n.swid, (a.end_ns / cfg.bucket_ns) * cfg.bucket_ns AS bucket_ns,"
    "         (a.end_ns - a.start_ns)::double precision AS ns, a.bytes AS b"
    "    FROM" KB_FOLD_ACTIVITIES " a JOIN siox_nodes() n USING (node_id), kb_capacity_config cfg)"
    " SELECT 'node', node_id::text, bucket_ns, ns, b FROM x"
    " UNION ALL SELECT 'host', p.host, bucket_ns, ns, b FROM x JOIN siox_processes() p ON p.proc_id = (x.aid >> 32)"
    "  WHERE x.swid = 'POSIX'"
    " UNION ALL SELECT 'job', p.job, bucket_ns, ns, b"
    "  FROM x JOIN siox_processes() p ON p.proc_id = (x.aid >> 32) WHERE x.swid = 'POSIX'";

static const char merge_sql[] =
    "INSERT INTO kb_capacity AS k (kind, key, bucket_ns, ops, bytes, busy_ns)"
    " SELECT kind, key, bucket_ns, count(*), coalesce(sum(greatest(b, 0)), 0), sum(ns) FROM kb_cap_batch"
    "  GROUP BY 1, 2, 3"
    " ON CONFLICT (kind, key, bucket_ns) DO UPDATE SET ops = k.ops + excluded.ops,"
    "  bytes = k.bytes + excluded.bytes, busy_ns = k.busy_ns + excluded.busy_ns";

static const char count_sql[] = "SELECT 1 FROM kb_cap_batch WHERE kind = 'node'";

int siox_kb_capacity_update(PGconn *c, int64_t settle_ns, char *err, size_t errcap) {
  struct kb_fold_window w;
  int rc = kb_fold_begin(c, "capacity", settle_ns, &w, err, errcap);
  if (rc <= 0) return rc;
  long n = -1;
  if (kb_fold_step(c, batch_create_sql, err, errcap) < 0 || kb_fold_exec(c, batch_sql, &w, err, errcap) < 0 ||
      kb_fold_step(c, merge_sql, err, errcap) < 0 || (n = kb_fold_rows(c, count_sql, err, errcap)) < 0)
    goto fail;
  if (kb_fold_commit(c, "capacity", &w, n, err, errcap) < 0) return -1;
  return (int)n;
fail:
  kb_fold_abort(c);
  return -1;
}
