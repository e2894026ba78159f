/*
 * Internal interfaces of siox-server, one section per source file. The data
 * path: net.c reads frames -> session.c dispatches messages -> worker.c runs
 * database jobs on one thread -> ingest.c (+ objects.c) stores a batch in one
 * transaction -> match.c links sends to receives. main.c wires it together;
 * pg_embedded.c and libsiox-warehouse (siox_wh_migrate) prepare the warehouse before any of it runs.
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
  char users_conninfo[4200]; /* DIR/socket, no user: for `siox` (pg_access.c) */
  int started;        /* we own it: stop it on exit */
};

/* Initialises (first time) and starts the cluster, or adopts a running one.
 * Writes the conninfo into pg->conninfo. Returns 0 or a negative errno. */
int siox_pg_start(struct siox_pg *pg, const char *data_dir, const char *bindir);
/* Stops the cluster if siox_pg_start started or adopted it. */
void siox_pg_stop(struct siox_pg *pg);
/* For any thread whose connection failed: when the embedded cluster's
 * postmaster is gone (killed, crashed), starts it again with pg_ctl, which
 * lets PostgreSQL's crash recovery run first; a stale postmaster.pid is
 * removed. At most one attempt per 2 s, serialised across threads. Returns 0
 * when the postmaster runs (again), -ENODEV without an embedded cluster
 * (--db), or a negative errno. */
int siox_pg_revive(void);
/* Times siox_pg_revive started the postmaster again. */
int64_t siox_pg_restarts(void);

/* pg_access.c: peer authentication and the users' socket DIR/socket.
 * Writes pg_hba.conf, pg_ident.conf and the socket settings (every start). */
int siox_pg_access_write(const struct siox_pg *pg);
/* 1 when the postmaster listens on the users' socket. */
int siox_pg_access_ready(const struct siox_pg *pg);
void siox_pg_users_socket_dir(const struct siox_pg *pg, char *out, size_t cap);

/* ---- worker.c: the database thread ----------------------------------------- */

/* Everything the database thread owns: the connection and the caches that
 * mirror warehouse ids (all cleared on any rollback, since a rolled-back
 * transaction may have put ids in them that never committed). */
/* grant_queue.c: the causal links this thread stored since the last grant
 * pass (roles.c), which seeds from them instead of reading causal_links by
 * an id: pairs (parent, child) of committed transactions first, then those
 * of the open one. all: the next pass reads every link instead (at start,
 * after a reconnect, after an overflow). */
struct siox_grant_queue {
  int64_t *pairs; /* parent, child, parent, child, ... */
  size_t n, committed, cap; /* in pairs */
  int all;
};

struct siox_db {
  PGconn *conn;
  char *conninfo;
  struct siox_hmap procs;   /* (daemon, pid, nonce) -> proc_id */
  struct siox_hmap nodes;   /* (proc_id, unid) -> node_id */
  struct siox_hmap types;   /* (proc_id, local type) -> (type_id, node_id) */
  struct siox_hmap targets; /* (proc_id, target id) -> index in target_names */
  struct siox_hmap edges;   /* (from node, to node) -> seen */
  struct siox_hmap descs;   /* scope|type|value -> (desc_id, object_id) */
  struct siox_hmap owners;  /* with peers: object root -> owner shards of its global names (objects.c) */
  struct siox_uf objects;
  char **target_names;      /* pairs hwid, swid */
  size_t n_targets, cap_targets;
  struct siox_copybuf copy, copy2;
  int64_t match_watermark;  /* remote_calls.rc_id already seen by match.c */
  int activities_arrived;   /* a batch committed since the last matcher pass (1 at start) */
  int64_t parked;           /* remote calls match.c parked (waiting) and has not woken; -1: not known */
  int sql_left;             /* remote calls stored for the SQL matcher since its last pass (1 at start) */
  int64_t match_analyzed;   /* max(rc_id) when match.c last analyzed remote_calls (0 at start) */
  int64_t match_analyzed_acts; /* ... and activities */
  int resend;               /* this transaction's batch repeats stored activities: rows that hang off an
                             * activity are stored by count of identical rows (ingest.c, objects.c) */
  /* match_memory.c: the in-memory matcher's window (NULL: --match-memory
   * off), the after-parent window it applies, and what it did (written
   * here, read by status: aligned ints, atomic enough). */
  struct siox_mw *mw;
  int64_t late_ns;
  int64_t match_busy_ns; /* time spent matching, in memory and in SQL passes */
  int64_t match_cpu_ns;  /* CPU time of the same: this thread's and its local backend's (match_cpu.c) */
  int cpu_pid, cpu_pid_local; /* match_cpu.c: the backend last looked at, and whether /proc tells its time */
  int64_t links_memory;  /* links the window stored new */
  struct siox_hmap node_names; /* node_id -> (hwid, swid) ids of mw */
  struct siox_grant_queue grants; /* links stored here that no grant pass has read */
  /* rc_waiting.c: aids of activities with a receive record stored without
   * its interval (the window never saw it), until the activity arrives;
   * unknown: the map may miss some, batches ask the warehouse. */
  struct siox_hmap rc_waiting;
  int rc_waiting_unknown;
  /* --shard K/N with --shard-peer (forward.c): remote calls another shard
   * owns go to shard_outbox too, and the SQL matcher reads forwarded ones.
   * forward 0: a server on its own, or a shard without peers: as before. */
  int shard, nshards, forward;
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
  const char *name; /* in log lines: "ingest", "hints" */
  /* Written by the worker, read by status (aligned ints: atomic enough). */
  int db_ok;
  int64_t db_reconnects;
  /* Reconnect backoff (worker thread only). */
  unsigned backoff_ms, attempts;
  int64_t next_try_ms;
  struct siox_db db;
};

/* Connects to conninfo and starts the thread (name: for log lines).
 * Returns 0 or a negative errno. */
int siox_worker_start(struct siox_worker *w, uv_loop_t *loop, const char *conninfo, const char *name);
/* Queues j; jobs run one at a time, in submission order. */
void siox_worker_submit(struct siox_worker *w, struct siox_job *j);
/* Finishes queued jobs, joins the thread and closes the connection. */
void siox_worker_stop(struct siox_worker *w);
/* Drops every cache (after a rollback). */
void siox_db_caches_clear(struct siox_db *db);

/* ---- grant_queue.c: links for the next grant pass --------------------------- */

/* Notes a link (parent, child) written in the open transaction. */
void siox_grant_queue_add(struct siox_grant_queue *q, int64_t parent, int64_t child);
/* The open transaction committed / rolled back. */
void siox_grant_queue_commit(struct siox_grant_queue *q);
void siox_grant_queue_rollback(struct siox_grant_queue *q);
/* The committed pairs as two array literals "{...}" (caller frees both);
 * -ENOMEM, or 0 (*n: how many pairs). */
int siox_grant_queue_arrays(const struct siox_grant_queue *q, char **parents, char **children, size_t *n);
/* A grant pass read the first n pairs (or, with all, every link). */
void siox_grant_queue_taken(struct siox_grant_queue *q, size_t n, int all);
void siox_grant_queue_free(struct siox_grant_queue *q);

/* ---- auth.c: who is at the other end (--auth) --------------------------- */

/* The identity that owns a daemon id (table daemons, owner_*). */
struct siox_owner {
  char auth[8];   /* "munge" or "token"; "" under --auth none: no owner */
  int64_t uid;    /* munge: the uid the credential vouches for; else -1 */
  char host[256]; /* munge: the credential's origin address; token: the Hello's hostname */
};

struct siox_token {
  uint64_t daemon_id;
  unsigned char *secret;
  size_t len;
};

struct siox_auth {
  enum siox_auth_mode mode;
  const char *munge_socket; /* NULL: libmunge's default */
  struct siox_token *tokens; /* --auth token: one per daemon id */
  size_t n_tokens;
};

/* Sets up --auth (reads --token-file, warns loudly about none). 0 or <0. */
int siox_auth_init(struct siox_auth *a, const struct siox_server_options *o);
void siox_auth_free(struct siox_auth *a);
/* Authenticates a Hello: MUNGE credential made for its daemon id and
 * hostname, or that id's token. May block on munged: call it off the loop.
 * 0 with *who filled, or -EACCES with why. */
int siox_auth_hello(const struct siox_auth *a, const Siox__Hello *m, struct siox_owner *who, char *why, size_t wl);
/* A StatusRequest's credential: 0 when it is a valid MUNGE status
 * credential (any uid) or under --auth none, else -EACCES with why. May block. */
int siox_auth_status(const struct siox_auth *a, const ProtobufCBinaryData *cred, char *why, size_t wl);
int siox_owner_equal(const struct siox_owner *x, const struct siox_owner *y);
/* "munge uid 1000 at 10.0.0.7", for logs and refusals. Returns buf. */
const char *siox_owner_describe(const struct siox_owner *o, char *buf, size_t len);

/* ---- ingest.c: one batch, one transaction ------------------------------- */

struct siox_ingest_result {
  int duplicate;        /* seq <= acked_seq: acked again, nothing stored */
  uint64_t acked;       /* the daemon's acked_seq before this batch */
  uint64_t activities;  /* stored */
  char reason[256];     /* why, when the batch was rejected */
};

/* Stores batch b of a daemon (hostname from its Hello), whose block was
 * decoded into blk beforehand (decode_rc/why: siox_block_decode's result;
 * done off the database thread so that it overlaps the previous COPY).
 * Only seq == acked_seq + 1 is stored: a lower seq is a duplicate (0,
 * duplicate set), a higher one a gap (-ERANGE, reason set: an earlier batch
 * was not stored, so this one must wait for it).
 * Returns 0, -EBADMSG for a batch that can never be stored (reason set),
 * -ERANGE, or -EIO for a database failure (the daemon should retry later). */
struct siox_block;
/* The daemon's row is made with its first stored batch, owned by *owner; a
 * batch for a daemon id another identity owns is -EACCES (reason set). */
int siox_ingest_batch(struct siox_db *db, const Siox__Batch *b, const char *hostname, const struct siox_owner *owner,
                      struct siox_block *blk, int decode_rc, const char *why, struct siox_ingest_result *r);
/* Records a batch the daemon quarantined (Skip): in quarantined_batches,
 * and acked_seq = seq, under the same seq rule as a batch (duplicate,
 * -ERANGE) and the same ownership rule (-EACCES). 0, -ERANGE, -EACCES or -EIO. */
int siox_ingest_skip(struct siox_db *db, const Siox__Skip *m, const char *hostname, const struct siox_owner *owner,
                     struct siox_ingest_result *r);
/* A Hello: returns the daemon's acked_seq in *acked (0 and no row made for
 * a daemon id never stored). A row without owner (made before schema 14) is
 * claimed by *owner. -EACCES when another identity owns the id (its
 * description in other), 0, or -EIO. */
int siox_ingest_hello(struct siox_db *db, uint64_t daemon_id, const struct siox_owner *owner, uint64_t *acked,
                      char *other, size_t other_len);

/* ---- objects.c: descriptors -> canonical objects ------------------------- */

struct siox_block;
struct siox_block_descriptor;

/* Resolves every descriptor record of block blk (proc_ids: warehouse proc id
 * per block process) and COPYs its send/receive records into remote_calls,
 * with their activity's interval (plus clock_offset_ns, as ingest stores
 * it) when the activity is in blk. Must run inside the batch's transaction.
 * 0, -EBADMSG (reason) or -EIO. */
int siox_objects_ingest(struct siox_db *db, const struct siox_block *blk, const int64_t *proc_ids,
                        int64_t clock_offset_ns, uint64_t daemon_id, int64_t unc_ns, char *reason, size_t reason_len);
/* With peers: joins the objects of the mappings other shards forwarded
 * (shard_map_inbox, schema 033), in a transaction of its own. 0 or -EIO
 * (rolled back, caches cleared). */
int siox_objects_apply_maps(struct siox_db *db);

/* ---- match.c: implicit links ---------------------------------------------- */

struct siox_match_result {
  uint64_t links_new, links_updated, receives_unmatched;
};

/* match_memory.c: links a batch's remote calls in memory (db->mw), inside
 * the batch's transaction, before objects.c COPYs them. rows: n calls with
 * their interval (has_times); each gets in_memory for the COPY.
 * 0 or -EIO. */
struct siox_mw_call;
int siox_match_memory(struct siox_db *db, uint64_t daemon_id, int64_t unc_ns, struct siox_mw_call *calls, size_t n);
/* The window's ids of a node's (hwid, swid): cache, then nodes. 0 or <0. */
int siox_match_memory_node(struct siox_db *db, int64_t node_id, uint32_t *hw, uint32_t *sw);
/* Calls the SQL matcher gave an interval after they were stored (PGresult
 * rows: kind, object_id, start_ns, end_ns, offset_b, length_b): the window
 * must know they exist. */
void siox_match_memory_ghosts(struct siox_db *db, PGresult *r);

/* rc_waiting.c: activities with a receive record the window did not see
 * (stored before the activity's batch); their later receive records go to
 * the SQL matcher, which decides an activity's receive records together. */
void siox_rc_waiting_unknown(struct siox_db *db);
void siox_rc_waiting_add(struct siox_db *db, int64_t aid);
int siox_rc_waiting_has(const struct siox_db *db, int64_t aid);
void siox_rc_waiting_arrived(struct siox_db *db, int64_t aid);
int siox_rc_waiting_ask(struct siox_db *db, const int64_t *aids, size_t n);
int siox_rc_waiting_reload(struct siox_db *db);

/* match_cpu.c: the CPU time the matcher uses (db->match_cpu_ns), counted
 * between a start and its end on this thread. */
struct siox_match_cpu {
  int pid;
  int64_t thread, backend;
};
void siox_match_cpu_start(struct siox_db *db, struct siox_match_cpu *m);
void siox_match_cpu_end(struct siox_db *db, const struct siox_match_cpu *m);

/* One matcher pass over receives that are new or may have new candidates
 * (late_ns: the after-parent window, 0 turns that class off).
 * Idempotent; its own transaction. Returns 0 or -EIO. */
int siox_match_run(struct siox_db *db, int64_t late_ns, struct siox_match_result *r);
/* Whether a pass soon after a batch has work: 0 when the window decided
 * every remote call since the last pass and nothing waits to be woken
 * (the periodic pass still moves the watermark and reads the count of
 * unmatched receives). */
int siox_match_wanted(const struct siox_db *db);

/* ---- forward.c: remote calls to the shard that owns them ----------------- */

/* What status shows of the forwarder (written by its thread, read by the
 * loop: aligned ints, atomic enough). */
struct siox_forward_stats {
  int64_t pending;    /* rows in shard_outbox at the last look */
  int64_t forwarded;  /* rows the owners committed (this run) */
  int64_t peers_down; /* owners the last round could not reach */
};
struct siox_forwarder;
/* The advisory lock between forwarders' transactions on this shard
 * (shared) and its matcher's pass (exclusive): see match.c. */
#define SIOX_FORWARD_LOCK_KEY "5105292"
/* Starts the forwarder thread (its own connections: conninfo, the peers').
 * NULL and nothing started without --shard-peer. */
struct siox_forwarder *siox_forward_start(const struct siox_server_options *o, const char *conninfo);
const struct siox_forward_stats *siox_forward_stats(const struct siox_forwarder *f);
void siox_forward_stop(struct siox_forwarder *f);

/* ---- net.c + session.c: connections ---------------------------------------- */

struct siox_counters {
  int64_t connections, batches_ingested, batches_duplicate, activities_ingested, bad_frames, links_implicit,
      receives_unmatched, db_errors;
  int64_t batches_rejected, batches_out_of_order, batches_skipped, activities_skipped; /* session.c */
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
  struct siox_auth auth; /* auth.c */
  struct ssl_ctx_st *tls_ctx; /* tls.c: NULL without --tls-cert */
  struct siox_worker worker;
  struct siox_worker hint_worker; /* hints.c: lookups off the ingest thread */
  int hints_on, hints_inflight;
  struct siox_counters n;
  uint64_t started_ns;
  int match_pending;
  struct siox_conn *conns; /* intrusive list, for shutdown */
  struct siox_kb_thread *kb; /* kb_thread.c: job analyses (NULL: off) */
  struct siox_roles *roles;  /* roles.c: users' login roles and grants */
  struct siox_forwarder *fwd; /* forward.c: NULL without --shard-peer */
  struct siox_limits lim;
};

/* ---- conninfo.c: --db conninfo and DIR/conninfo ------------------------- */

/* Rebuilds conninfo `in` (keywords or URI) as keywords into out, with
 * passfile added (NULL: none) and, unless keep_secrets, without password or
 * passfile. Returns 0, 1 when a password was left out, or a negative errno. */
int siox_conninfo_rebuild(const char *in, const char *passfile, int keep_secrets, char *out, size_t cap);
/* Writes DIR/conninfo (mode 0644: it must hold no secret). */
int siox_conninfo_write(const char *dir, const char *conninfo);

/* ---- roles.c: users' warehouse roles (schema 011) ------------------------ */

/* At start: superuser roles for the Unix users owning the embedded cluster
 * (embedded != 0) and siox_admin roles for --admin-group's members.
 * Returns 0 or a negative errno (-EPERM: the database may not create roles). */
int siox_roles_prepare(PGconn *c, const char *admin_group, int embedded);
/* Every second, on the database thread: login roles for the uids of new
 * processes, then the grants of server-side rows to the users they served. */
int siox_roles_start(struct siox_server *s);
void siox_roles_stop(struct siox_server *s);

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
  /* hello_done: a Hello arrived (a second one is refused). authenticated:
   * that Hello passed --auth and the daemon id's ownership check; only
   * then are batches taken and counters shown. Unauthenticated peers get
   * nothing but Pong and a countless StatusReply. */
  int hello_done, authenticated, closing, reading; /* reading: the session's wish (siox_conn_read) */
  int uv_reading, write_full;        /* net.c: actually reading; replies above SIOX_CONN_WRITE_MAX */
  size_t out_bytes, granted;         /* unsent reply bytes; buffer bytes granted by limits.c */
  int64_t accepted_ns, frame_start_ns; /* CLOCK_MONOTONIC, for limits.c's timeouts */
  int hint_link; /* the daemon's hint-query connection: no batches (hints.c) */
  int pending; /* jobs in flight that point at this connection */
  /* Set on the database thread when a batch (or Skip) of this connection
   * failed: every later job of the connection is then skipped unstored and
   * unacked, so nothing is stored past the gap (the daemon resends from
   * acked_seq + 1). Read and written only on the database thread. */
  int db_failed;
  struct batch_job *decoding, *decoding_tail; /* batches being decoded, in arrival order */
  uint64_t daemon_id;
  char hostname[256];
  struct siox_owner owner; /* who authenticated (valid when authenticated) */
  struct siox_tls_pipe *tls; /* tls.c: NULL on a plaintext connection */
  char peer[64];
};

/* Queues a frame of type with the packed message (NULL: empty payload). */
void siox_conn_send(struct siox_conn *c, uint16_t type, const ProtobufCMessage *msg);
/* The peer broke the protocol: logs reason, counts bad_frames, sends
 * Error{reason}, closes the connection. Nothing when already closing. */
void siox_conn_reject(struct siox_conn *c, const char *reason);
/* Not a protocol error (the database failed, or a batch's content was
 * refused): logs, sends Error{reason, kind, seq}, closes; bad_frames is
 * left alone. Nothing when already closing. */
void siox_conn_refuse(struct siox_conn *c, Siox__ErrorKind kind, uint64_t seq, const char *reason);
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

/* ---- tls.c: TLS on connections (hooks for net.c) --------------------------- */

/* Loads --tls-cert/--tls-key; without them refuses (-EPERM) to listen
 * beyond loopback unless --insecure. 0 or a negative errno (logged). */
int siox_tls_start(struct siox_server *s);
void siox_tls_stop(struct siox_server *s);
/* A new connection's TLS state when the server runs TLS. 0 or -ENOMEM. */
int siox_tls_accept(struct siox_conn *c);
void siox_tls_conn_free(struct siox_conn *c);
/* n bytes from the socket: their plaintext is appended to c->buf, and
 * *out (malloc'd, may be NULL) holds bytes to send back (handshake).
 * 0, or <0 (logged) when the peer does not speak TLS properly: close. */
int siox_tls_read(struct siox_conn *c, const uint8_t *raw, size_t n, uint8_t **out, size_t *outlen);
/* Encrypts a frame into *out (malloc'd). 0 or <0. */
int siox_tls_seal(struct siox_conn *c, const uint8_t *plain, size_t n, uint8_t **out, size_t *outlen);

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

/* PostgreSQL array literal "{a,b,...}" of n int64 values, stride bytes
 * apart (a field of an array of structs); malloc'ed, NULL without memory. */
char *siox_int_array(const void *v, size_t n, size_t stride);

#endif
