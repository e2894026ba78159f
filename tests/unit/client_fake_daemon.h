/*
 * A tiny stand-in for siox-daemon used by the client tests: a unix-socket
 * server thread that checks the framing of protocol/siox_client_wire.h,
 * decodes every record and converts timestamps to ns with the HELLO/BATCH
 * clock pairs, so that tests can assert what the client actually sent.
 */
#ifndef SIOX_TEST_CLIENT_FAKE_DAEMON_H
#define SIOX_TEST_CLIENT_FAKE_DAEMON_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <siox_client_wire.h>
#include <siox/siox.h>

struct fk_activity {
  uint64_t nonce;
  uint32_t thread, type;
  uint64_t aid, parent;
  int64_t start_ns, end_ns;
  int32_t err;
  uint32_t nattr;
  struct siox_cw_attr attrs[SIOX_CW_MAX_ATTRS];
};

struct fk_reg { /* NODE, TYPE, TARGET, EDGE, NODE_ATTR, ATTR_STR, DESC */
  uint64_t nonce;
  uint16_t rtype;
  uint32_t a;
  uint64_t aid;       /* ATTR_STR, DESC */
  uint32_t x;         /* TYPE: unid; EDGE: to; DESC: node; NODE_ATTR: attr */
  char s[3][512];     /* strings (NODE: hwid swid iid; TYPE: name; ATTR_STR/NODE_ATTR str) */
  uint64_t values[2]; /* DESC integer values; NODE_ATTR numeric */
  uint32_t dtypes[2], ndesc;
  uint64_t offset, length;
};

struct fk_conn {
  uint64_t nonce;
  uint32_t clock_flags;
  char exe[512], args[512], job[128];
  uint64_t stats_dropped, stats_activities;
  int stats_seen;
};

struct fake_daemon {
  pthread_mutex_t lock; /* guards everything below */
  struct fk_activity *acts;
  size_t nacts, acts_cap;
  struct fk_reg *regs;
  size_t nregs, regs_cap;
  struct fk_conn conns[64];
  size_t nconns;
  size_t bad_frames; /* framing or record errors: tests assert 0 */
  char bad_why[128];
  int no_acks; /* set before clients connect: never send ACK frames */
  /* siox_cw_frame_hdr.seq of each BATCH frame (registrations: thread 0,
   * too), in arrival order; the first FK_SEQS only. */
#define FK_SEQS 4096
  struct {
    uint32_t seq, thread;
  } frame_seqs[FK_SEQS];
  size_t nframe_seqs;
  size_t unregistered; /* activities whose type was not registered before
                          them on their connection (siox-daemon drops them) */
  /* internal */
  char path[108];
  int listen_fd, wake[2], stop;
  pthread_t thread;
};

/* Starts listening on path (unlinked first); returns NULL on failure. The
 * caller stops and frees it with fake_daemon_stop(). */
struct fake_daemon *fake_daemon_start(const char *path);
void fake_daemon_stop(struct fake_daemon *d);
/* Holds the fake daemon between two of its polls, in no malloc: around a
 * fork(), since GCC 12's ASan allocator has no fork handlers and a child
 * forked while another thread holds its lock deadlocks. */
void fake_daemon_hold(struct fake_daemon *d);
void fake_daemon_release(struct fake_daemon *d);
/* Waits (up to timeout_ms) until at least n activities have arrived;
 * returns the number that arrived. */
size_t fake_daemon_wait(struct fake_daemon *d, size_t n, unsigned timeout_ms);
size_t fake_daemon_count(struct fake_daemon *d, uint64_t nonce, uint32_t type);
/* The activity with this aid and nonce (0: any nonce), or NULL; lock held. */
const struct fk_activity *fake_daemon_find(struct fake_daemon *d, uint64_t nonce, uint64_t aid);
/* Makes a unique socket path under /tmp into buf. */
void fake_daemon_tmp_path(char *buf, size_t cap, const char *tag);
/* The client side of a test: siox_init on path (exit_timeout_ms 0: the
 * default), node ("h", "TEST") and activity type "op" registered into *t.
 * Fails the test on error. */
void fake_client_setup(const char *path, unsigned exit_timeout_ms, siox_type_id *t);
/* Records one activity of type t every 5 ms until siox_stats says
 * connected == want (10 s at most; aborts the test then). */
void fake_client_record_until(siox_type_id t, int want);

#endif
