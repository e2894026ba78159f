/*
 * Quarantine: a batch the server rejected as never acceptable (Error kind
 * ERROR_REJECTED: it failed the server's validation or would not decode)
 * is never resent and never silently dropped. The daemon moves it out of the
 * spool to <state-dir>/quarantine/<seq>.sxb (same format as a spool file),
 * writes the server's reason to <seq>.reason, counts it, logs it, and the
 * uplink then sends Skip{seq, activities, reason} in its place: the server
 * records the loss in quarantined_batches and accepts seq + 1 next. Its
 * spool entry stays (marked quarantined) until the Skip is acknowledged, so
 * a restart in between sends the Skip again (quarantine_load).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

static void qpath(const struct daemon *d, char *out, size_t n, uint64_t seq, const char *suffix) {
  if (suffix)
    snprintf(out, n, "%s/quarantine/%" PRIu64 "%s", d->cfg.state_dir, seq, suffix);
  else
    snprintf(out, n, "%s/quarantine", d->cfg.state_dir);
}

static int write_reason(const char *path, const char *reason) {
  FILE *f = fopen(path, "w");
  if (!f)
    return -errno;
  fprintf(f, "%s\n", reason);
  if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
    fclose(f);
    return -EIO;
  }
  return fclose(f) == 0 ? 0 : -EIO;
}

/* The spool header of a quarantined batch: how many activities it held. */
static int read_header(const struct daemon *d, uint64_t seq, struct spool_hdr *h) {
  char path[4096];
  qpath(d, path, sizeof path, seq, ".sxb");
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  ssize_t n = read(fd, h, sizeof *h);
  close(fd);
  return n == (ssize_t)sizeof *h && h->magic == SPOOL_MAGIC && h->seq == seq ? 0 : -EBADMSG;
}

int quarantine_batch(struct daemon *d, uint64_t seq, const char *reason) {
  char dir[4096], path[4096];
  struct spool_hdr h = {0};
  qpath(d, dir, sizeof dir, 0, NULL);
  int rc = state_mkdirs(dir, 0700);
  if (rc == 0)
    rc = spool_quarantine(&d->spool, seq, dir);
  if (rc < 0) {
    fprintf(stderr, "siox-daemon: cannot quarantine batch %" PRIu64 ": %s (it stays in the spool and is resent)\n", seq,
            strerror(-rc));
    return rc;
  }
  qpath(d, path, sizeof path, seq, ".reason");
  rc = write_reason(path, reason);
  if (rc < 0)
    fprintf(stderr, "siox-daemon: writing %s: %s\n", path, strerror(-rc));
  read_header(d, seq, &h);
  d->ctr.batches_quarantined++;
  d->ctr.activities_quarantined += h.activities;
  fprintf(stderr,
          "siox-daemon: batch %" PRIu64 " (%u activities) quarantined in %s/%" PRIu64 ".sxb: the server rejects it: %s\n",
          seq, h.activities, dir, seq, reason);
  return 0;
}

int quarantine_info(const struct daemon *d, uint64_t seq, uint32_t *activities, char *reason, size_t n) {
  struct spool_hdr h;
  char path[4096];
  int rc = read_header(d, seq, &h);
  *activities = rc == 0 ? h.activities : 0;
  qpath(d, path, sizeof path, seq, ".reason");
  FILE *f = fopen(path, "r");
  if (!f || !fgets(reason, (int)n, f))
    snprintf(reason, n, "%s", "rejected by the server (reason file unreadable)");
  if (f)
    fclose(f);
  reason[strcspn(reason, "\n")] = '\0';
  return rc;
}

int quarantine_load(struct daemon *d) {
  char dir[4096];
  qpath(d, dir, sizeof dir, 0, NULL);
  DIR *dh = opendir(dir);
  if (!dh)
    return errno == ENOENT ? 0 : -errno;
  struct dirent *de;
  int rc = 0;
  while (rc == 0 && (de = readdir(dh))) {
    char *end;
    unsigned long long seq = strtoull(de->d_name, &end, 10);
    /* Batches at or below the acked floor were skipped already. */
    if (end == de->d_name || strcmp(end, ".sxb") != 0 || seq <= d->spool.state_seq)
      continue;
    rc = spool_add_quarantined(&d->spool, seq);
    if (rc == 0)
      fprintf(stderr, "siox-daemon: quarantined batch %llu not yet skipped at the server; sending its Skip\n", seq);
  }
  closedir(dh);
  return rc;
}
