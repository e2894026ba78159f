/*
 * Internal interfaces of siox-server, one section per source file. The data
 * path: net.c reads frames -> session.c dispatches messages -> worker.c runs
 * database jobs on one thread -> ingest.c (+ objects.c) stores a batch in one
 * transaction -> match.c links sends to receives. main.c wires it together;
 * pg_embedded.c and migrate.c prepare the warehouse before any of it runs.
 */
#ifndef SIOX_SERVER_H
#define SIOX_SERVER_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdint.h>
#include <uv.h>

#include "copybuf.h"
#include "hmap.h"
#include "options.h"
#include "siox.pb-c.h"
#include "uf.h"

/* ---- db.c: libpq helpers ------------------------------------------------ */

/* Runs sql (no parameters); returns 0, or -EIO after logging the error. */
int siox_db_exec(PGconn *c, const char *sql);
/* Runs sql with text parameters. Returns the result (caller PQclear()s) when
 * its status is COMMAND_OK or TUPLES_OK, else logs, clears and returns NULL. */
PGresult *siox_db_query(PGconn *c, const char *sql, int n, const char *const *params);
/* Sends one COPY ... FROM STDIN statement and len bytes of data. Returns 0,
 * -EEXIST on a unique violation (not logged), or -EIO. */
int siox_db_copy(PGconn *c, const char *sql, const uint8_t *data, size_t len);
/* Connects, waiting up to wait_ms for a starting server. NULL on failure. */
PGconn *siox_db_connect(const char *conninfo, int wait_ms);

/* ---- pg_embedded.c: private PostgreSQL under DIR/pg ---------------------- */

struct siox_pg {
  char dir[4096];     /* DIR/pg, absolute */
  char bindir[1024];
  char conninfo[4200];
  int started;        /* we own it: stop it on exit */
};

/* Initialises (first time) and starts the cluster, or adopts a running one.
 * Writes the conninfo into pg->conninfo. Returns 0 or a negative errno. */
int siox_pg_start(struct siox_pg *pg, const char *data_dir, const char *bindir);
/* Stops the cluster if siox_pg_start started or adopted it. */
void siox_pg_stop(struct siox_pg *pg);

/* ---- migrate.c: schema versions and the ontology ------------------------- */

/* Applies every schema file newer than schema_version, each in its own
 * transaction, then (re)loads the ontology. Returns 0 or -EIO. */
int siox_migrate(PGconn *c);

/* ---- worker.c: the database thread ----------------------------------------- */

/* Everything the database thread owns: the connection and the caches that
 * mirror warehouse ids (all cleared on any rollback, since a rolled-back
 * transaction may have put ids in them that never committed). */
struct siox_db {
  PGconn *conn;
  char *conninfo;
  struct siox_hmap procs;   /* (daemon, pid, nonce) -> proc_id */
  struct siox_hmap nodes;   /* (proc_id, unid) -> node_id */
  struct siox_hmap types;   /* (proc_id, local type) -> (type_id, node_id) */
  struct siox_hmap targets; /* (proc_id, target id) -> index in target_names */
  struct siox_hmap edges;   /* (from node, to node) -> seen */
  struct siox_hmap descs;   /* scope|type|value -> (desc_id, object_id) */
  struct siox_uf objects;
  char **target_names;      /* pairs hwid, swid */
  size_t n_targets, cap_targets;
  struct siox_copybuf copy, copy2;
  int64_t match_watermark;  /* remote_calls.rc_id already seen by match.c */
  int activities_arrived;   /* a batch committed since the last matcher pass (1 at start) */
  int64_t match_analyzed;   /* max(rc_id) when match.c last ran ANALYZE (0 at start) */
};

struct siox_job;
typedef void (*siox_job_fn)(struct siox_job *j, struct siox_db *db);
struct siox_job {
  struct siox_job *next;
  siox_job_fn run;  /* on the database thread */
  siox_job_fn done; /* back on the loop thread (db is NULL there) */
};

struct siox_worker {
  uv_async_t async;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct siox_job *in_head, *in_tail, *out_head, *out_tail;
  int stop;
  int db_ok; /* written by the worker, read by status (int: atomic enough) */
  struct siox_db db;
};

/* Connects to conninfo and starts the thread. Returns 0 or a negative errno. */
int siox_worker_start(struct siox_worker *w, uv_loop_t *loop, const char *conninfo);
/* Queues j; jobs run one at a time, in submission order. */
void siox_worker_submit(struct siox_worker *w, struct siox_job *j);
/* Finishes queued jobs, joins the thread and closes the connection. */
void siox_worker_stop(struct siox_worker *w);
/* Drops every cache (after a rollback). */
void siox_db_caches_clear(struct siox_db *db);

/* ---- ingest.c: one batch, one transaction ------------------------------- */

struct siox_ingest_result {
  int duplicate;        /* seq <= acked_seq: acked again, nothing stored */
  uint64_t activities;  /* stored */
  char reason[256];     /* why, when the batch was rejected */
};

/* Stores batch b of a daemon (hostname from its Hello), whose block was
 * decoded into blk beforehand (decode_rc/why: siox_block_decode's result;
 * done off the database thread so that it overlaps the previous COPY).
 * Returns 0, -EBADMSG for a batch that can never be stored (reason set), or
 * -EIO for a database failure (the daemon should retry later). */
struct siox_block;
int siox_ingest_batch(struct siox_db *db, const Siox__Batch *b, const char *hostname, struct siox_block *blk,
                      int decode_rc, const char *why, struct siox_ingest_result *r);
/* Records the daemon and returns its acked_seq in *acked. 0 or -EIO. */
int siox_ingest_hello(struct siox_db *db, uint64_t daemon_id, const char *hostname, uint64_t *acked);

/* ---- objects.c: descriptors -> canonical objects ------------------------- */

struct siox_block;
struct siox_block_descriptor;

/* Resolves every descriptor record of block blk (proc_ids: warehouse proc id
 * per block process) and COPYs its send/receive records into remote_calls,
 * with their activity's interval (plus clock_offset_ns, as ingest stores
 * it) when the activity is in blk. Must run inside the batch's transaction.
 * 0, -EBADMSG (reason) or -EIO. */
int siox_objects_ingest(struct siox_db *db, const struct siox_block *blk, const int64_t *proc_ids,
                        int64_t clock_offset_ns, char *reason, size_t reason_len);

/* ---- match.c: implicit links ---------------------------------------------- */

struct siox_match_result {
  uint64_t links_new, links_updated, receives_unmatched;
};

/* One matcher pass over receives that are new or may have new candidates
 * (late_ns: the after-parent window, 0 turns that class off).
 * Idempotent; its own transaction. Returns 0 or -EIO. */
int siox_match_run(struct siox_db *db, int64_t late_ns, struct siox_match_result *r);

/* ---- net.c + session.c: connections ---------------------------------------- */

struct siox_counters {
  int64_t connections, batches_ingested, batches_duplicate, activities_ingested, bad_frames, links_implicit,
      receives_unmatched, db_errors;
  int64_t hint_queries, hint_sets_served; /* hints.c */
  int64_t connections_refused, connections_evicted, connections_timed_out; /* limits.c */
};

/* limits.c: what the server may hold (--memory-mb), see README. */
struct siox_decode_wait {
  struct siox_decode_wait *next;
  void (*start)(struct siox_decode_wait *w); /* called once a slot is ours */
};
struct siox_limits {
  size_t memory;             /* --memory-mb, bytes */
  size_t decode_mem;         /* per decode: siox_block_decode_limited's max_mem */
  int decode_slots, decodes_busy;
  struct siox_decode_wait *wait_head, *wait_tail;
  size_t input_budget, input_used; /* connection buffers beyond SIOX_CONN_SMALL_BUF */
  int max_conns;
  uv_timer_t sweep;
  int64_t last_log_ns;
  uint64_t unlogged;
  int worked, trim_due;
};

struct siox_conn;

struct siox_server {
  uv_loop_t *loop;
  uv_tcp_t listener;
  uv_timer_t match_timer;
  const struct siox_server_options *opt;
  char *token; /* NULL: none required */
  size_t token_len;
  struct siox_worker worker;
  struct siox_worker hint_worker; /* hints.c: lookups off the ingest thread */
  int hints_on, hints_inflight;
  struct siox_counters n;
  uint64_t started_ns;
  int match_pending;
  struct siox_conn *conns; /* intrusive list, for shutdown */
  struct siox_kb_thread *kb; /* kb_thread.c: job analyses (NULL: off) */
  struct siox_limits lim;
};

/* Binds and listens on opt->host:opt->port. Returns 0 or a libuv error. */
int siox_net_start(struct siox_server *s);
/* Closes the listener and every connection. */
void siox_net_stop(struct siox_server *s);

/* Per-connection state shared by net.c (bytes) and session.c (messages). */
struct siox_conn {
  uv_tcp_t tcp;
  struct siox_server *srv;
  struct siox_conn *next, *prev;
  uint8_t *buf;
  size_t len, cap;
  int hello_done, closing, reading; /* reading: the session's wish (siox_conn_read) */
  int uv_reading, write_full;        /* net.c: actually reading; replies above SIOX_CONN_WRITE_MAX */
  size_t out_bytes, granted;         /* unsent reply bytes; buffer bytes granted by limits.c */
  int64_t accepted_ns, frame_start_ns; /* CLOCK_MONOTONIC, for limits.c's timeouts */
  int hint_link; /* the daemon's hint-query connection: no batches (hints.c) */
  int pending; /* jobs in flight that point at this connection */
  struct batch_job *decoding, *decoding_tail; /* batches being decoded, in arrival order */
  uint64_t daemon_id;
  char hostname[256];
  char peer[64];
};

/* Queues a frame of type with the packed message (NULL: empty payload). */
void siox_conn_send(struct siox_conn *c, uint16_t type, const ProtobufCMessage *msg);
/* Logs reason, sends Error{reason}, closes the connection. */
void siox_conn_reject(struct siox_conn *c, const char *reason);
/* Closes without a message. Safe to call twice. */
void siox_conn_close(struct siox_conn *c);
/* Drops one job reference; frees a closed connection when none remain. */
void siox_conn_unref(struct siox_conn *c);
/* Starts or stops reading (backpressure while batches wait for the db). */
void siox_conn_read(struct siox_conn *c, int on);

/* ---- limits.c: memory and connection bounds -------------------------------- */

/* A connection's buffer up to this needs no grant; replies beyond
 * SIOX_CONN_WRITE_MAX unsent stop reading it until half has been written. */
#define SIOX_CONN_SMALL_BUF (128u << 10)
#define SIOX_CONN_WRITE_MAX (64u << 10)

/* Raises RLIMIT_NOFILE, derives the bounds from opt->memory_mb, starts the
 * timeout sweep. */
void siox_limits_init(struct siox_server *s);
void siox_limits_stop(struct siox_server *s);
/* CLOCK_MONOTONIC ns. */
int64_t siox_limits_now(void);
/* Largest frame payload c may send now (small until its Hello). */
size_t siox_limits_frame_max(const struct siox_conn *c);
/* c's buffer must hold need bytes: 0, or -ENOBUFS when the global input
 * budget cannot grant it. */
int siox_limits_grow(struct siox_conn *c, size_t need);
/* c's buffer was freed: returns its grant. */
void siox_limits_shrunk(struct siox_conn *c);
/* Calls w->start once a decode slot is free (FIFO); the slot is held until
 * siox_limits_decode_release, i.e. until the decoded block is freed. */
void siox_limits_decode_acquire(struct siox_server *s, struct siox_decode_wait *w);
void siox_limits_decode_release(struct siox_server *s);
/* A new connection c (not yet listed): 1 to keep it (possibly after closing
 * the oldest unauthenticated one), 0 to refuse it (logged). */
int siox_limits_admit(struct siox_server *s, struct siox_conn *c);

/* Handles one complete frame. Returns 0, or <0 after rejecting. */
int siox_session_frame(struct siox_conn *c, uint16_t type, const uint8_t *payload, size_t len);
/* Timer: queue a matcher pass unless one is pending. */
void siox_session_match_tick(uv_timer_t *t);

/* ---- hints.c: hint queries forwarded by daemons ---------------------------- */

/* Starts the lookup thread with its own connection. 0 or a negative errno. */
int siox_hints_start(struct siox_server *s, const char *conninfo);
/* Answers pending lookups (to open connections) and joins the thread. */
void siox_hints_stop(struct siox_server *s);
/* Accepts a daemon's hint link (Hello with hint_link set, token already
 * checked): replies HelloReply at once, no database job. Frees m. */
int siox_hints_on_hello(struct siox_conn *c, Siox__Hello *m);
/* Handles a HintQuery frame: queues a lookup, replies HintReply when done
 * (at once with status error when the lookup thread is down or backed up).
 * Returns 0, or <0 after rejecting the connection. */
int siox_hints_on_query(struct siox_conn *c, const uint8_t *payload, size_t len);

/* ---- kb_thread.c: knowledge-base analyses ----------------------------------- */

/* Starts the analysis thread with its own connection to conninfo unless
 * --no-analyze; it calls siox_kb_analyze_pending periodically. 0 or a
 * negative errno (s->kb stays NULL). */
int siox_kb_thread_start(struct siox_server *s, const char *conninfo);
/* Wakes the thread, lets a running analysis finish, joins it and frees it. */
void siox_kb_thread_stop(struct siox_server *s);

/* ---- log ------------------------------------------------------------------- */
void siox_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
