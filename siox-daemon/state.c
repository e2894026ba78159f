/*
 * Persistent daemon identity: a random 64-bit id in <state-dir>/daemon.id,
 * created on first start. The server keys acknowledgements and idempotent
 * ingest by it, so it must survive restarts of the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"

static int read_id(const char *path, uint64_t *id) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -errno;
  unsigned long long v = 0;
  int rc = fscanf(f, "%llx", &v) == 1 && v != 0 ? 0 : -EBADMSG;
  fclose(f);
  *id = v;
  return rc;
}

static int create_id(const char *path, uint64_t *id) {
  uint64_t v = 0;
  while (v == 0) /* 0 means "none" on the wire */
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
      return -errno;
  /* O_EXCL: two daemons racing on one state dir must not both win. */
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return -errno;
  char line[32];
  int n = snprintf(line, sizeof line, "%016" PRIx64 "\n", v);
  int rc = write(fd, line, (size_t)n) == n && fsync(fd) == 0 ? 0 : -EIO;
  close(fd);
  *id = v;
  return rc;
}

int state_daemon_id(const char *state_dir, uint64_t *id) {
  char path[4096];
  snprintf(path, sizeof path, "%s/daemon.id", state_dir);
  int rc = read_id(path, id);
  if (rc == -ENOENT) {
    rc = create_id(path, id);
    if (rc == -EEXIST)
      rc = read_id(path, id);
  }
  return rc;
}

/* mkdir -p; the spool uses 0700 as it holds other users' activity data. */
int state_mkdirs(const char *path, unsigned mode) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf)
    return -EINVAL;
  memcpy(buf, path, n + 1);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(buf, mode) < 0 && errno != EEXIST)
      return -errno;
    *p = '/';
  }
  if (mkdir(buf, mode) < 0 && errno != EEXIST)
    return -errno;
  return 0;
}

int state_read_fd(int fd, size_t size, uint8_t **out, size_t *len) {
  uint8_t *buf = malloc(size ? size : 1);
  size_t got = 0;
  int rc = buf ? 0 : -ENOMEM;
  while (rc == 0 && got < size) { /* a regular file may still return short */
    ssize_t n = read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      rc = -errno;
    else if (n == 0)
      break;
    else
      got += (size_t)n;
  }
  close(fd);
  if (rc != 0) {
    free(buf);
    return rc;
  }
  *out = buf;
  *len = got;
  return 0;
}
