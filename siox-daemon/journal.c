/*
 * The open-batch journal. The open batch lives in memory until it is sealed
 * and spooled; a kill -9 of the daemon would lose it, and the clients,
 * which were told (ACK) that the daemon has their records, would not send
 * them again. So every client payload the batch takes is first appended to
 * <state-dir>/journal/<seq>.jnl, <seq> being the seq the open batch will be
 * spooled as:
 *
 *   record = struct jnl_rec, then `len` bytes, zero-padded to 8
 *   IDENT  a session's identity and clock pair (first record of a session
 *          in this file)
 *   REGS   the nodes, types and targets the session had registered by then
 *          (validate.c keys), right after its IDENT: the daemon validates
 *          each record against them, and a replay must keep and drop
 *          exactly what the live daemon did (registrations made later are
 *          in the BATCH records that follow)
 *   BATCH  a client BATCH payload, verbatim (a frame without a seq)
 *   BATCH_SEQ  the frame's seq (struct jnl_seq), then its BATCH payload
 *          verbatim: one record, so a kill cannot keep one without the other
 *   SEQ    the seq of a frame taken without its records (spool full)
 *   TABLE  every client's highest frame seq taken (frameseq_export, sid 0):
 *          written before a sealed batch's journal is removed, so the
 *          journals that remain hold every seq taken
 *   STATS  the session's loss accounting (struct jnl_stats), latest wins
 *
 * Plain write(), no fsync: a kill -9 of the daemon keeps the page cache, so
 * the journal survives it; a machine crash can lose the open batch (at most
 * --batch-ms of records), as it always could. After the batch is spooled
 * (renamed into place) its journal is unlinked. On start, a journal whose
 * seq is below the spool's next seq was sealed already and is deleted; the
 * others are replayed into the open batch, which is sealed at once. Every
 * journal's frame seqs are taken (frameseq.c), those of sealed batches too:
 * a kill may come between the spool file's rename and the TABLE record
 * that replaces the sealed batch's journal.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "daemon.h"

enum { JNL_IDENT = 1, JNL_BATCH = 2, JNL_STATS = 3, JNL_REGS = 4, JNL_BATCH_SEQ = 5, JNL_SEQ = 6, JNL_TABLE = 7 };

struct jnl_rec {
  uint32_t kind;
  uint32_t len; /* payload bytes, before padding */
  uint64_t sid;
};

struct jnl_ident {
  uint32_t pid, uid;
  uint64_t nonce, tsc0;
  int64_t ns0;
  uint32_t clock_flags;
  uint16_t exe_len, args_len, job_len, pad;
};

struct jnl_seq {
  uint32_t seq, pad;
};

struct jnl_stats {
  uint64_t activities, records, dropped, dropped_exit, daemon_dropped_spool, daemon_dropped_invalid;
};

/* A piece of the held records: `ext` bytes of the caller's, or (ext NULL)
 * bytes of j->held from `off` (an offset: j->held may move as it grows). */
struct held_seg {
  const uint8_t *ext;
  size_t off, len;
};

struct journal {
  char dir[4096];
  int fd;
  uint64_t seq; /* of the open file */
  bool failed;  /* a write failed: logged once */
  /* Records held between journal_hold and journal_commit (one client
   * read): written with one writev() instead of one writev() each. Record
   * headers, padding and small records are copied into `held`; a BATCH
   * payload is referenced where it lies (the session's read buffer, which
   * the caller keeps until journal_flush/commit), so the client's records
   * are copied once, into the page cache, not first into `held`. */
  bool holding;
  uint8_t *held;
  size_t held_len, held_cap;
  struct held_seg *segs;
  size_t n_segs, cap_segs;
  uint64_t held_seq; /* the batch they belong to */
  bool replaying;    /* journal_replay: it removes the journals itself */
};

#define PAD8(n) (((size_t)(n) + 7u) & ~(size_t)7u)

static struct journal *get(struct daemon *d) {
  if (!d->journal) {
    if (!(d->journal = calloc(1, sizeof *d->journal)))
      return NULL;
    snprintf(d->journal->dir, sizeof d->journal->dir, "%s/journal", d->cfg.state_dir);
    d->journal->fd = -1;
  }
  return d->journal;
}

static void path_of(const struct journal *j, uint64_t seq, char *out, size_t cap) {
  snprintf(out, cap, "%s/%" PRIu64 ".jnl", j->dir, seq);
}

/* The journal of the open batch, opened on its first record. */
static int open_for(struct daemon *d, struct journal *j) {
  uint64_t seq = d->spool.next_seq;
  if (j->fd >= 0 && j->seq == seq)
    return 0;
  if (j->fd >= 0)
    close(j->fd);
  char path[4200];
  path_of(j, seq, path, sizeof path);
  j->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  j->seq = seq;
  return j->fd < 0 ? -errno : 0;
}

/* Logs the first failure of a run of them; rc 0 ends the run. */
static void report(struct daemon *d, struct journal *j, int rc) {
  if (rc < 0 && !j->failed) {
    /* The records still go into the batch: only a kill -9 before the seal
     * could lose them now. */
    fprintf(stderr, "siox-daemon: journal %s/%" PRIu64 ".jnl: %s; the open batch is not protected\n", j->dir,
            d->spool.next_seq, strerror(-rc));
    j->failed = true;
  } else if (rc == 0) {
    j->failed = false;
  }
}

/* Appends v (total bytes) to the journal of the open batch. */
static int append(struct daemon *d, struct journal *j, const struct iovec *v, int nv, size_t total) {
  int rc = open_for(d, j);
  if (rc == 0) {
    ssize_t n = writev(j->fd, v, nv);
    rc = n == (ssize_t)total ? 0 : n < 0 ? -errno : -EIO;
  }
  return rc;
}

/* Writes the held segments with writev() calls of at most IOV_MAX pieces. */
static int write_segs(struct daemon *d, struct journal *j) {
  int rc = open_for(d, j);
  struct iovec v[IOV_MAX];
  for (size_t i = 0; rc == 0 && i < j->n_segs;) {
    int nv = 0;
    size_t total = 0;
    for (; i < j->n_segs && nv < IOV_MAX; i++, nv++) {
      const struct held_seg *g = &j->segs[i];
      v[nv] = (struct iovec){(void *)(g->ext ? g->ext : j->held + g->off), g->len};
      total += g->len;
    }
    ssize_t n = writev(j->fd, v, nv);
    rc = n == (ssize_t)total ? 0 : n < 0 ? -errno : -EIO;
  }
  return rc;
}

/* Writes the held records into their batch's journal and forgets them.
 * They all belong to one batch: a seal in the middle of a read drops them
 * (journal_sealed: they are in the spooled batch), so records held later
 * are the next batch's. Held records of a batch no longer open (sealed
 * without that call) are not written: they would land in the wrong file. */
static int write_held(struct daemon *d, struct journal *j) {
  if (j->n_segs == 0)
    return 0;
  int rc = j->held_seq == d->spool.next_seq ? write_segs(d, j) : 0;
  j->held_len = j->n_segs = 0;
  return rc;
}

static bool seg_room(struct journal *j) {
  if (j->n_segs < j->cap_segs)
    return true;
  size_t cap = j->cap_segs ? j->cap_segs * 2 : 64;
  struct held_seg *ns = realloc(j->segs, cap * sizeof *ns);
  if (!ns)
    return false;
  j->segs = ns;
  j->cap_segs = cap;
  return true;
}

/* Holds n bytes at p: referenced (ext) or copied into j->held; a copy
 * next to the previous copied segment extends it. */
static bool hold_piece(struct journal *j, const void *p, size_t n, bool ext) {
  if (n == 0)
    return true; /* p may be NULL, which memcpy must not get */
  struct held_seg *last = j->n_segs ? &j->segs[j->n_segs - 1] : NULL;
  if (ext) {
    if (!seg_room(j))
      return false;
    j->segs[j->n_segs++] = (struct held_seg){p, 0, n};
  } else {
    if (j->held_len + n > j->held_cap) {
      size_t cap = j->held_cap ? j->held_cap : 4096;
      while (cap < j->held_len + n)
        cap *= 2;
      uint8_t *nb = realloc(j->held, cap);
      if (!nb)
        return false;
      j->held = nb;
      j->held_cap = cap;
    }
    if (last && !last->ext && last->off + last->len == j->held_len) {
      last->len += n;
    } else {
      if (!seg_room(j))
        return false;
      j->segs[j->n_segs++] = (struct held_seg){NULL, j->held_len, n};
    }
    memcpy(j->held + j->held_len, p, n);
    j->held_len += n;
  }
  return true;
}

/* Holds v (piece ext_i referenced, the others copied; -1: none); on
 * failure (no memory) the pieces already held are taken back. */
static bool hold(struct journal *j, const struct iovec *v, int nv, int ext_i, uint64_t seq) {
  size_t n_segs = j->n_segs, held_len = j->held_len;
  size_t last_len = n_segs ? j->segs[n_segs - 1].len : 0;
  for (int i = 0; i < nv; i++) {
    if (!hold_piece(j, v[i].iov_base, v[i].iov_len, i == ext_i)) {
      j->n_segs = n_segs, j->held_len = held_len;
      if (n_segs)
        j->segs[n_segs - 1].len = last_len;
      return false;
    }
  }
  j->held_seq = seq;
  return true;
}

/* One journal record: header, a (alen), b (blen), padding. With ext_b, b
 * stays valid until journal_flush/commit and is not copied while holding.
 * Returns 0 when written or held, else the (logged) error. */
static int put(struct daemon *d, uint32_t kind, uint64_t sid, const void *a, size_t alen, const void *b,
               size_t blen, bool ext_b) {
  static const uint8_t zeros[8];
  struct journal *j = get(d);
  if (!j)
    return -ENOMEM;
  struct jnl_rec r = {kind, (uint32_t)(alen + blen), sid};
  struct iovec v[4] = {{&r, sizeof r}, {(void *)a, alen}, {(void *)b, blen}, {(void *)zeros, PAD8(alen + blen) - (alen + blen)}};
  size_t total = sizeof r + PAD8(alen + blen);
  if (j->holding && hold(j, v, 4, ext_b ? 2 : -1, d->spool.next_seq))
    return 0;
  int rc = write_held(d, j); /* not held (no memory): in order, what is held goes first */
  if (rc == 0)
    rc = append(d, j, v, 4, total);
  report(d, j, rc);
  return rc;
}

void journal_hold(struct daemon *d) {
  struct journal *j = get(d);
  if (j)
    j->holding = true;
}

void journal_flush(struct daemon *d) {
  struct journal *j = d->journal;
  if (j && j->n_segs > 0)
    report(d, j, write_held(d, j));
}

void journal_commit(struct daemon *d) {
  journal_flush(d);
  if (d->journal)
    d->journal->holding = false;
}

/* Writes the session's IDENT and REGS once per journal file. */
static void ident(struct daemon *d, struct loss_state *ls, const struct batcher_slot *slot,
                  const struct client_ident *who) {
  if (ls->jnl_gen == d->batcher.generation)
    return;
  struct jnl_ident id = {who->pid, who->uid, who->nonce, ls->tsc0, ls->ns0, ls->clock_flags,
                         (uint16_t)strlen(who->exe), (uint16_t)strlen(who->args), (uint16_t)strlen(who->job), 0};
  size_t n = (size_t)id.exe_len + id.args_len + id.job_len;
  char *s = malloc(n ? n : 1);
  if (!s)
    return;
  memcpy(s, who->exe, id.exe_len);
  memcpy(s + id.exe_len, who->args, id.args_len);
  memcpy(s + id.exe_len + id.args_len, who->job, id.job_len);
  put(d, JNL_IDENT, ls->sid, &id, sizeof id, s, n, false);
  free(s);
  uint64_t *keys;
  size_t nk = validate_export(slot, &keys);
  if (nk)
    put(d, JNL_REGS, ls->sid, keys, nk * sizeof *keys, NULL, 0, false);
  free(keys);
  ls->jnl_gen = d->batcher.generation;
}

void journal_session(struct daemon *d, struct loss_state *ls, const struct batcher_slot *slot,
                     const struct client_ident *who) {
  ident(d, ls, slot, who);
}

void journal_batch(struct daemon *d, struct loss_state *ls, const struct batcher_slot *slot,
                   const struct client_ident *who, uint32_t seq, const uint8_t *p, uint32_t len) {
  struct jnl_seq fs = {seq, 0};
  ident(d, ls, slot, who);
  if (seq)
    put(d, JNL_BATCH_SEQ, ls->sid, &fs, sizeof fs, p, len, true);
  else
    put(d, JNL_BATCH, ls->sid, NULL, 0, p, len, true);
}

void journal_taken(struct daemon *d, struct loss_state *ls, const struct batcher_slot *slot,
                   const struct client_ident *who, uint32_t seq) {
  struct jnl_seq fs = {seq, 0};
  ident(d, ls, slot, who);
  put(d, JNL_SEQ, ls->sid, &fs, sizeof fs, NULL, 0, false);
}

void journal_stats(struct daemon *d, struct loss_state *ls, const struct batcher_slot *slot,
                   const struct client_ident *who) {
  const struct siox_block_stats *c = &ls->cur;
  struct jnl_stats st = {c->activities,   c->records, c->dropped, c->dropped_exit, c->daemon_dropped_spool,
                         c->daemon_dropped_invalid};
  ident(d, ls, slot, who);
  put(d, JNL_STATS, ls->sid, &st, sizeof st, NULL, 0, false);
}

/* The frame seq table into the open batch's journal (TABLE), before a
 * sealed batch's journal, which holds some of those seqs, is removed. */
static int carry(struct daemon *d) {
  uint8_t *tab;
  ssize_t n = frameseq_export(d, &tab);
  int rc = n > 0 ? put(d, JNL_TABLE, 0, tab, (size_t)n, NULL, 0, false) : (int)n;
  free(tab);
  return rc;
}

void journal_sealed(struct daemon *d, uint64_t seq) {
  struct journal *j = d->journal;
  if (!j)
    return;
  /* The frame seqs it holds live on in the open batch's journal; if they
   * cannot be written there, this one stays, for the next start to take
   * them from (a journal below the spool's next seq: its seqs alone). */
  bool keep = j->replaying || carry(d) < 0;
  char path[4200];
  path_of(j, seq, path, sizeof path);
  if (j->held_seq == seq)
    j->held_len = j->n_segs = 0; /* they are in the batch just spooled */
  if (j->fd >= 0 && j->seq == seq) {
    close(j->fd);
    j->fd = -1;
  }
  if (!keep && unlink(path) < 0 && errno != ENOENT)
    fprintf(stderr, "siox-daemon: removing %s: %s\n", path, strerror(errno));
  daemon_test_kill(d, seq);
}

void journal_close(struct daemon *d) {
  if (d->journal && d->journal->fd >= 0)
    close(d->journal->fd);
  if (d->journal) {
    free(d->journal->held);
    free(d->journal->segs);
  }
  free(d->journal);
  d->journal = NULL;
}

/* ---------------------------------------------------------------------------
 * Replay
 * ------------------------------------------------------------------------- */
struct replayed { /* one session of a journal */
  uint64_t sid;
  struct client_ident ident;
  char *strs;
  struct loss_state ls;
  struct batcher_slot slot;
};

struct replay {
  struct replayed *v;
  size_t n, cap;
  bool seqs_only; /* a sealed batch's journal: its frame seqs, nothing else */
};

static struct replayed *find(struct replay *r, uint64_t sid) {
  for (size_t i = 0; i < r->n; i++)
    if (r->v[i].sid == sid)
      return &r->v[i];
  return NULL;
}

static int on_ident(struct daemon *d, struct replay *r, uint64_t sid, const uint8_t *p, uint32_t len) {
  struct jnl_ident id;
  if (len < sizeof id)
    return -EBADMSG;
  memcpy(&id, p, sizeof id);
  if ((size_t)sizeof id + id.exe_len + id.args_len + id.job_len != len)
    return -EBADMSG;
  if (r->n == r->cap) {
    size_t c = r->cap ? r->cap * 2 : 16;
    struct replayed *nv = realloc(r->v, c * sizeof *nv);
    if (!nv)
      return -ENOMEM;
    r->v = nv, r->cap = c;
  }
  struct replayed *x = &r->v[r->n];
  memset(x, 0, sizeof *x);
  if (!(x->strs = malloc((size_t)id.exe_len + id.args_len + id.job_len + 3)))
    return -ENOMEM;
  const char *src = (const char *)p + sizeof id;
  char *dst = x->strs;
  const char **slots[3] = {&x->ident.exe, &x->ident.args, &x->ident.job};
  uint16_t lens[3] = {id.exe_len, id.args_len, id.job_len};
  for (int i = 0; i < 3; i++) {
    memcpy(dst, src, lens[i]);
    dst[lens[i]] = '\0';
    *slots[i] = dst;
    dst += lens[i] + 1;
    src += lens[i];
  }
  x->sid = sid;
  x->ident.pid = id.pid, x->ident.uid = id.uid, x->ident.nonce = id.nonce, x->ident.host = d->hostname;
  x->ls.clock_flags = id.clock_flags, x->ls.tsc0 = id.tsc0, x->ls.ns0 = id.ns0;
  r->n++;
  return 0;
}

static int on_regs(struct replayed *x, const uint8_t *p, uint32_t len) {
  if (len % sizeof(uint64_t))
    return -EBADMSG;
  uint64_t *keys = malloc(len ? len : 1);
  if (!keys)
    return -ENOMEM;
  memcpy(keys, p, len);
  int rc = validate_import(&x->slot, keys, len / sizeof *keys);
  free(keys);
  return rc;
}

/* The session's stats record in the open block, from x->ls.cur. */
static int put_stats(struct daemon *d, struct replayed *x) {
  return batcher_put_stats(&d->batcher, &x->slot, &x->ident, &x->ls.cur, &x->ls.stats_gen, &x->ls.stats_idx);
}

/* Validated as the live daemon did (REGS + the BATCH records before this
 * one): a record it dropped is dropped again. A malformed one (not ours)
 * adds nothing (batcher_add_records takes the frame back). Its count normally came in
 * the STATS record journaled after this BATCH, which overwrites ours; if
 * the kill cut that one off, ours keeps the count. */
static int on_batch(struct daemon *d, struct replayed *x, const uint8_t *p, uint32_t len) {
  struct siox_cw_batch b;
  if (len < sizeof b)
    return -EBADMSG;
  memcpy(&b, p, sizeof b);
  if (b.bytes != len - sizeof b)
    return -EBADMSG;
  struct clock_conv cc;
  clock_conv_init(&cc, x->ls.clock_flags, x->ls.tsc0, x->ls.ns0, b.tsc_ref, b.ns_ref);
  clock_conv_shift(&cc, d->cfg.test_clock_shift_ns);
  uint64_t before = d->batcher.activities, invalid = x->slot.dropped_validation;
  int rc = batcher_add_records(&d->batcher, &x->slot, &x->ident, &cc, p + sizeof b, b.bytes, &d->ctr);
  d->ctr.journal_replayed += d->batcher.activities - before;
  if (rc < 0 || x->slot.dropped_validation == invalid)
    return rc;
  x->ls.cur.daemon_dropped_invalid += x->slot.dropped_validation - invalid;
  return put_stats(d, x);
}

static int on_stats(struct daemon *d, struct replayed *x, const uint8_t *p, uint32_t len) {
  struct jnl_stats st;
  if (len != sizeof st)
    return -EBADMSG;
  memcpy(&st, p, sizeof st);
  x->ls.cur = (struct siox_block_stats){0,
                                         st.activities,
                                         st.records,
                                         st.dropped,
                                         st.dropped_exit,
                                         st.daemon_dropped_spool,
                                         st.daemon_dropped_invalid};
  return put_stats(d, x);
}

/* A frame's seq is taken, and a BATCH_SEQ's payload replayed as a BATCH
 * (unless only the seqs are wanted). */
static int on_seq(struct daemon *d, const struct replay *r, struct replayed *x, uint32_t kind, const uint8_t *p,
                  uint32_t len) {
  struct jnl_seq fs;
  if (len < sizeof fs || (kind == JNL_SEQ && len != sizeof fs))
    return -EBADMSG;
  memcpy(&fs, p, sizeof fs);
  frameseq_take(d, x->ident.uid, x->ident.nonce, fs.seq);
  return kind == JNL_SEQ || r->seqs_only ? 0 : on_batch(d, x, p + sizeof fs, len - (uint32_t)sizeof fs);
}

/* Replays one journal into the open batch (seqs_only: takes its frame seqs
 * alone). A record cut short by the kill ends the file; a malformed one
 * (not ours) stops it with an error. */
static int replay_file(struct daemon *d, const char *path, bool seqs_only) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    int err = -errno;
    if (fd >= 0)
      close(fd);
    return err;
  }
  uint8_t *buf;
  size_t got;
  int err = state_read_fd(fd, (size_t)st.st_size, &buf, &got);
  if (err != 0)
    return err;
  struct replay r = {.seqs_only = seqs_only};
  int rc = 0;
  for (size_t off = 0; rc == 0 && off + sizeof(struct jnl_rec) <= got;) {
    struct jnl_rec h;
    memcpy(&h, buf + off, sizeof h);
    size_t next = off + sizeof h + PAD8(h.len);
    if (next > got)
      break; /* cut short by the kill */
    const uint8_t *p = buf + off + sizeof h;
    struct replayed *x = h.kind == JNL_IDENT || h.kind == JNL_TABLE ? NULL : find(&r, h.sid);
    if (h.kind == JNL_IDENT)
      rc = on_ident(d, &r, h.sid, p, h.len);
    else if (h.kind == JNL_TABLE)
      rc = frameseq_import(d, p, h.len);
    else if (!x)
      rc = -EBADMSG;
    else if (h.kind == JNL_BATCH_SEQ || h.kind == JNL_SEQ)
      rc = on_seq(d, &r, x, h.kind, p, h.len);
    else if (h.kind != JNL_REGS && h.kind != JNL_BATCH && h.kind != JNL_STATS)
      rc = -EBADMSG;
    else if (r.seqs_only)
      rc = 0;
    else if (h.kind == JNL_REGS)
      rc = on_regs(x, p, h.len);
    else if (h.kind == JNL_BATCH)
      rc = on_batch(d, x, p, h.len);
    else
      rc = on_stats(d, x, p, h.len);
    off = next;
  }
  for (size_t i = 0; i < r.n; i++) {
    free(r.v[i].strs);
    validate_free(&r.v[i].slot);
  }
  free(r.v);
  free(buf);
  return rc;
}

static int seq_of(const char *name, uint64_t *seq) {
  char *end;
  unsigned long long v = strtoull(name, &end, 10);
  if (end == name || strcmp(end, ".jnl") != 0)
    return -1;
  *seq = v;
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* At start: the table as the whole journal of the open batch. Written
 * aside and renamed over it: a journal of that seq left by the killed
 * daemon was replayed into the batch just sealed, and must not be again. */
static int carry_fresh(struct daemon *d, struct journal *j) {
  char path[4200], tmp[4300];
  if (j->fd >= 0)
    close(j->fd);
  j->fd = -1;
  path_of(j, d->spool.next_seq, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.new", path);
  uint8_t *tab;
  ssize_t got = frameseq_export(d, &tab);
  if (got < 0) {
    fprintf(stderr, "siox-daemon: %s: %s; the replayed journals are kept\n", path, strerror((int)-got));
    return (int)got;
  }
  size_t n = (size_t)got;
  struct jnl_rec r = {JNL_TABLE, (uint32_t)n, 0};
  static const uint8_t zeros[8];
  struct iovec v[3] = {{&r, sizeof r}, {tab, n}, {(void *)zeros, PAD8(n) - n}};
  int fd = n ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1, rc = 0;
  if (n && fd < 0)
    rc = -errno;
  else if (n && writev(fd, v, 3) != (ssize_t)(sizeof r + PAD8(n)))
    rc = -EIO;
  if (fd >= 0 && close(fd) < 0 && rc == 0)
    rc = -errno;
  if (n && rc == 0 && rename(tmp, path) < 0)
    rc = -errno;
  if (!n && unlink(path) < 0 && errno != ENOENT) /* nothing to carry: no old journal of that seq either */
    rc = -errno;
  free(tab);
  if (rc < 0)
    fprintf(stderr, "siox-daemon: %s: %s; the replayed journals are kept\n", path, strerror(-rc));
  return rc;
}

int journal_replay(struct daemon *d) {
  struct journal *j = get(d);
  if (!j)
    return -ENOMEM;
  int rc = state_mkdirs(j->dir, 0700);
  DIR *dir = rc == 0 ? opendir(j->dir) : NULL;
  if (!dir)
    return rc < 0 ? rc : -errno;
  uint64_t *seqs = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(dir));) {
    uint64_t s;
    if (seq_of(e->d_name, &s) < 0)
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 8;
      uint64_t *ns = realloc(seqs, cap * sizeof *ns);
      if (!ns)
        break;
      seqs = ns;
    }
    seqs[n++] = s;
  }
  closedir(dir);
  if (n)
    qsort(seqs, n, sizeof *seqs, cmp_u64);
  uint64_t first = d->spool.next_seq, before = d->ctr.journal_replayed;
  size_t replayed = 0;
  for (size_t i = 0; i < n; i++) {
    char path[4200];
    path_of(j, seqs[i], path, sizeof path);
    /* Spooled (or even acknowledged) before the kill: its frame seqs only. */
    int r = replay_file(d, path, seqs[i] < first);
    if (r < 0)
      fprintf(stderr, "siox-daemon: journal %s: %s; replayed what precedes the fault\n", path, strerror(-r));
    replayed += seqs[i] >= first;
  }
  if (replayed) {
    fprintf(stderr, "siox-daemon: replayed %" PRIu64 " activities from %zu journal(s) of unsealed batches\n",
            d->ctr.journal_replayed - before, replayed);
    j->replaying = true; /* its journal_sealed removes nothing: done below */
    rc = daemon_seal_now(d);
    j->replaying = false;
  }
  /* A spooled batch's journal is redundant once its frame seqs are in the
   * new open batch's journal; if the seal failed the block stays open
   * (retried) and its journals stay for the next start. */
  bool carried = rc == 0 && carry_fresh(d, j) == 0;
  for (size_t i = 0; carried && i < n; i++) {
    char path[4200];
    path_of(j, seqs[i], path, sizeof path);
    if (seqs[i] != d->spool.next_seq) /* that one was replaced by the table */
      unlink(path);
  }
  free(seqs);
  return 0;
}
