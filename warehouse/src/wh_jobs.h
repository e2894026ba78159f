/*
 * `siox jobs`'s per-job figures from its groups (wh_jobs.c), and their
 * stored copies in job_aggregates (wh_jobs_store.c).
 */
#ifndef SIOX_WH_JOBS_H
#define SIOX_WH_JOBS_H

#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdint.h>

/* What the groups of a job's calls add up to: every figure of its row in
 * the list but the served ones (worst component, bricks), which depend on
 * other jobs' and components' activities and are read on every listing. */
struct whjs_counts {
  int64_t activities, calls, first_ns, last_ns;
  int64_t bytes_read, bytes_written, io_ns;
  int64_t procs, data, small, follows, consec, mpiio_data, coll;
};

/* counts as the stored document, and back (0, or -EINVAL for a document
 * that lacks a figure: then the job is computed again). */
json_object *whjs_counts_json(const struct whjs_counts *c);
int whjs_counts_parse(const char *doc, struct whjs_counts *c);

/* Stores a job's counts under its stamp (acts, max_aid: the count and
 * highest AID of its activities, as wh_job_cache.c stamps). A failure is
 * not the listing's: the next one computes the job again. */
void whjs_store(PGconn *c, const char *uid, const char *job, const char *acts, const char *max_aid,
                const struct whjs_counts *counts);

#endif
