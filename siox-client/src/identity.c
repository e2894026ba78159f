/*
 * Process identity sent in HELLO, the first frame of every connection: a
 * random nonce per process incarnation (new after fork), the clock pair of
 * initialisation, and the executable, command line and batch job id.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include "client.h"

#define ARGS_MAX 32768u /* longer command lines are cut (and end in "...") */

static uint64_t nonce;
static uint64_t tsc0;
static int64_t ns0;

/* Why getrandom: two processes of one job must not share a nonce, and pid
 * plus time can repeat across hosts and pid reuse. */
void siox__identity_init(void) {
  if (getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != (ssize_t)sizeof nonce) {
    uint64_t t;
    int64_t n;
    siox__clock_pair(&t, &n);
    nonce = (uint64_t)n ^ (t << 17) ^ ((uint64_t)getpid() << 40);
  }
  if (nonce == 0) nonce = 1;
  siox__clock_pair(&tsc0, &ns0);
}

/* Reads /proc/self/cmdline into buf, NULs turned into spaces. */
static size_t read_args(char *buf, size_t cap) {
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t n = 0;
  ssize_t r;
  while (n < cap && (r = read(fd, buf + n, cap - n)) > 0) n += (size_t)r;
  close(fd);
  while (n > 0 && buf[n - 1] == '\0') n--;
  for (size_t i = 0; i < n; i++)
    if (buf[i] == '\0') buf[i] = ' ';
  if (n == cap) memcpy(buf + cap - 3, "...", 3);
  return n;
}

size_t siox__identity_args(char *buf, size_t cap) {
  return read_args(buf, cap < ARGS_MAX ? cap : ARGS_MAX);
}

static const char *job_id(void) {
  const char *vars[] = {SIOX_ENV_JOB, "SLURM_JOB_ID", "PBS_JOBID"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return v;
  }
  return "";
}

/* The caller owns *out and frees it. */
int siox__hello_build(uint8_t **out, uint32_t *len) {
  char exe[4096];
  ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof exe);
  if (exe_len < 0) exe_len = 0;
  const char *job = job_id();
  size_t job_len = strnlen(job, SIOX_CW_MAX_STR);
  uint8_t *p = malloc(sizeof(struct siox_cw_hello) + (size_t)exe_len + ARGS_MAX + job_len);
  if (!p) return -ENOMEM;
  struct siox_cw_hello *h = (void *)p;
  char *s = (char *)(h + 1);
  memcpy(s, exe, (size_t)exe_len);
  size_t args_len = read_args(s + exe_len, ARGS_MAX);
  memcpy(s + exe_len + args_len, job, job_len);
  memset(h, 0, sizeof *h);
  h->nonce = nonce;
  h->tsc0 = tsc0;
  h->ns0 = ns0;
  h->clock_flags = siox__clock_tsc ? SIOX_CW_CLOCK_TSC : 0;
  h->exe_len = (uint16_t)exe_len;
  h->args_len = (uint16_t)args_len;
  h->job_len = (uint16_t)job_len;
  *out = p;
  *len = (uint32_t)(sizeof *h + (size_t)exe_len + args_len + job_len);
  return 0;
}
