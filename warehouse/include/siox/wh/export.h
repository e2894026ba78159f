/*
 * Exports (export_stream.c): a job's activities, causal links and
 * attributes, streamed row by row (a cursor FETCHed in batches), so that memory
 * stays flat however large the job. The set: every activity of the job's
 * processes, and everything they caused through implicit links, followed
 * down (the file system client, the bricks, their devices). Encoding
 * (Chrome trace, CSV) is the front end's.
 */
#ifndef SIOX_WH_EXPORT_H
#define SIOX_WH_EXPORT_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

enum siox_wh_export_what { SIOX_WH_EXPORT_ACTIVITIES, SIOX_WH_EXPORT_LINKS, SIOX_WH_EXPORT_ATTRIBUTES };

/* One activity. Strings are borrowed until the next siox_wh_stream_next. */
struct siox_wh_xact {
  int64_t aid, parent_aid; /* parent_aid 0: no explicit parent */
  int32_t proc_id, pid, node_id;
  const char *host, *exe, *job; /* of its process ("" for the job of a server process) */
  const char *hwid, *swid, *iid, *name;
  int64_t start_ns, end_ns;
  int32_t err;
  int64_t bytes; /* io/bytes, -1 unknown */
};

/* One causal link, explicit (same process, confidence 1) or implicit
 * (reconstructed by the server). Both ends are in the export. */
struct siox_wh_xlink {
  int64_t parent_aid, child_aid;
  int is_implicit;
  double confidence;
  const char *flags; /* "" or e.g. "before-parent" */
  int32_t parent_proc, parent_node, child_proc, child_node;
  int64_t parent_start_ns, parent_end_ns, child_start_ns;
};

/* One attribute value of an activity, as text (u64 values unsigned). */
struct siox_wh_xattr {
  int64_t aid;
  const char *name, *unit, *value;
};

struct siox_wh_stream;

/* The first start time of the job's own activities (a trace's time base).
 * 0, -ENOENT (no such job, or it has no activities), -EIO. */
int siox_wh_export_t0(PGconn *c, const char *job, int64_t *t0, char *err, size_t errlen);

/* Starts streaming `what` of job (processes.job, or "proc:ID" of a process
 * without a job). The first stream of a job on c computes its set into a
 * temporary table of the session; the next streams of the same job on c
 * read that set (one export's passes see one set), another job's replaces
 * it. c must not run another query until the stream is closed.
 * *out is the caller's (siox_wh_stream_close). 0, -EIO, -ENOMEM. */
int siox_wh_export_open(PGconn *c, enum siox_wh_export_what what, const char *job, struct siox_wh_stream **out,
                        char *err, size_t errlen);

/* The next row: sets the one pointer matching the stream's kind (the others
 * may be NULL). 1 a row, 0 the end, -EIO (err set). */
int siox_wh_stream_next(struct siox_wh_stream *s, const struct siox_wh_xact **act, const struct siox_wh_xlink **link,
                        const struct siox_wh_xattr **attr, char *err, size_t errlen);

/* Ends the stream (drains what the server still sends; NULL is fine). */
void siox_wh_stream_close(struct siox_wh_stream *s);

#endif
