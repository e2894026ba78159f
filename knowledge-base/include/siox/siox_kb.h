/*
 * libsiox-kb: what SIOX has learned from the warehouse (knowledge-base/).
 *
 * Every function takes an open libpq connection to the warehouse (schema
 * version >= the knowledge base's migrations) that the caller owns; none
 * keeps it. Functions that can fail return -1 and write a one-line reason
 * (no trailing newline) into err[errcap]; err may be NULL.
 */
#ifndef SIOX_KB_H
#define SIOX_KB_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

/* ---- application identity (app_key.c) -----------------------------------
 * An application is its executable path plus a stable hash of its command
 * line (processes.args: argv joined by single spaces, as libsiox-client
 * sends it). 64-bit FNV-1a of the args bytes; stable across runs, hosts and
 * builds. */
uint64_t siox_kb_args_hash(const char *args);

/* The file pattern of a path: every run of decimal digits becomes a single
 * '#', so that out.0001.h5 and out.0002.h5 share hints. Writes at most cap
 * bytes (NUL included) and returns the pattern's length, or -1 when it does
 * not fit. */
int siox_kb_file_pattern(const char *path, char *out, size_t cap);

/* ---- hint lookup (hints_lookup.c) ---------------------------------------- */
#define SIOX_KB_MAX_HINTS 32
struct siox_kb_hint {
  char key[64];
  char value[128];
};
struct siox_kb_hintset {
  int64_t hint_set_id; /* kb_hint_sets.hint_set_id */
  char component[32];  /* the MPI-IO component the keys are for: "romio321" */
  size_t n;
  struct siox_kb_hint hints[SIOX_KB_MAX_HINTS];
};

/* The newest hint set for (exe, args, path) meant for component: an exact
 * match of application and file pattern first, then the same executable
 * with any arguments and the same pattern. run names the asking run as
 * "<uid>:<job id>" (NULL or "" for a process without a job id): an
 * experiment set goes to the first run that asks, and every other run gets
 * the live set it superseded, or none. Returns 1 and fills *out, 0 when
 * there is none, -1 on error. */
int siox_kb_hints_lookup(PGconn *c, const char *exe, const char *args, const char *path, const char *component,
                         const char *run, struct siox_kb_hintset *out, char *err, size_t errcap);

/* ---- analyses (analyze_*.c) ----------------------------------------------
 * A job is processes.job, or "proc:<proc_id>" for a process without one. */

/* Analyses one job from its causal graph: replaces the job's findings and
 * writes a hint set per (application, file pattern) where the data calls
 * for one. Returns the number of findings, or -1. */
int siox_kb_analyze_job(PGconn *c, const char *job, char *err, size_t errcap);

/* Analyses every job that has activities newer than its last analysis and
 * has either been quiet for idle_s seconds (it ended) or last been analysed
 * more than incr_s seconds ago (long job, incremental). Then refreshes the
 * baselines and capacity aggregates with settle_ns (see below). Returns the
 * number of jobs analysed, or -1. siox-server calls this from its analysis
 * thread. */
int siox_kb_analyze_pending(PGconn *c, int idle_s, int incr_s, int64_t settle_ns, char *err, size_t errcap);

/* ---- baselines and capacity (baselines.c, capacity.c) ---------------------
 * Incremental: each call folds in the activities ingested since the last,
 * up to now minus the settle time: kb_fold_state's (15 s), or settle_ns
 * when longer (siox-server's background folds pass 120 s, since under load
 * rows reach the warehouse well after their end; a fold never looks behind
 * its watermark again). 0: the table's. Return the number of activities
 * folded in, or -1. */
int siox_kb_baselines_update(PGconn *c, int64_t settle_ns, char *err, size_t errcap);
int siox_kb_capacity_update(PGconn *c, int64_t settle_ns, char *err, size_t errcap);

/* ---- findings for the front ends (findings_read.c) ------------------------
 * json-c documents; the caller owns what it gets (json_object_put). */
struct json_object;

/* Adds "findings": the number of findings of each job object (its "job"
 * key) of the array jobs. 0 or -1. */
int siox_kb_count_findings(PGconn *c, struct json_object *jobs, char *err, size_t errcap);

/* The job's findings, most expected gain first: [{kind, severity, summary,
 * file_pattern, expected_gain_s, evidence, hints, component}], hints and
 * component null when no hint set acts on it. 0 or -1. */
int siox_kb_job_findings(PGconn *c, const char *job, struct json_object **out, char *err, size_t errcap);

/* A component's (node's) baseline median latency: its classes' p50,
 * weighted by their samples (baselines_read.c); 0 with *samples 0 when
 * none is learned yet. 0 or -1. */
int siox_kb_node_baseline(PGconn *c, int64_t node_id, double *p50_ns, int64_t *samples, char *err, size_t errcap);

#endif
