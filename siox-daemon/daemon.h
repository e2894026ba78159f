/*
 * siox-daemon internals: the pieces of the node daemon and how they meet.
 * Data path: listener -> session (frames) -> walker (records) -> batcher
 * (struct siox_block) -> spool (disk) -> uplink (TCP to siox-server).
 * Not a public API: nothing outside siox-daemon/ (and its tests) includes it.
 */
#ifndef SIOX_DAEMON_H
#define SIOX_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "siox_block.h"
#include "siox_client_wire.h"

#define SIOX_DAEMON_VERSION 1u

/* ---------------------------------------------------------------------------
 * Configuration (main.c fills it from the command line)
 * ------------------------------------------------------------------------- */
enum daemon_auth { DAEMON_AUTH_MUNGE, DAEMON_AUTH_TOKEN, DAEMON_AUTH_NONE };

struct daemon_config {
  const char *socket_path;
  const char *server_list;  /* --server A,B,...: route.c picks one by daemon id */
  char server_host[256];    /* the one this daemon uses */
  int server_port;
  const char *state_dir;
  uint64_t spool_max_bytes;
  uint32_t batch_activities;
  uint32_t batch_ms;
  const char *token_file;
  enum daemon_auth auth;    /* --auth (credential.c) */
  const char *munge_socket; /* NULL: libmunge's default */
  bool tls;                 /* --tls: TLS to the server (tls_link.c) */
  const char *tls_ca;       /* --tls-ca: CA file (NULL: system CAs) */
  const char *pid_file;
  bool hints_off;        /* --hints off: answer every hint query "disabled" */
  uint32_t hints_ttl_ms; /* --hints-ttl: cache lifetime of server answers */
  uint32_t memory_mb;    /* --memory-mb: half of it bounds client buffers (budget.c) */
  int64_t test_clock_shift_ns; /* --test-clock-shift-ms: this host's clock is wrong by it (tests only) */
  uint32_t test_kill_frames;   /* --test-kill-after-frames: SIGKILL before an ACK (tests only) */
  bool test_kill_sealed;       /* --test-kill-after-seal: ... after the frame's batch is spooled */
};

/* ---------------------------------------------------------------------------
 * Record walker (walker.c): validates and decodes the records of one BATCH.
 * ------------------------------------------------------------------------- */

/* One record, decoded in place: pointers into the frame payload. */
struct cw_rec {
  uint16_t type; /* enum siox_cw_rec_type */
  uint32_t a;
  const void *fixed;   /* the type's fixed struct after the header */
  const char *str[3];  /* strings in record order (NODE: hwid swid iid ...) */
  uint32_t len[3];
  const struct siox_cw_attr *attrs; /* ACTIVITY: nattr entries */
  uint32_t nattr;
  const struct siox_cw_desc_value *dv[2]; /* DESC values */
  const char *dv_bytes[2];
};

typedef int (*cw_visit_fn)(void *ctx, const struct cw_rec *r);

/* Walks `len` bytes of records at p (8-byte aligned). Every record is checked
 * against the remaining bytes and the wire bounds before visit (may be NULL:
 * validate only) sees it. Returns 0, a visitor's negative return, or -EBADMSG
 * with *why naming the first violation (static string). */
int cw_walk(const uint8_t *p, size_t len, cw_visit_fn visit, void *ctx, const char **why);

/* Checks a client frame header: magic, version, known type, length bound.
 * Returns 0 or -EBADMSG with *why. */
int cw_frame_check(const struct siox_cw_frame_hdr *h, const char **why);

/* ---------------------------------------------------------------------------
 * Clock conversion (clock_conv.c): client TSC -> ns.
 * ------------------------------------------------------------------------- */
struct clock_conv {
  bool tsc;       /* false: values are ns already */
  uint64_t tsc0;  /* anchor pair */
  int64_t ns0;
  int64_t mult;   /* ns per tick, CLOCK_CONV_SHIFT fraction bits */
  int64_t host_shift; /* added to every result: the host clock's test shift */
};
#define CLOCK_CONV_SHIFT 40

/* Prepares conversion between the HELLO pair (tsc0, ns0) and a BATCH pair.
 * Returns -EINVAL when the pairs give no slope (tsc_ref <= tsc0); the
 * converter then maps every tick to ns_ref. */
int clock_conv_init(struct clock_conv *c, uint32_t clock_flags, uint64_t tsc0, int64_t ns0, uint64_t tsc_ref,
                    int64_t ns_ref);

/* The client's ns values come from this host's CLOCK_REALTIME: a host whose
 * clock is wrong by N shows N in every one of them, in HELLO and BATCH pairs
 * as in ns-mode values. --test-clock-shift-ms makes the daemon such a host,
 * so the converter adds the shift to each result (0 outside tests). */
static inline void clock_conv_shift(struct clock_conv *c, int64_t host_shift_ns) {
  c->host_shift = host_shift_ns;
}

static inline int64_t clock_conv_ns(const struct clock_conv *c, uint64_t t) {
  if (!c->tsc)
    return (int64_t)(t + (uint64_t)c->host_shift);
  /* Round to nearest: the truncated slope would bias one way. */
  __int128 d = (__int128)(int64_t)(t - c->tsc0) * c->mult + ((__int128)1 << (CLOCK_CONV_SHIFT - 1));
  /* Unsigned add: hostile input may wrap, but never invokes UB. */
  return (int64_t)((uint64_t)c->ns0 + (uint64_t)c->host_shift + (uint64_t)(int64_t)(d >> CLOCK_CONV_SHIFT));
}

/* ---------------------------------------------------------------------------
 * Batcher (batcher.c): records of all clients -> one open struct siox_block.
 * ------------------------------------------------------------------------- */
struct client_ident { /* who a session is: kernel's word plus HELLO */
  uint32_t pid, uid;
  uint64_t nonce;
  const char *host, *exe, *args, *job;
};

/* job_id.c: the job id of a client, from its cgroup or environment. */
enum job_source { JOB_NONE, JOB_CGROUP, JOB_ENVIRON, JOB_CLAIMED, JOB_EXITED };
#define JOB_ID_MAX 512
/* Writes the client's job id to out ("" for none, "claimed:<claim>" when
 * only the HELLO of a live process says so, the claim itself for a process
 * that has exited) and returns where it came from. Not reentrant (one
 * static read buffer): the loop thread's. */
enum job_source job_id_of_peer(uint32_t pid, uint32_t uid, const char *claimed, char *out, size_t cap);
/* Parsers, for the unit test: 0 with the id in out, or -ENOENT. */
int job_id_from_cgroup(const char *text, char *out, size_t cap);
int job_id_from_environ(const char *env, size_t len, char *out, size_t cap);

struct batcher {
  struct siox_block block;
  uint64_t generation; /* bumped on every seal: sessions re-register */
  uint64_t activities; /* in the open block */
  const char *why;     /* the walker's reason when batcher_add_records said -EBADMSG */
};

/* What a session keeps so that the batcher can find its process entry,
 * and its client's validation state (validate.c). */
struct batcher_slot {
  uint64_t generation;
  uint32_t proc;
  struct validate_state *vs;   /* owned: validate_free() when the session ends */
  uint64_t dropped_validation; /* activity records of this client dropped by validate.c */
  uint64_t dropped_records;    /* all its records dropped by validate.c */
};

/* ---------------------------------------------------------------------------
 * Validation (validate.c): the server's per-record rules, applied to each
 * client record before it enters the batch, so that a record the server
 * would refuse (and with it the whole batch of every client) is dropped
 * alone, counted and attributed to its client.
 * ------------------------------------------------------------------------- */
struct validate_state;
struct daemon_counters;
/* NULL when the record may enter the batch; else why not (static). Records
 * the registrations (nodes, types, targets) of the client in slot->vs,
 * allocating it on first use. A refused registration is not recorded. */
const char *validate_record(struct batcher_slot *slot, const struct cw_rec *r);
void validate_free(struct batcher_slot *slot);
/* The client's recorded registrations as opaque keys (*keys owned by the
 * caller, NULL when there are none) and back: the open-batch journal
 * carries them so that a replay validates as the live daemon did. */
size_t validate_export(const struct batcher_slot *slot, uint64_t **keys);
int validate_import(struct batcher_slot *slot, const uint64_t *keys, size_t n);

void batcher_init(struct batcher *b);
void batcher_destroy(struct batcher *b);
/* Adds the records of one BATCH payload for client `who`, walking (and so
 * checking) each before it is added; a malformed one makes it return
 * -EBADMSG with nothing of the payload added. A record that fails
 * validate_record is dropped alone, counted in *ctr and in the slot (it
 * reaches the warehouse with the client's next Stats) and logged with the
 * client's pid and uid. */
int batcher_add_records(struct batcher *b, struct batcher_slot *slot, const struct client_ident *who,
                        const struct clock_conv *cc, const uint8_t *recs, size_t len, struct daemon_counters *ctr);
int batcher_add_stats(struct batcher *b, struct batcher_slot *slot, const struct client_ident *who,
                      const struct siox_cw_stats *st);
/* Puts a process's loss accounting into the open block: the record at
 * *idx when *gen is this block's generation (overwritten, so a block holds
 * one record per session however often it reports), else a new one. */
int batcher_put_stats(struct batcher *b, struct batcher_slot *slot, const struct client_ident *who,
                      const struct siox_block_stats *vals, uint64_t *gen, uint32_t *idx);
/* Empties the block for the next batch (after the caller encoded it). */
void batcher_reset(struct batcher *b);

/* ---------------------------------------------------------------------------
 * Spool (spool.c): <state-dir>/spool/<seq>.sxb, one file per sealed batch.
 * ------------------------------------------------------------------------- */
struct spool_entry {
  uint64_t seq;
  uint64_t bytes;   /* file size */
  bool quarantined; /* moved to <state-dir>/quarantine: send a Skip for it */
};

struct spool {
  char *dir;                 /* <state-dir>/spool */
  char *state_path;          /* <state-dir>/seq: highest acknowledged seq */
  uint64_t max_bytes;
  uint64_t bytes;            /* sum over entries */
  struct spool_entry *ents;  /* ring, ascending seq */
  size_t head, n, cap;
  uint64_t next_seq;         /* for the next sealed batch */
  uint64_t state_seq;        /* persisted floor of next_seq - 1 */
};

/* Header of a spool file, then block_len bytes of lz4 block. */
struct spool_hdr {
  uint32_t magic; /* SPOOL_MAGIC */
  uint32_t version;
  uint64_t seq;
  uint32_t activities;
  uint32_t raw_bytes;
  uint32_t block_len;
  uint32_t pad;
};
#define SPOOL_MAGIC 0x31425853u /* "SXB1" */
#define SPOOL_VERSION 1u

/* A sealed batch in memory (owned by whoever holds it; spool_batch_free). */
struct spool_batch {
  struct spool_hdr h;
  uint8_t *block;
};

/* Opens (creating) dir, scans existing <seq>.sxb files in order and derives
 * next_seq from them and the state file. s->dir is owned by the spool. */
int spool_open(struct spool *s, const char *state_dir, uint64_t max_bytes);
void spool_close(struct spool *s);
/* Writes batch (seq already set) durably (tmp, fdatasync, rename); returns
 * 0 or -errno. Touches no member of s: the seal runs it off the loop
 * (seal.c). spool_commit then enters the file into the spool (loop only). */
int spool_write_file(const struct spool *s, const struct spool_batch *b);
int spool_commit(struct spool *s, const struct spool_batch *b);
int spool_write(struct spool *s, const struct spool_batch *b); /* both, on the loop */
/* Reads batch seq into *out (out->block malloc'd, caller frees). */
int spool_read(const struct spool *s, uint64_t seq, struct spool_batch *out);
/* Unlinks every batch with seq <= upto (acknowledged). Returns count. */
int spool_ack(struct spool *s, uint64_t upto);
bool spool_full(const struct spool *s);
/* Moves batch seq to qdir/<seq>.sxb; its entry stays, marked quarantined
 * (it no longer counts against max_bytes), until acked. 0 or -errno. */
int spool_quarantine(struct spool *s, uint64_t seq, const char *qdir);
/* At start: adds a quarantined entry for seq (above the acked floor) in
 * seq order. 0 or -ENOMEM. */
int spool_add_quarantined(struct spool *s, uint64_t seq);
static inline const struct spool_entry *spool_at(const struct spool *s, size_t i) {
  return &s->ents[(s->head + i) % s->cap];
}
void spool_batch_free(struct spool_batch *b);

/* ---------------------------------------------------------------------------
 * Clock sync (clock_sync.c): daemon <-> server offset, NTP style.
 * ------------------------------------------------------------------------- */
#define CLOCK_SYNC_SAMPLES 8
/* Samples taken, 10 ms apart, at the first connection before any batch is
 * sent (uplink.c): one sample may have met a busy server or daemon loop. */
#define CLOCK_SYNC_FIRST 8
/* Bound on how fast two hosts' clocks drift apart, in ns per s (ppm): a
 * sample's uncertainty grows by it with age. Crystal tolerance without NTP
 * discipline is tens of ppm; 20 is generous for NTP-run hosts. */
#define CLOCK_DRIFT_PPM 20
struct clock_sync {
  int64_t offset[CLOCK_SYNC_SAMPLES];
  uint64_t rtt[CLOCK_SYNC_SAMPLES];
  int64_t t[CLOCK_SYNC_SAMPLES]; /* t4: when the sample was taken (host clock) */
  unsigned n, next;
  /* The best sample seen, kept after the ring forgot it. */
  bool kept_valid;
  int64_t kept_offset, kept_t;
  uint64_t kept_rtt;
};
void clock_sync_add(struct clock_sync *c, int64_t t1, int64_t t2, int64_t t3, int64_t t4);
/* Best estimate at host time now: the sample (of the ring and the kept
 * best) whose half round trip plus drift since it was taken is smallest;
 * that sum is the uncertainty. Returns false when there is no sample. */
bool clock_sync_best(const struct clock_sync *c, int64_t now, int64_t *offset, uint64_t *uncertainty);
int64_t clock_realtime_ns(void);
/* What this host's clock shows: CLOCK_REALTIME plus --test-clock-shift-ms.
 * The ping exchange and client times use it; durations and timeouts, which
 * any constant shift leaves alone, use clock_realtime_ns. */
struct daemon;
int64_t clock_host_ns(const struct daemon *d);

/* ---------------------------------------------------------------------------
 * Hint cache (hint_cache.c): server answers by (uid, exe, args hash, path,
 * component), for a short TTL.
 * ------------------------------------------------------------------------- */
struct hint_answer {
  struct siox_cw_hint_reply r;
  struct siox_cw_hint hints[SIOX_CW_MAX_HINTS];
};

struct hint_cache_entry {
  struct hint_cache_entry *next;
  char *key; /* owned */
  size_t key_len;
  int64_t expires_ms;
  struct hint_answer ans;
};

struct hint_cache {
  struct hint_cache_entry *head; /* newest first */
  size_t n, max;
  uint64_t ttl_ms; /* 0: nothing is cached */
};

/* Builds the cache key of a query into *key (malloc'd, caller frees). */
int hint_cache_key(uint32_t uid, const char *job, const char *exe, const char *args, const char *path,
                   const char *component,
                   char **key, size_t *len);
void hint_cache_init(struct hint_cache *c, uint64_t ttl_ms, size_t max);
void hint_cache_destroy(struct hint_cache *c);
/* The live answer for key, or NULL (expired entries are dropped first).
 * The pointer is valid until the next put or destroy. */
const struct hint_answer *hint_cache_get(struct hint_cache *c, const char *key, size_t len, int64_t now_ms);
/* Stores a copy of *a for ttl_ms, evicting the oldest entry when full.
 * Returns 0 or -ENOMEM. */
int hint_cache_put(struct hint_cache *c, const char *key, size_t len, const struct hint_answer *a, int64_t now_ms);

/* ---------------------------------------------------------------------------
 * The daemon (daemon.c and friends).
 * ------------------------------------------------------------------------- */
struct daemon_counters {
  uint64_t clients, activities_received, batches_sealed, batches_acked, bad_frames;
  uint64_t records_dropped_validation, activities_dropped_validation; /* validate.c */
  uint64_t batches_quarantined, activities_quarantined; /* quarantine.c */
  uint64_t client_dropped_closed; /* dropped counts of sessions already gone */
  uint64_t dropped_spool;         /* activities discarded while the spool was full */
  uint64_t client_dropped_exit;   /* clients' dropped_exit, as reported (loss.c) */
  uint64_t journal_replayed;      /* activities replayed from journals at start */
  uint64_t frames_resent_dropped; /* client frames taken before, sent again: dropped (frameseq.c) */
  uint64_t loss_files;            /* loss files of exited clients taken (loss.c) */
};

/* budget.c: bytes of partial client frames, all sessions together. */
struct client_budget {
  size_t limit, used;
  uint64_t refused, waits; /* large frames refused; times a session had to wait */
  unsigned waiting;        /* sessions not read until budget frees */
  uv_timer_t sweep;        /* frame timeouts */
  int64_t last_log_ns;
  uint64_t unlogged;
};

/* ---------------------------------------------------------------------------
 * Loss accounting (loss.c) and the open-batch journal (journal.c).
 * ------------------------------------------------------------------------- */
/* Where the daemon dropped a client's activity. */
enum loss_place {
  LOSS_SPOOL,   /* spool full (or unwritable): discarded, counted */
  LOSS_INVALID, /* a record the daemon's validation refused */
};

/* What a session (or a replayed one) keeps for loss accounting and the
 * journal. */
struct loss_state {
  uint64_t sid;     /* journal session id, unique in this daemon run */
  uint64_t jnl_gen; /* batcher generation whose journal has our IDENT */
  uint32_t clock_flags;
  uint64_t tsc0;
  int64_t ns0;
  uint64_t stats_gen; /* batcher generation holding our stats record ... */
  uint32_t stats_idx; /* ... at this index */
  struct siox_block_stats cur; /* client counters + daemon deltas */
};

struct daemon;
struct session;
/* A session said HELLO: gives it a journal id and its clock pair. */
void loss_hello(struct daemon *d, struct loss_state *ls, uint32_t clock_flags, uint64_t tsc0, int64_t ns0);
/* A STATS frame (24 or 32 bytes) from the client; -EBADMSG on a bad size. */
int loss_on_stats(struct daemon *d, struct loss_state *ls, struct batcher_slot *slot, const struct client_ident *who,
                  const uint8_t *p, uint32_t len, uint64_t *client_dropped);
/* n of the client's activities were dropped in the daemon at `place`. */
int loss_drop(struct daemon *d, struct loss_state *ls, struct batcher_slot *slot, const struct client_ident *who,
              enum loss_place place, uint64_t n);
/* A client's BATCH with frame seq `seq` (0: none) taken while the spool is
 * full: its activities counted as dropped (LOSS_SPOOL), its seq journaled
 * and taken (frameseq.c), so that a copy is not counted again. */
int loss_drop_frame(struct daemon *d, struct loss_state *ls, struct batcher_slot *slot, const struct client_ident *who,
                    uint32_t seq, const uint8_t *recs, size_t len);
/* ACTIVITY records among `len` bytes of validated records. */
uint64_t loss_count_activities(const uint8_t *recs, size_t len);
/* Tells the client how much of its stream is consumed (never blocks: an
 * ACK that does not fit is skipped, the next one covers it). */
bool loss_ack(uv_stream_t *client, uint64_t consumed); /* false: skipped */
/* <socket>.lost/: loss files of clients that exited without a daemon. */
int loss_dir_start(struct daemon *d);
void loss_dir_scan(struct daemon *d);
void loss_dir_stop(struct daemon *d);

/* Appends one record of a session to the open batch's journal (so a kill
 * -9 keeps it), before the client's ACK. Errors are logged, not fatal.
 * journal_session goes before the batch takes a BATCH (the session's
 * IDENT and the registrations its records were validated against),
 * journal_batch after the batch took it (a frame refused half way is then
 * not journaled: a replay would stop at it). */
void journal_session(struct daemon *d, struct loss_state *ls, const struct batcher_slot *slot,
                     const struct client_ident *who);
void journal_batch(struct daemon *d, struct loss_state *ls, const struct batcher_slot *slot,
                   const struct client_ident *who, uint32_t seq, const uint8_t *p, uint32_t len);
/* A BATCH with frame seq `seq` (not 0) taken without its records (spool
 * full: discarded and counted): only its seq is journaled. */
void journal_taken(struct daemon *d, struct loss_state *ls, const struct batcher_slot *slot,
                   const struct client_ident *who, uint32_t seq);
void journal_stats(struct daemon *d, struct loss_state *ls, const struct batcher_slot *slot,
                   const struct client_ident *who);
/* Between hold and commit (one client read, before its ACK) the records
 * are collected and written with one writev(): a short process's read made
 * five writev() calls (IDENT, REGS, two BATCH, STATS), each later one two. */
void journal_hold(struct daemon *d);
void journal_commit(struct daemon *d);
/* Writes what is held now (holding goes on). A held BATCH payload is not
 * copied but referenced: the caller keeps journal_batch's bytes unmoved
 * until this or journal_commit. */
void journal_flush(struct daemon *d);
/* The batch with this seq is spooled: its journal is no longer needed. */
void journal_sealed(struct daemon *d, uint64_t seq);
/* At start, before clients: replays journals of batches never sealed into
 * the open batch and seals it. Returns 0 or -errno. */
int journal_replay(struct daemon *d);
void journal_close(struct daemon *d);

/* frameseq.c: the highest frame seq (siox_cw_frame_hdr.seq) taken per
 * client process incarnation (uid, nonce), so that a frame a client sends
 * again after a reconnect, a kill -9 of the daemon or in a loss file is
 * dropped when it was taken before. seq 0 (none) is never resent. */
bool frameseq_resent(struct daemon *d, uint32_t uid, uint64_t nonce, uint32_t seq); /* counted, logged */
void frameseq_take(struct daemon *d, uint32_t uid, uint64_t nonce, uint32_t seq);
/* A session of nonce began / ended (clean: EOF after whole frames, all acked). */
void frameseq_open(struct daemon *d, uint32_t uid, uint64_t nonce);
void frameseq_close(struct daemon *d, uint32_t uid, uint64_t nonce, bool clean);
/* The table as bytes (malloc'd in *out; 0: empty, -ENOMEM: not made, and
 * the journal that holds the seqs must stay), for the journal to carry
 * across seals; and taken back from them at start (-EBADMSG). */
ssize_t frameseq_export(struct daemon *d, uint8_t **out);
int frameseq_import(struct daemon *d, const uint8_t *p, size_t len);
void frameseq_free(struct daemon *d);

struct session;
struct uplink;
struct hints;

/* The batch being sealed (seal.c): encoded and spooled on libuv's thread
 * pool while the loop goes on reading clients into the next open batch. */
struct sealing {
  uv_work_t work;
  struct siox_block block; /* swapped with the batcher's open block at the seal */
  struct spool_batch sb;   /* h.seq and h.activities set at the seal */
  int rc;                  /* of the pool's part */
  bool busy;               /* taken, not yet spooled (in the pool or waiting for a retry) */
  bool queued;             /* in the pool */
  bool again;              /* the open batch asked to be sealed meanwhile */
};

struct daemon {
  uv_loop_t *loop;
  struct daemon_config cfg;
  struct daemon_counters ctr;
  uint64_t daemon_id;
  char hostname[256];
  uint8_t *token;
  size_t token_len;
  struct ssl_ctx_st *tls_ctx; /* tls_link.c: NULL without --tls */
  int64_t start_ns;

  uv_pipe_t listener;
  struct session *sessions; /* intrusive list */
  bool reading_paused;      /* spool full: client activities discarded, counted */
  bool spool_failed;        /* last seal could not be spooled: retrying */

  struct client_budget budget;
  struct batcher batcher;
  struct siox_block_encoder *encoder; /* sealing reuses its buffers (seal.c's thread while busy) */
  struct sealing sealing;             /* seal.c */
  uv_timer_t batch_timer;
  struct spool spool;
  struct uplink *uplink;
  struct hints *hints;         /* hints.c */
  struct hint_link *hint_link; /* hint_link.c */
  struct journal *journal;     /* journal.c */
  struct loss_dir *loss_dir;   /* loss.c */
  struct frameseq *frameseq;   /* frameseq.c */
  struct clock_sync clock;

  uv_signal_t sig_term, sig_int;
  uv_timer_t stop_timer;
  bool stopping;
  bool closed; /* close_all ran */
  int64_t stop_started_ns;
  uint32_t test_frames;   /* --test-kill-after-frames: activity-less frames taken */
  uint64_t test_kill_seq; /* --test-kill-after-seal: the batch that took the last of them */
};

/* daemon.c */
/* Tests only (--test-kill-after-frames): SIGKILL once the frames are taken
 * (sealed_seq 0: at an ACK) or their batch is spooled (--test-kill-after-seal:
 * at journal_sealed). Returns true while ACKs are withheld. */
bool daemon_test_kill(struct daemon *d, uint64_t sealed_seq);
int daemon_start(struct daemon *d, uv_loop_t *loop, const struct daemon_config *cfg);
void daemon_close(struct daemon *d); /* after the loop has stopped */
void daemon_arm_batch_timer(struct daemon *d);
/* seal.c. Seals the open batch (if any): encode, spool, hand to the
 * uplink, off the loop (returns at once; a seal busy already seals it
 * after itself). daemon_seal_now does it all before it returns (the
 * journal replay at start): 0 once spooled. idle: nothing open, nothing
 * being sealed. */
int daemon_seal(struct daemon *d);
int daemon_seal_now(struct daemon *d);
bool daemon_seal_idle(const struct daemon *d);
void daemon_seal_free(struct daemon *d);
/* Called when records were added: seals when full, arms the timer. */
void daemon_after_add(struct daemon *d);
/* Re-evaluates spool backpressure: pauses or resumes client reading. */
void daemon_backpressure(struct daemon *d);
uint64_t daemon_client_dropped(const struct daemon *d);

/* state.c: persistent daemon id. */
int state_daemon_id(const char *state_dir, uint64_t *id);
int state_mkdirs(const char *path, unsigned mode);
/* Reads up to size bytes of fd (closed in any case) into *out (malloc'd,
 * caller frees), *len what was there. 0 or a negative errno. */
int state_read_fd(int fd, size_t size, uint8_t **out, size_t *len);

/* listener.c */
int listener_start(struct daemon *d);
void listener_stop(struct daemon *d);

/* session.c */
int session_accept(struct daemon *d, uv_stream_t *server);
void sessions_close_all(struct daemon *d);
/* Resumes the sessions that waited for client buffer budget. */
void sessions_budget_resume(struct daemon *d);
/* Closes sessions whose frame in progress has not completed within 30 s of
 * being read (now: clock_realtime_ns). */
void sessions_expire(struct daemon *d, int64_t now);

/* budget.c: the client buffer bound. */
void budget_init(struct daemon *d);
void budget_close(struct daemon *d);
/* A session's buffer grows from old_cap to new_cap for a frame of frame
 * bytes: 0 (taken), -ENOBUFS (a large frame that must be refused) or
 * -EAGAIN (wait until budget_put frees some). Logged, at most once a second. */
int budget_take(struct daemon *d, size_t old_cap, size_t new_cap, size_t frame, uint32_t pid);
/* cap bytes of buffer were freed. */
void budget_put(struct daemon *d, size_t cap);

/* Sends one frame of type with the n payload bytes (copied) to the
 * session's client and closes the connection once it is written. */
void session_reply_and_close(struct session *s, uint16_t type, const void *payload, size_t n);
/* Marks s as waiting for a hint answer: closing it tells hints.c. */
void session_set_hint_waiting(struct session *s, bool waiting);

/* hints.c: hint queries of MPI_File_open (SIOX_CW_HINTS connections),
 * answered from the cache or forwarded to the server over the uplink. */
int hints_start(struct daemon *d);
void hints_stop(struct daemon *d); /* closes its timer */
void hints_free(struct daemon *d); /* after the loop ran the closes */
/* Handles a query from session s of client uid; answers now or later
 * (session_reply_and_close). Returns 0 or -EBADMSG for a malformed query. */
/* job: the asking process's job id (job_id.c), "" for none; it is part of
 * the question, as an experiment hint set goes to one run. */
int hints_query(struct daemon *d, struct session *s, uint32_t uid, const char *job, const uint8_t *p,
                uint32_t len);
void hints_on_reply(struct daemon *d, const uint8_t *p, size_t n); /* HintReply from the server */
void hints_link_lost(struct daemon *d); /* hint link lost: pending get "server down" */
void hints_session_gone(struct daemon *d, struct session *s);
/* Counters for status: queries, answered from cache, forwarded, and
 * whether the hint link is connected. */
void hints_counters(const struct daemon *d, int64_t out[4]);

/* status.c: StatusReply payload (malloc'd, caller frees). */
int status_build(struct daemon *d, uint8_t **out, size_t *out_len);

/* quarantine.c: batches the server rejected as never acceptable. */
/* Moves spooled batch seq to <state-dir>/quarantine/<seq>.sxb with the
 * server's reason in <seq>.reason, counts and logs it. 0 or -errno. */
int quarantine_batch(struct daemon *d, uint64_t seq, const char *reason);
/* At start: puts quarantined batches not yet skipped (above the acked
 * floor) back in the spool's order, so that their Skips are sent. */
int quarantine_load(struct daemon *d);
/* Activities and reason of quarantined batch seq, for its Skip. 0 or -errno. */
int quarantine_info(const struct daemon *d, uint64_t seq, uint32_t *activities, char *reason, size_t n);
/* credential.c: what proves the daemon's identity in each Hello (--auth).
 * Sets m's token or munge_cred; *cred (a MUNGE credential, NULL for the
 * other methods) must stay alive until m is packed, then be freed. Encoding
 * asks munged and may block briefly; it happens once per connection.
 * Returns 0, or -EACCES after logging why. */
struct Siox__Hello;
int daemon_hello_credential(const struct daemon *d, struct Siox__Hello *m, char **cred);

/* tls_link.c: TLS hooks of uplink.c and hint_link.c (no-ops without --tls). */
struct siox_tls_pipe;
int tls_link_init(struct daemon *d); /* the client context; 0 or <0 (logged) */
void tls_link_free(struct daemon *d);
/* A connected socket's TLS state (*p stays NULL without --tls) and the
 * handshake bytes to send first (*hs malloc'd, may be NULL). 0 or <0. */
int tls_link_open(const struct daemon *d, struct siox_tls_pipe **p, uint8_t **hs, size_t *hslen);
void tls_link_close(struct siox_tls_pipe **p);
/* on_alloc for a TLS connection: a scratch buffer for ciphertext. */
void tls_link_alloc(uv_buf_t *out);
/* on_read: frees buf, appends the plaintext to rbuf, returns bytes to send
 * back in *out (malloc'd, may be NULL). 0, or <0 (logged): drop. */
int tls_link_input(struct siox_tls_pipe *p, const uv_buf_t *buf, ssize_t n, uint8_t **rbuf, size_t *rlen,
                   size_t *rcap, uint8_t **out, size_t *outlen);
/* true once the handshake is done (always without TLS). */
bool tls_link_ready(const struct siox_tls_pipe *p);
/* Encrypts a frame into *out (malloc'd). 0 or <0. */
int tls_link_seal(struct siox_tls_pipe *p, const uint8_t *plain, size_t n, uint8_t **out, size_t *outlen);

/* uplink.c */
int uplink_start(struct daemon *d);
void uplink_kick(struct uplink *u);      /* new spooled batch to send */
bool uplink_connected(const struct uplink *u);
bool uplink_drained(const struct uplink *u); /* nothing unacked */
void uplink_offer(struct uplink *u, const struct spool_batch *b); /* just sealed */

/* hint_link.c: a second TCP connection to the server for hint queries only.
 * The uplink's stream carries batches, and the server stops reading it
 * while batches wait for the database (backpressure): a query behind them
 * would wait that long. This link has nothing in front of its queries. */
struct hint_link;
int hint_link_start(struct daemon *d);
void hint_link_stop(struct hint_link *l); /* closes its handles */
void hint_link_free(struct hint_link *l); /* after the loop ran the closes */
/* Sends one message frame; -ENOTCONN unless connected and past Hello. */
struct ProtobufCMessage;
int hint_link_send(struct hint_link *l, uint16_t type, const struct ProtobufCMessage *msg);
bool hint_link_connected(const struct hint_link *l);
void uplink_stop(struct uplink *u);  /* closes its handles */
void uplink_free(struct uplink *u);  /* after the loop ran the closes */

/* route.c: --server lists (HOST:PORT[,HOST:PORT...]). */
int daemon_server_count(const char *list);
int daemon_server_entry(const char *list, int i, char *host, size_t cap, int *port);
int daemon_server_check(const char *list);
/* Sets c->server_host/port to entry (daemon_id mod count) of c->server_list. */
int daemon_route(struct daemon_config *c, uint64_t daemon_id);

#endif
