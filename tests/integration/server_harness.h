/*
 * Test and benchmark harness for siox-server: start a real server on a free
 * loopback port with a temporary data dir (embedded PostgreSQL), talk to it
 * as a daemon would (frames, Hello, Batch, Ack), and tear everything down by
 * recorded pids. Used by tests/integration/server_*.c and bench/bench_server.c.
 */
#ifndef SIOX_SERVER_HARNESS_H
#define SIOX_SERVER_HARNESS_H

#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "siox.pb-c.h"
#include "siox_block.h"

struct harness {
  char dir[256];      /* temp dir: data/, server.log */
  char data_dir[300];
  char log[300];
  const char *bin;
  int port;
  pid_t pid;          /* 0: not running */
  char munge_sock[300]; /* DIR/munge/munge.sock of the private munged */
  pid_t munged_pid;   /* 0: none */
};

/* The socket of the private munged that harness_init started: cli_hello
 * signs Hellos with it (NULL before harness_init). */
extern const char *harness_munge_socket;

/* ---- test verdicts (shared by tests/integration/server_test_*.c) ---- */
extern int harness_failures;
/* Records a failure with the condition and a printf-style reason; goes on. */
#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fputc('\n', stderr);                                            \
      harness_failures++;                                             \
    }                                                                 \
  } while (0)

/* When > 0, harness_start runs the server with RLIMIT_NOFILE soft = hard =
 * this (the fd-exhaustion test). */
extern int harness_server_nofile;
/* kB of the server's "VmHWM:" (peak RSS) or "VmRSS:" in /proc/PID/status; -1
 * when unreadable. */
long harness_server_kb(const struct harness *h, const char *field);

/* A test's start: argv[1] is the siox-server binary. Creates the temp dir,
 * writes token (when not NULL: the server's token file, 'DAEMON_ID TOKEN'
 * lines) to DIR/token and passes --token-file (--auth token), adds
 * extra (NULL-terminated, may be NULL) and starts the server. Returns 0, or
 * -1 after saying why and cleaning up. */
int harness_setup(struct harness *h, int argc, char **argv, const char *token, const char *const *extra);
/* A test's end: stops the server (a clean exit is checked), removes the temp
 * dir and prints the verdict. Returns main's exit status. */
int harness_finish(struct harness *h, const char *name);

/* Creates the temp dir, picks a free port and starts a private munged
 * (DIR/munge). Returns 0 or a negative errno. */
int harness_init(struct harness *h, const char *server_bin);
/* Starts a munged with a fresh random key in dir (created, 0755), socket
 * dir/munge.sock, in the foreground as a child. Its pid, or -1. */
pid_t harness_munged_start(const char *dir, char *sock, size_t sock_len);
/* Starts siox-server (extra_args: NULL-terminated, may be NULL; default
 * --auth munge with the private munged's socket) and waits until it accepts
 * connections. Returns 0, or -1 if it died or timed out. */
int harness_start(struct harness *h, const char *const *extra_args);
/* SIGTERM and wait. Returns the exit status, -1 on timeout (then SIGKILL). */
int harness_stop(struct harness *h);
/* SIGKILL and reap: the embedded postmaster keeps running. */
void harness_kill9(struct harness *h);
/* Stops a leftover postmaster (by DIR/pg/postmaster.pid) and removes the dir. */
void harness_cleanup(struct harness *h);
/* libpq connection to the warehouse, by DIR/conninfo. NULL on failure. */
PGconn *harness_db(const struct harness *h);
/* 1 when the server log contains s. */
int harness_log_has(const struct harness *h, const char *s);
/* Runs a one-value query and returns it as an integer (-1 on error). */
long long harness_scalar(PGconn *c, const char *sql);

/* ---- daemon side of the wire ---- */
int cli_connect(int port);
int cli_send_raw(int fd, const void *p, size_t n);
int cli_send(int fd, uint16_t type, const ProtobufCMessage *m);
/* Receives one frame (payload malloc'd, caller frees). Returns 0, -1 on EOF
 * or error, -2 on timeout. */
int cli_recv(int fd, uint16_t *type, uint8_t **payload, uint32_t *len, int timeout_ms);
/* Hello; returns acked_seq (>= 0) or -1. Without a token it carries a
 * MUNGE credential for (daemon_id, host) from harness_munge_socket. */
long long cli_hello(int fd, uint64_t daemon_id, const char *host, const char *token);
/* Encodes payload as a MUNGE credential via harness_munge_socket; malloc'd
 * (caller frees) or NULL. */
char *cli_munge(const void *payload, size_t len);
/* Sends a Hello as given (credential fields set by the caller) and returns
 * acked_seq, or -1 when the server answered anything else (closing). */
long long cli_hello_msg(int fd, const Siox__Hello *m);
/* Sends a StatusRequest (signed: with a MUNGE status credential) and
 * returns the reply (siox__status_reply__free_unpacked), or NULL. */
Siox__StatusReply *cli_status(int fd, int sign);
/* A counter of a StatusReply, -1 when absent. */
long long status_counter(const Siox__StatusReply *r, const char *name);
/* A counter of the server on port (a signed StatusRequest on a new
 * connection), -1 when it cannot be read. */
long long server_counter(int port, const char *name);
/* Encodes blk and sends it as Batch seq. 0 or -1. */
int cli_batch(int fd, uint64_t daemon_id, uint64_t seq, int64_t offset_ns, uint64_t unc_ns, const struct siox_block *blk);
/* Waits for Ack >= seq. Returns the acked seq, -1 on EOF/Error, -2 on timeout. */
long long cli_wait_ack(int fd, uint64_t seq, int timeout_ms);
/* Connects, says Hello, sends blk as Batch seq (clock offset 0, uncertainty
 * 20 us) and waits for its Ack. 0 or -1. */
int cli_send_block(int port, uint64_t daemon_id, const char *host, const char *token, uint64_t seq,
                   const struct siox_block *blk);

/* ---- blocks ---- */
/* One process (pid, nonce, host) with node unid 1 (host/"POSIX") and type 1
 * ("write"), then n activities with aids first..first+n-1 starting at t0,
 * 1 us apart, each with io/offset and io/bytes; every 10th has parent aid-1. */
void block_spmd(struct siox_block *b, uint32_t pid, uint64_t nonce, const char *host, uint64_t first, uint32_t n,
                int64_t t0);
/* Batch seq of daemon d, as a daemon's spool holds it: a whole BATCH frame
 * (header included) of block_spmd's per_batch activities of process pid,
 * aids continuing from the batch before. Returns the malloc'd frame (the
 * caller frees it) and its length in *len, or NULL. For the benches that
 * replay a daemon's stream at full speed. */
uint8_t *spmd_batch_frame(uint64_t d, uint64_t seq, uint32_t pid, uint32_t per_batch, size_t *len);
/* One process (pid = nonce = pid) on host with node unid 1 (host, swid) and
 * type 1 ("WRITE"); returns its index in b. */
uint32_t block_proc(struct siox_block *b, uint32_t pid, const char *host, const char *swid);
/* An activity of type 1 without attributes. */
void block_act(struct siox_block *b, uint32_t proc, uint64_t aid, int64_t start, int64_t end);
/* A descriptor record (kind SIOX_DESC_*) with one value of attr; the caller
 * sets offset/length or more values on the returned record. */
struct siox_block_descriptor *block_desc(struct siox_block *b, uint32_t proc, uint32_t kind, uint64_t aid,
                                         uint32_t node, uint32_t attr, const void *val, size_t len);

#endif
