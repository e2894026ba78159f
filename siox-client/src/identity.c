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

/* The executable and command line, read once by an application thread
 * (siox__identity_prepare): the flusher thread opens no descriptor
 * (own_fd.c says why). 0: not read, 1: being read, 2: ready. */
static char exe[4096];
static size_t exe_len;
static char args[ARGS_MAX];
static size_t args_len;
static _Atomic int prepared;

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
  /* A fork child whose parent was reading them (another thread, gone in
   * the child) reads them again. */
  int reading = 1;
  atomic_compare_exchange_strong(&prepared, &reading, 0);
}

/* The command line as the loader handed it to the constructors (glibc
 * passes argc, argv, envp to ELF initialisers, of preloaded and dlopen'ed
 * libraries too): the very strings /proc/self/cmdline shows, read without
 * the open/read/close of a /proc file (~0.1 ms in a new process here:
 * procfs makes that process's inodes on first use). */
static int main_argc;
static char **main_argv;

__attribute__((constructor)) static void keep_argv(int argc, char **argv, char **envp) {
  (void)envp;
  if (argc > 0 && argv) main_argc = argc, main_argv = argv;
}

/* argv joined with spaces into buf, as read_args makes it from /proc
 * (whose trailing NULs it drops: so are trailing empty arguments here). */
static size_t argv_args(char *buf, size_t cap) {
  int last = main_argc - 1;
  while (last >= 0 && (!main_argv[last] || main_argv[last][0] == '\0')) last--;
  size_t n = 0;
  for (int i = 0; i <= last && main_argv[i] && n < cap; i++) {
    if (i > 0) buf[n++] = ' ';
    size_t len = strnlen(main_argv[i], cap - n);
    memcpy(buf + n, main_argv[i], len);
    n += len;
  }
  if (n == cap) memcpy(buf + cap - 3, "...", 3);
  return n;
}

/* Reads /proc/self/cmdline into buf, NULs turned into spaces. */
static size_t read_args(char *buf, size_t cap) {
  if (main_argv) return argv_args(buf, cap);
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

void siox__identity_prepare(void) {
  int none = 0;
  if (!atomic_compare_exchange_strong(&prepared, &none, 1)) return;
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
  exe_len = n > 0 ? (size_t)n : 0;
  args_len = read_args(args, ARGS_MAX);
  atomic_store_explicit(&prepared, 2, memory_order_release);
}

/* The caller owns *out and frees it. Before siox__identity_prepare has
 * finished, the executable and command line are left empty. */
int siox__hello_build(uint8_t **out, uint32_t *len) {
  int ready = atomic_load_explicit(&prepared, memory_order_acquire) == 2;
  size_t exe_n = ready ? exe_len : 0, args_n = ready ? args_len : 0;
  const char *job = job_id();
  size_t job_len = strnlen(job, SIOX_CW_MAX_STR);
  uint8_t *p = malloc(sizeof(struct siox_cw_hello) + exe_n + args_n + job_len);
  if (!p) return -ENOMEM;
  struct siox_cw_hello *h = (void *)p;
  char *s = (char *)(h + 1);
  memcpy(s, exe, exe_n);
  memcpy(s + exe_n, args, args_n);
  memcpy(s + exe_n + args_n, job, job_len);
  memset(h, 0, sizeof *h);
  h->nonce = nonce;
  h->tsc0 = tsc0;
  h->ns0 = ns0;
  h->clock_flags = siox__clock_tsc ? SIOX_CW_CLOCK_TSC : 0;
  h->exe_len = (uint16_t)exe_n;
  h->args_len = (uint16_t)args_n;
  h->job_len = (uint16_t)job_len;
  *out = p;
  *len = (uint32_t)(sizeof *h + exe_n + args_n + job_len);
  return 0;
}
