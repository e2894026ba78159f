/*
 * Spool: every sealed batch is written to <state-dir>/spool/<seq>.sxb before
 * the uplink may send it, and unlinked only once the server has acknowledged
 * it. On start the files left behind are replayed in seq order. The spool is
 * bounded; when full the daemon stops reading clients instead of deleting
 * anything unacknowledged.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"

static void spool_path(const struct spool *s, uint64_t seq, const char *suffix, char *out, size_t n) {
  snprintf(out, n, "%s/%" PRIu64 ".sxb%s", s->dir, seq, suffix);
}

static int ring_push(struct spool *s, uint64_t seq, uint64_t bytes) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    struct spool_entry *e = malloc(cap * sizeof *e);
    if (!e)
      return -ENOMEM;
    for (size_t i = 0; i < s->n; i++)
      e[i] = *spool_at(s, i);
    free(s->ents);
    s->ents = e;
    s->cap = cap;
    s->head = 0;
  }
  s->ents[(s->head + s->n) % s->cap] = (struct spool_entry){seq, bytes, false};
  s->n++;
  s->bytes += bytes;
  return 0;
}

/* Writes the whole buffer, retrying short writes. */
static int write_all(int fd, const void *p, size_t n) {
  const uint8_t *b = p;
  while (n > 0) {
    ssize_t w = write(fd, b, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -errno;
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Replaces path with content atomically (tmp + fdatasync + rename). */
static int write_file_atomic(const char *path, const void *a, size_t alen, const void *b, size_t blen) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return -errno;
  int rc = write_all(fd, a, alen);
  if (rc == 0 && blen)
    rc = write_all(fd, b, blen);
  if (rc == 0 && fdatasync(fd) < 0)
    rc = -errno;
  close(fd);
  if (rc == 0 && rename(tmp, path) < 0)
    rc = -errno;
  if (rc < 0)
    unlink(tmp);
  return rc;
}

static int write_state(struct spool *s, uint64_t seq) {
  char line[32];
  int n = snprintf(line, sizeof line, "%" PRIu64 "\n", seq);
  int rc = write_file_atomic(s->state_path, line, (size_t)n, NULL, 0);
  if (rc == 0)
    s->state_seq = seq;
  return rc;
}

static uint64_t read_state(const char *path) {
  FILE *f = fopen(path, "r");
  unsigned long long v = 0;
  if (f) {
    if (fscanf(f, "%llu", &v) != 1)
      v = 0;
    fclose(f);
  }
  return v;
}

static int cmp_entry(const void *a, const void *b) {
  uint64_t x = ((const struct spool_entry *)a)->seq, y = ((const struct spool_entry *)b)->seq;
  return x < y ? -1 : x > y;
}

/* Collects <seq>.sxb files into s (sorted) and removes stale temporaries. */
static int scan_dir(struct spool *s) {
  DIR *dir = opendir(s->dir);
  if (!dir)
    return -errno;
  struct dirent *de;
  int rc = 0;
  while (rc == 0 && (de = readdir(dir))) {
    char *end;
    unsigned long long seq = strtoull(de->d_name, &end, 10);
    if (end == de->d_name || seq == 0)
      continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", s->dir, de->d_name);
    if (strcmp(end, ".sxb.tmp") == 0) {
      unlink(path); /* a write that never completed was never sent */
      continue;
    }
    struct stat st;
    if (strcmp(end, ".sxb") != 0 || stat(path, &st) < 0)
      continue;
    rc = ring_push(s, seq, (uint64_t)st.st_size);
  }
  closedir(dir);
  if (rc == 0 && s->n > 0)
    qsort(s->ents, s->n, sizeof *s->ents, cmp_entry);
  return rc;
}

int spool_open(struct spool *s, const char *state_dir, uint64_t max_bytes) {
  memset(s, 0, sizeof *s);
  s->max_bytes = max_bytes;
  if (asprintf(&s->dir, "%s/spool", state_dir) < 0 || asprintf(&s->state_path, "%s/seq", state_dir) < 0) {
    free(s->dir);
    s->dir = NULL;
    return -ENOMEM;
  }
  int rc = state_mkdirs(s->dir, 0700);
  if (rc == 0)
    rc = scan_dir(s);
  if (rc < 0) {
    spool_close(s);
    return rc;
  }
  s->state_seq = read_state(s->state_path);
  uint64_t last = s->state_seq;
  if (s->n > 0 && spool_at(s, s->n - 1)->seq > last)
    last = spool_at(s, s->n - 1)->seq;
  s->next_seq = last + 1;
  return 0;
}

void spool_close(struct spool *s) {
  free(s->dir);
  free(s->state_path);
  free(s->ents);
  memset(s, 0, sizeof *s);
}

bool spool_full(const struct spool *s) { return s->bytes >= s->max_bytes; }

int spool_write_file(const struct spool *s, const struct spool_batch *b) {
  char path[4096];
  spool_path(s, b->h.seq, "", path, sizeof path);
  return write_file_atomic(path, &b->h, sizeof b->h, b->block, b->h.block_len);
}

int spool_commit(struct spool *s, const struct spool_batch *b) {
  return ring_push(s, b->h.seq, sizeof b->h + b->h.block_len);
}

int spool_write(struct spool *s, const struct spool_batch *b) {
  int rc = spool_write_file(s, b);
  return rc < 0 ? rc : spool_commit(s, b);
}

int spool_read(const struct spool *s, uint64_t seq, struct spool_batch *out) {
  char path[4096];
  spool_path(s, seq, "", path, sizeof path);
  out->block = NULL;
  int rc = 0, fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  if (read(fd, &out->h, sizeof out->h) != (ssize_t)sizeof out->h)
    rc = -EIO;
  else if (out->h.magic != SPOOL_MAGIC || out->h.version != SPOOL_VERSION || out->h.seq != seq)
    rc = -EBADMSG;
  else if (!(out->block = malloc(out->h.block_len ? out->h.block_len : 1)))
    rc = -ENOMEM;
  else if (read(fd, out->block, out->h.block_len) != (ssize_t)out->h.block_len)
    rc = -EIO;
  close(fd);
  if (rc < 0)
    spool_batch_free(out);
  return rc;
}

int spool_ack(struct spool *s, uint64_t upto) {
  /* Persist the floor first: once the files are gone, it alone keeps seq
   * numbers from being reused after a restart. */
  if (upto > s->state_seq) {
    int rc = write_state(s, upto);
    if (rc < 0)
      return rc;
  }
  int count = 0;
  while (s->n > 0 && spool_at(s, 0)->seq <= upto) {
    char path[4096];
    const struct spool_entry *e = spool_at(s, 0);
    spool_path(s, e->seq, "", path, sizeof path);
    unlink(path);
    s->bytes -= e->bytes;
    s->head = (s->head + 1) % s->cap;
    s->n--;
    count++;
  }
  return count;
}

int spool_quarantine(struct spool *s, uint64_t seq, const char *qdir) {
  for (size_t i = 0; i < s->n; i++) {
    struct spool_entry *e = &s->ents[(s->head + i) % s->cap];
    if (e->seq != seq || e->quarantined)
      continue;
    char from[4096], to[4096];
    spool_path(s, seq, "", from, sizeof from);
    snprintf(to, sizeof to, "%s/%" PRIu64 ".sxb", qdir, seq);
    if (rename(from, to) < 0)
      return -errno;
    s->bytes -= e->bytes;
    e->bytes = 0;
    e->quarantined = true;
    return 0;
  }
  return -ENOENT;
}

int spool_add_quarantined(struct spool *s, uint64_t seq) {
  int rc = ring_push(s, seq, 0);
  if (rc < 0)
    return rc;
  /* Only at start, so re-sorting the whole ring is fine: make it linear. */
  struct spool_entry *lin = malloc(s->n * sizeof *lin);
  if (!lin)
    return -ENOMEM;
  for (size_t i = 0; i < s->n; i++)
    lin[i] = *spool_at(s, i);
  lin[s->n - 1].quarantined = true;
  qsort(lin, s->n, sizeof *lin, cmp_entry);
  memcpy(s->ents, lin, s->n * sizeof *lin);
  free(lin);
  s->head = 0;
  if (seq >= s->next_seq)
    s->next_seq = seq + 1;
  return 0;
}

void spool_batch_free(struct spool_batch *b) {
  free(b->block);
  b->block = NULL;
}
