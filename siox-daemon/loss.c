/*
 * Loss accounting: every activity a client made is stored once or counted
 * as dropped, with the place it was dropped, and the counts reach the
 * warehouse (table client_stats) by a path the loss cannot block:
 *
 *  - A client's STATS (its own cumulative counters: made, dropped in the
 *    client, dropped at exit) and the daemon's drops of that client's
 *    records (deltas since the last sealed batch) form one Stats record per
 *    session in the open batch, overwritten in place, and journaled.
 *  - While the spool is full the daemon keeps reading every client: BATCH
 *    records are discarded and counted (LOSS_SPOOL), registrations and
 *    STATS are kept, so the counts wait in the open batch, which is sealed
 *    once the spool has room again.
 *  - Every read is acknowledged (ACK: bytes consumed), so a client knows
 *    what the daemon has and resends the rest after a reconnect.
 *  - A client that exits while no daemon takes its records leaves a loss
 *    file in <socket>.lost/ (see siox-client/src/exit_loss.c); the daemon
 *    takes those files on start and every LOSS_SCAN_MS.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"

#define LOSS_SCAN_MS 2000
#define LOSS_FILE_MAX (40u << 20) /* the client spills at most 32 MiB */

static uint64_t next_sid = 1;

void loss_hello(struct daemon *d, struct loss_state *ls, uint32_t clock_flags, uint64_t tsc0, int64_t ns0) {
  (void)d;
  ls->sid = next_sid++;
  ls->clock_flags = clock_flags;
  ls->tsc0 = tsc0;
  ls->ns0 = ns0;
}

/* The deltas of an earlier generation went out with that (sealed) batch. */
static void roll(struct daemon *d, struct loss_state *ls) {
  if (ls->stats_gen != d->batcher.generation)
    ls->cur.daemon_dropped_spool = ls->cur.daemon_dropped_invalid = 0;
}

static int put(struct daemon *d, struct loss_state *ls, struct batcher_slot *slot, const struct client_ident *who) {
  journal_stats(d, ls, slot, who);
  int rc = batcher_put_stats(&d->batcher, slot, who, &ls->cur, &ls->stats_gen, &ls->stats_idx);
  if (rc == 0)
    daemon_after_add(d);
  return rc;
}

int loss_on_stats(struct daemon *d, struct loss_state *ls, struct batcher_slot *slot, const struct client_ident *who,
                  const uint8_t *p, uint32_t len, uint64_t *client_dropped) {
  struct siox_cw_stats st = {0};
  if (len != SIOX_CW_STATS_V1_LEN && len != sizeof st)
    return -EBADMSG;
  memcpy(&st, p, len);
  roll(d, ls);
  if (st.dropped_exit > ls->cur.dropped_exit)
    d->ctr.client_dropped_exit += st.dropped_exit - ls->cur.dropped_exit;
  ls->cur.activities = st.activities;
  ls->cur.records = st.records;
  ls->cur.dropped = st.dropped;
  ls->cur.dropped_exit = st.dropped_exit;
  *client_dropped = st.dropped;
  return put(d, ls, slot, who);
}

int loss_drop(struct daemon *d, struct loss_state *ls, struct batcher_slot *slot, const struct client_ident *who,
              enum loss_place place, uint64_t n) {
  if (n == 0)
    return 0;
  roll(d, ls);
  if (place == LOSS_SPOOL) {
    ls->cur.daemon_dropped_spool += n;
    d->ctr.dropped_spool += n;
  } else {
    ls->cur.daemon_dropped_invalid += n;
  }
  return put(d, ls, slot, who);
}

int loss_drop_frame(struct daemon *d, struct loss_state *ls, struct batcher_slot *slot, const struct client_ident *who,
                    uint32_t seq, const uint8_t *recs, size_t len) {
  int rc = loss_drop(d, ls, slot, who, LOSS_SPOOL, loss_count_activities(recs, len));
  if (rc < 0)
    return rc;
  if (seq)
    journal_taken(d, ls, slot, who, seq);
  frameseq_take(d, who->uid, who->nonce, seq);
  return 0;
}

uint64_t loss_count_activities(const uint8_t *recs, size_t len) {
  uint64_t k = 0;
  for (size_t r = 0; r + sizeof(struct siox_cw_rec_hdr) <= len;) {
    struct siox_cw_rec_hdr h;
    memcpy(&h, recs + r, sizeof h);
    if (h.words == 0)
      break;
    k += h.type == SIOX_REC_ACTIVITY;
    r += (size_t)h.words * 8;
  }
  return k;
}

bool loss_ack(uv_stream_t *client, uint64_t consumed) {
  struct {
    struct siox_cw_frame_hdr h;
    struct siox_cw_ack a;
  } f = {{SIOX_CW_MAGIC, SIOX_CW_VERSION, SIOX_CW_ACK, sizeof(struct siox_cw_ack), 0}, {consumed}};
  uv_buf_t b = uv_buf_init((char *)&f, sizeof f);
  return uv_try_write(client, &b, 1) == (int)sizeof f; /* all or nothing for 24 bytes on a stream socket */
}

/* ---------------------------------------------------------------------------
 * Loss files: <socket>.lost/<pid>-<nonce>.loss = HELLO frame + STATS frame
 * ------------------------------------------------------------------------- */
struct loss_dir {
  char path[4096];
  uv_timer_t timer;
};

static void on_scan(uv_timer_t *t) { loss_dir_scan(t->data); }

int loss_dir_start(struct daemon *d) {
  struct loss_dir *l = calloc(1, sizeof *l);
  if (!l)
    return -ENOMEM;
  snprintf(l->path, sizeof l->path, "%s.lost", d->cfg.socket_path);
  /* Anyone may add a file (their process's loss), no one may list, read or
   * remove another user's (sticky, no read bit for others). */
  if (mkdir(l->path, 01733) < 0 && errno != EEXIST) {
    int err = -errno;
    fprintf(stderr, "siox-daemon: loss directory %s: %s\n", l->path, strerror(errno));
    free(l);
    return err;
  }
  chmod(l->path, 01733);
  d->loss_dir = l;
  uv_timer_init(d->loop, &l->timer);
  l->timer.data = d;
  uv_timer_start(&l->timer, on_scan, 0, LOSS_SCAN_MS);
  return 0;
}

void loss_dir_stop(struct daemon *d) {
  if (!d->loss_dir)
    return;
  uv_close((uv_handle_t *)&d->loss_dir->timer, NULL);
}

/* Reads one frame of `type` at *off in buf; returns its payload (its
 * length and seq in *len, *seq) or NULL. */
static const uint8_t *frame_at(const uint8_t *buf, size_t n, size_t *off, uint16_t type, uint32_t *len,
                               uint32_t *seq) {
  struct siox_cw_frame_hdr h;
  const char *why;
  if (n - *off < sizeof h)
    return NULL;
  memcpy(&h, buf + *off, sizeof h);
  if (cw_frame_check(&h, &why) < 0 || h.type != type || n - *off - sizeof h < h.length)
    return NULL;
  const uint8_t *p = buf + *off + sizeof h;
  *off += sizeof h + h.length;
  *len = h.length;
  *seq = h.seq;
  return p;
}

/* One spilled BATCH of a loss file, as session.c takes a client's: the
 * frames its daemon never acknowledged may have been taken (frameseq.c). */
static int take_batch(struct daemon *d, struct loss_state *ls, struct batcher_slot *slot,
                      const struct client_ident *who, uint32_t seq, const uint8_t *p, uint32_t len) {
  struct siox_cw_batch b;
  const char *why;
  if (len < sizeof b)
    return -EBADMSG;
  memcpy(&b, p, sizeof b);
  if (b.bytes != len - sizeof b)
    return -EBADMSG;
  if (frameseq_resent(d, who->uid, who->nonce, seq))
    return 0;
  if (d->reading_paused && b.thread != 0) {
    if (cw_walk(p + sizeof b, b.bytes, NULL, NULL, &why) < 0)
      return -EBADMSG;
    return loss_drop_frame(d, ls, slot, who, seq, p + sizeof b, b.bytes);
  }
  journal_session(d, ls, slot, who);
  struct clock_conv cc;
  clock_conv_init(&cc, ls->clock_flags, ls->tsc0, ls->ns0, b.tsc_ref, b.ns_ref);
  clock_conv_shift(&cc, d->cfg.test_clock_shift_ns);
  uint64_t before = d->batcher.activities, invalid = slot->dropped_validation;
  /* The walk checks every record: a malformed one adds nothing. */
  int rc = batcher_add_records(&d->batcher, slot, who, &cc, p + sizeof b, b.bytes, &d->ctr);
  if (rc < 0)
    return rc;
  journal_batch(d, ls, slot, who, seq, p, len);
  frameseq_take(d, who->uid, who->nonce, seq);
  d->ctr.activities_received += d->batcher.activities - before;
  /* Validated as a live session's records (the file starts with the whole
   * registration log): what it refused is counted where it happened. */
  if (rc == 0)
    rc = loss_drop(d, ls, slot, who, LOSS_INVALID, slot->dropped_validation - invalid);
  daemon_after_add(d);
  return rc;
}

/* Takes one loss file: the process is who its HELLO says, with the uid of
 * the file's owner (the kernel's word) and the pid of its name. Its spilled
 * records (BATCH frames) are taken as a session's, its STATS last. */
static int take_file(struct daemon *d, int dfd, const char *name) {
  unsigned long pid;
  if (sscanf(name, "%lu-", &pid) != 1)
    return -EBADMSG;
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > LOSS_FILE_MAX) {
    int err = fd < 0 ? -errno : -EBADMSG;
    if (fd >= 0)
      close(fd);
    return err;
  }
  uint8_t *buf;
  size_t n;
  int err = state_read_fd(fd, (size_t)st.st_size, &buf, &n);
  if (err != 0)
    return err;
  size_t off = 0;
  uint32_t hlen, blen, fseq;
  struct siox_cw_hello h;
  const uint8_t *hp = frame_at(buf, n, &off, SIOX_CW_HELLO, &hlen, &fseq), *bp;
  if (!hp || hlen < sizeof h) {
    free(buf);
    return -EBADMSG;
  }
  memcpy(&h, hp, sizeof h);
  if ((size_t)sizeof h + h.exe_len + h.args_len + h.job_len != hlen) {
    free(buf);
    return -EBADMSG;
  }
  char *strs = malloc((size_t)hlen + 3), *dst = strs;
  const char *src = (const char *)hp + sizeof h, *parts[3];
  uint16_t lens[3] = {h.exe_len, h.args_len, h.job_len};
  for (int i = 0; strs && i < 3; i++) {
    memcpy(dst, src, lens[i]);
    dst[lens[i]] = '\0';
    parts[i] = dst;
    dst += lens[i] + 1;
    src += lens[i];
  }
  int rc = strs ? 0 : -ENOMEM;
  /* HELLO strings are unpadded: move the frames after it to the (malloc
   * aligned) start, so that records are read in place, 8-byte aligned. */
  memmove(buf, buf + off, n - off);
  n -= (ssize_t)off;
  off = 0;
  struct client_ident who = {(uint32_t)pid, (uint32_t)st.st_uid, h.nonce, d->hostname, NULL, NULL, NULL};
  if (strs)
    who.exe = parts[0], who.args = parts[1], who.job = parts[2];
  struct loss_state ls = {0};
  struct batcher_slot slot = {0};
  loss_hello(d, &ls, h.clock_flags, h.tsc0, h.ns0);
  while (rc == 0 && (bp = frame_at(buf, n, &off, SIOX_CW_BATCH, &blen, &fseq)))
    rc = take_batch(d, &ls, &slot, &who, fseq, bp, blen);
  uint64_t dropped;
  const uint8_t *sp = rc == 0 ? frame_at(buf, n, &off, SIOX_CW_STATS, &blen, &fseq) : NULL;
  if (rc == 0)
    rc = sp ? loss_on_stats(d, &ls, &slot, &who, sp, blen, &dropped) : -EBADMSG;
  if (rc == 0) {
    d->ctr.loss_files++;
    d->ctr.client_dropped_closed += dropped;
  }
  validate_free(&slot);
  free(strs);
  free(buf);
  return rc;
}

void loss_dir_scan(struct daemon *d) {
  struct loss_dir *l = d->loss_dir;
  DIR *dir = l ? opendir(l->path) : NULL;
  if (!dir)
    return;
  for (struct dirent *e; (e = readdir(dir));) {
    size_t n = strlen(e->d_name);
    if (e->d_name[0] == '.' || n < 5 || strcmp(e->d_name + n - 5, ".loss") != 0)
      continue;
    int rc = take_file(d, dirfd(dir), e->d_name);
    if (rc < 0)
      fprintf(stderr, "siox-daemon: loss file %s/%s: %s; removed\n", l->path, e->d_name, strerror(-rc));
    /* Journaled (or refused): the file has served. */
    unlinkat(dirfd(dir), e->d_name, 0);
  }
  closedir(dir);
}
