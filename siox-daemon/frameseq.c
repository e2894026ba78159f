/*
 * Frames a client process incarnation has already handed over.
 *
 * libsiox-client numbers the BATCH frames of its threads 1, 2, 3... per
 * process incarnation (siox_cw_frame_hdr.seq; HELLO's nonce names the
 * incarnation) and sends every frame the daemon has not acknowledged again
 * on its next connection, or spills it to a loss file at exit. A frame the
 * daemon took (journaled, or discarded and counted) whose ACK the client
 * never read so comes back: after a kill -9 between the journal and the
 * ACK, or a connection closed before the client read its ACK. The server
 * cannot drop the copy when the frame holds a running activity's records
 * and no activity record (no key to collide on), so the daemon does: it
 * keeps the highest seq taken per nonce and drops a frame at or below it
 * (a client sends its frames in seq order, first the resent ones).
 *
 * Across a kill -9: the journals hold it (journal.c). Each journaled frame's
 * seq is in its record; before a sealed batch's journal is removed, the
 * whole table (frameseq_export) is appended to the open batch's journal,
 * so the journals that remain always hold every seq taken. On start every
 * journal is read (frameseq_import for the tables): those of batches
 * already spooled for their seqs alone, the others replayed.
 *
 * An entry belongs to the uid that made it: a nonce is a process's claim,
 * and another user who learnt it must not silence that process's frames
 * (at most they keep its copies from being recognised).
 *
 * Bounded: an entry is forgotten a while after its nonce's last session
 * ended (LINGER_CLEAN_NS after an end with every frame taken and
 * acknowledged: a copy can then only come from a client that closed
 * before reading its last ACK, which reconnects at once or leaves a loss
 * file that is read within 2 s; LINGER_NS otherwise, and for entries
 * imported from the journals at start), and there are at most FRAMESEQ_MAX of them; a nonce
 * that finds the table full is not tracked (logged).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

#define FRAMESEQ_MAX 65536u
#define LINGER_CLEAN_NS (10 * 1000000000LL)
#define LINGER_NS (600 * 1000000000LL)

struct fs_ent {
  uint64_t nonce; /* 0: free slot (a client's nonce is never 0) */
  uint32_t uid;   /* whose it is (SO_PEERCRED, a loss file's owner) */
  uint32_t high;  /* highest seq taken, 0: none yet */
  uint32_t sessions;
  int64_t forget_ns; /* with no session: forgotten after this */
};

struct frameseq {
  struct fs_ent *v; /* open addressing, linear probing; cap a power of 2 */
  size_t cap, n;
  int64_t swept_ns; /* last expire() at an export */
  bool full_logged; /* the table was full: logged once */
};

/* One entry as exported (the journal's JNL_TABLE record). */
struct fs_file_ent {
  uint64_t nonce;
  uint32_t uid, high;
};

static struct frameseq *get(struct daemon *d) {
  if (!d->frameseq)
    d->frameseq = calloc(1, sizeof *d->frameseq);
  return d->frameseq;
}

/* The nonces are random: their low bits are a hash already. */
static struct fs_ent *slot_of(struct fs_ent *v, size_t cap, uint64_t nonce) {
  size_t i = (size_t)(nonce ^ (nonce >> 29)) & (cap - 1);
  while (v[i].nonce && v[i].nonce != nonce)
    i = (i + 1) & (cap - 1);
  return &v[i];
}

/* The entry of (uid, nonce); NULL when there is none, or it is another
 * uid's (*other set). */
static struct fs_ent *find(struct frameseq *t, uint32_t uid, uint64_t nonce, bool *other) {
  *other = false;
  if (!t || !t->cap || nonce == 0)
    return NULL;
  struct fs_ent *e = slot_of(t->v, t->cap, nonce);
  *other = e->nonce && e->uid != uid;
  return e->nonce && !*other ? e : NULL;
}

/* Rebuilds the table in `cap` slots, leaving out what is due to be
 * forgotten at `now` (0: nothing). */
static int rebuild(struct frameseq *t, size_t cap, int64_t now) {
  struct fs_ent *nv = calloc(cap, sizeof *nv);
  if (!nv)
    return -ENOMEM;
  size_t n = 0;
  for (size_t i = 0; i < t->cap; i++) {
    const struct fs_ent *e = &t->v[i];
    if (!e->nonce || (now && !e->sessions && e->forget_ns <= now))
      continue;
    *slot_of(nv, cap, e->nonce) = *e;
    n++;
  }
  free(t->v);
  t->v = nv, t->cap = cap, t->n = n;
  return 0;
}

/* Forgets the entries whose time is up. */
static void expire(struct frameseq *t, int64_t now) {
  for (size_t i = 0; i < t->cap; i++)
    if (t->v[i].nonce && !t->v[i].sessions && t->v[i].forget_ns <= now) {
      (void)rebuild(t, t->cap, now); /* no memory: kept until the next try */
      return;
    }
}

/* The entry of (uid, nonce), made if need be (NULL: not tracked). */
static struct fs_ent *entry(struct daemon *d, uint32_t uid, uint64_t nonce) {
  struct frameseq *t = get(d);
  bool other;
  if (!t || nonce == 0)
    return NULL;
  struct fs_ent *e = find(t, uid, nonce, &other);
  if (e || other)
    return e;
  if (t->n >= FRAMESEQ_MAX)
    expire(t, clock_realtime_ns());
  if (t->n >= FRAMESEQ_MAX) {
    if (!t->full_logged)
      fprintf(stderr, "siox-daemon: %u client processes tracked for resent frames; copies from new ones are not "
                      "recognised until older ones are forgotten\n",
              FRAMESEQ_MAX);
    t->full_logged = true;
    return NULL;
  }
  if ((t->n + 1) * 2 > t->cap && rebuild(t, t->cap ? t->cap * 2 : 64, 0) < 0)
    return NULL;
  e = slot_of(t->v, t->cap, nonce);
  *e = (struct fs_ent){nonce, uid, 0, 0, clock_realtime_ns() + LINGER_NS};
  t->n++;
  return e;
}

bool frameseq_resent(struct daemon *d, uint32_t uid, uint64_t nonce, uint32_t seq) {
  bool other;
  const struct fs_ent *e = seq ? find(d->frameseq, uid, nonce, &other) : NULL;
  /* Serial number order: seqs wrap after 2^32 - 1. */
  if (!e || e->high == 0 || (int32_t)(seq - e->high) > 0)
    return false;
  uint64_t n = ++d->ctr.frames_resent_dropped;
  if ((n & (n - 1)) == 0) /* the 1st, 2nd, 4th, 8th ... */
    fprintf(stderr, "siox-daemon: resent frame %" PRIu32 " of client %016" PRIx64 " taken before (highest %" PRIu32
                    "): dropped (%" PRIu64 " so far)\n",
            seq, nonce, e->high, n);
  return true;
}

void frameseq_take(struct daemon *d, uint32_t uid, uint64_t nonce, uint32_t seq) {
  struct fs_ent *e = seq ? entry(d, uid, nonce) : NULL;
  if (!e || (e->high && (int32_t)(seq - e->high) <= 0))
    return;
  e->high = seq;
}

void frameseq_open(struct daemon *d, uint32_t uid, uint64_t nonce) {
  struct fs_ent *e = entry(d, uid, nonce);
  if (e)
    e->sessions++;
}

void frameseq_close(struct daemon *d, uint32_t uid, uint64_t nonce, bool clean) {
  bool other;
  struct fs_ent *e = find(d->frameseq, uid, nonce, &other);
  if (!e || !e->sessions)
    return;
  e->sessions--;
  e->forget_ns = clock_realtime_ns() + (clean ? LINGER_CLEAN_NS : LINGER_NS);
}

ssize_t frameseq_export(struct daemon *d, uint8_t **out) {
  struct frameseq *t = d->frameseq;
  *out = NULL;
  if (!t)
    return 0;
  int64_t now = clock_realtime_ns();
  if (now - t->swept_ns >= 1000000000LL) { /* a scan of the table: at most once a second */
    t->swept_ns = now;
    expire(t, now);
  }
  if (!t->n)
    return 0;
  if (!(*out = malloc(t->n * sizeof(struct fs_file_ent))))
    return -ENOMEM;
  size_t off = 0;
  for (size_t i = 0; i < t->cap; i++)
    if (t->v[i].nonce) {
      struct fs_file_ent fe = {t->v[i].nonce, t->v[i].uid, t->v[i].high};
      memcpy(*out + off, &fe, sizeof fe);
      off += sizeof fe;
    }
  return (ssize_t)off;
}

int frameseq_import(struct daemon *d, const uint8_t *p, size_t len) {
  if (len % sizeof(struct fs_file_ent))
    return -EBADMSG;
  for (size_t off = 0; off < len; off += sizeof(struct fs_file_ent)) {
    struct fs_file_ent fe;
    memcpy(&fe, p + off, sizeof fe);
    frameseq_take(d, fe.uid, fe.nonce, fe.high);
  }
  return 0;
}

void frameseq_free(struct daemon *d) {
  if (d->frameseq)
    free(d->frameseq->v);
  free(d->frameseq);
  d->frameseq = NULL;
}
