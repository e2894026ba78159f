/*
 * A client's job id, as the daemon sees it rather than as the client's
 * HELLO claims it (issue 9: one user must not file activities under another
 * user's job). In order of trust:
 *   1. the Slurm job of the process's cgroup (".../job_<id>/..." on a line
 *      naming slurm): set by slurmd, out of the user's reach;
 *   2. the process's environment at exec (/proc/PID/environ): SIOX_JOB_ID,
 *      then the batch systems' SLURM_JOB_ID, PBS_JOBID, LSB_JOBID,
 *      FLUX_JOB_ID, COBALT_JOBID (the client's own order);
 *   3. the HELLO's claim, stored as "claimed:<id>" so that nobody mistakes it
 *      for the batch system's word: when /proc cannot be read (a daemon not
 *      run as root and another user's client), or the claim is not in the
 *      environment (the process set it after exec);
 *   4. the claim as it is for a client that has already exited (a forked
 *      child that connects at exit): nothing is left to check it against.
 *      Neither environment nor claim proves membership of a job, which is
 *      why the warehouse keys jobs by (uid, job id).
 * /proc/PID is read only if it belongs to the peer's uid (SO_PEERCRED), so a
 * recycled pid cannot lend another user's environment.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"

#define ENVIRON_MAX (256u << 10) /* ARG_MAX-sized environments are read up to here */

static const char *const job_vars[] = {"SIOX_JOB_ID", "SLURM_JOB_ID", "PBS_JOBID",
                                       "LSB_JOBID",   "FLUX_JOB_ID",  "COBALT_JOBID"};

/* Reads file `name` of /proc/PID (dirfd) into buf (cap bytes, NUL-terminated
 * there); *len excludes the terminator. Returns buf, or NULL on failure. */
static char *read_proc(int dirfd, const char *name, char *buf, size_t cap, size_t *len) {
  int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  size_t n = 0, max = cap - 1;
  ssize_t r = 0;
  while (n < max && (r = read(fd, buf + n, max - n)) > 0) n += (size_t)r;
  close(fd);
  if (r < 0) return NULL;
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* The Slurm job id in a cgroup file's text, copied to out; 0 or -ENOENT. */
int job_id_from_cgroup(const char *text, char *out, size_t cap) {
  for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    const char *end = strchr(line, '\n');
    size_t ll = end ? (size_t)(end - line) : strlen(line);
    const char *slurm = memmem(line, ll, "slurm", 5);
    const char *job = memmem(line, ll, "/job_", 5);
    if (!slurm || !job) continue;
    job += 5;
    size_t n = 0;
    while (job + n < line + ll && job[n] >= '0' && job[n] <= '9') n++;
    if (n == 0 || n >= cap) continue;
    memcpy(out, job, n);
    out[n] = '\0';
    return 0;
  }
  return -ENOENT;
}

/* The first job variable of a NUL-separated environment block. */
int job_id_from_environ(const char *env, size_t len, char *out, size_t cap) {
  for (size_t v = 0; v < sizeof job_vars / sizeof job_vars[0]; v++) {
    size_t kl = strlen(job_vars[v]);
    for (const char *e = env; e < env + len; e += strnlen(e, (size_t)(env + len - e)) + 1) {
      size_t el = strnlen(e, (size_t)(env + len - e));
      if (el > kl + 1 && memcmp(e, job_vars[v], kl) == 0 && e[kl] == '=' && el - kl - 1 < cap) {
        memcpy(out, e + kl + 1, el - kl - 1);
        out[el - kl - 1] = '\0';
        return 0;
      }
    }
  }
  return -ENOENT;
}

enum job_source job_id_of_peer(uint32_t pid, uint32_t uid, const char *claimed, char *out, size_t cap) {
  /* One buffer for every HELLO (the daemon's loop thread asks): a 256 KiB
   * malloc and free per client went to the kernel as brk calls (2.9 per
   * short-lived client process, strace) and faults on fresh heap pages. */
  static char buf[ENVIRON_MAX + 1];
  char path[64];
  struct stat st;
  size_t len = 0;
  out[0] = '\0';
  snprintf(path, sizeof path, "/proc/%u", pid);
  int dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int gone = dirfd < 0 && errno == ENOENT;
  int mine = dirfd >= 0 && fstat(dirfd, &st) == 0 && st.st_uid == uid;
  char *cg = mine ? read_proc(dirfd, "cgroup", buf, (64u << 10) + 1, &len) : NULL;
  int found = cg && job_id_from_cgroup(cg, out, cap) == 0;
  if (found) return close(dirfd), JOB_CGROUP;
  char *env = mine ? read_proc(dirfd, "environ", buf, sizeof buf, &len) : NULL;
  if (dirfd >= 0) close(dirfd);
  /* An exited process (gone, or a zombie: its environ reads empty) has no
   * environment left to ask: its claim is all there is. */
  gone |= env && len == 0;
  found = env && job_id_from_environ(env, len, out, cap) == 0;
  if (found) return JOB_ENVIRON;
  if (!*claimed) return JOB_NONE;
  if (gone) return snprintf(out, cap, "%s", claimed), JOB_EXITED;
  snprintf(out, cap, "claimed:%s", claimed);
  return JOB_CLAIMED;
}
