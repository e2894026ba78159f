/*
 * Fixture of the knowledge-base aggregate tests (test_kb_baseline*.c,
 * test_kb_capacity*.c): a real siox-server on a temp data dir (embedded
 * PostgreSQL, every migration applied) whose warehouse the tests fill with
 * synthetic rows by SQL, so that expected values are exact.
 */
#ifndef TEST_KB_BASELINE_DB_H
#define TEST_KB_BASELINE_DB_H

#include <libpq-fe.h>
#include <stdint.h>

#include "server_harness.h"

struct kbdb {
  struct harness h;
  PGconn *c;
  int64_t next_local; /* local aids handed out so far, across processes */
};

/* Starts the server given as argv[1], connects and sets the folds' settle
 * time to 0: a fold takes every row that ended before it, so each test
 * inserts rows that end after the previous fold (recent ones) and before
 * its own. 0 or -1 (said why). */
int kbdb_start(struct kbdb *d, int argc, char **argv);
/* Disconnects, stops the server and removes its temp dir. */
void kbdb_stop(struct kbdb *d);

/* Runs a printf-formatted statement; fails the test (cmocka) on error. */
void kbdb_exec(struct kbdb *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A one-value query as a double (NaN when NULL); fails the test on error. */
double kbdb_num(struct kbdb *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A component and an activity type on it; returns their ids. */
int kbdb_node(struct kbdb *d, const char *hwid, const char *swid);
int kbdb_type(struct kbdb *d, int node_id, const char *name);
/* A process on host in job ("" for none); returns its proc_id. */
int kbdb_proc(struct kbdb *d, const char *host, const char *job);

/* n activities of (node, type) in process proc: the i-th (0-based) starts at
 * t0_ns + i * step_ns and lasts dur_ns; carries io/bytes = bytes unless
 * bytes < 0. Returns the aid of the first. */
int64_t kbdb_acts(struct kbdb *d, int proc, int node, int type, int n, int64_t t0_ns, int64_t step_ns, int64_t dur_ns,
                  int64_t bytes);

/* Now on the server's clock, in ns since the epoch. */
int64_t kbdb_now_ns(struct kbdb *d);

/* A start time for rows spanning span_ns that the next fold takes whole:
 * just after every fold so far, and (after waiting if need be) span_ns in
 * the past. */
int64_t kbdb_recent(struct kbdb *d, int64_t span_ns);

/* Waits until the server's clock is past t_ns. */
void kbdb_wait_until(struct kbdb *d, int64_t t_ns);

#endif
