/*
 * exec: a new program image drops this process's SIOX buffers without
 * running destructors, so the exec wrappers hand over what was recorded
 * first, as at exit (bounded wait; what the daemon cannot take goes into a
 * loss file and is counted), and start the flusher again when exec fails
 * (a shell tries every PATH entry). Not recorded as activities. In a vfork
 * child the parent's memory is shared and its threads are live: nothing
 * is done there.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "posix.h"

#define EXEC_FLUSH_MS 1000

/* Returns 1 when the client handed over (then after_exec must follow). */
static int before_exec(void) {
  if (atomic_load(&sxp__state) != SXP_STATE_ON || sxp__guard || siox_internal_in_library()) return 0;
  if (getpid() != sxp__pid) return 0; /* vfork child: fork handlers did not run */
  sxp__guard++;
  siox_internal_before_exec(EXEC_FLUSH_MS);
  sxp__guard--;
  return 1;
}

/* exec returned: it failed, and this image goes on recording. */
static int after_exec(int handed, int r) {
  if (handed) siox_internal_exec_failed();
  return r;
}

SXP_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
  int (*real)(const char *, char *const[], char *const[]) = SXP_REAL(execve);
  if (SXP_UNLIKELY(!real)) return errno = ENOSYS, -1;
  int handed = before_exec();
  return after_exec(handed, real(path, argv, envp));
}

SXP_EXPORT int execv(const char *path, char *const argv[]) {
  int (*real)(const char *, char *const[]) = SXP_REAL(execv);
  if (SXP_UNLIKELY(!real)) return errno = ENOSYS, -1;
  int handed = before_exec();
  return after_exec(handed, real(path, argv));
}

SXP_EXPORT int execvp(const char *file, char *const argv[]) {
  int (*real)(const char *, char *const[]) = SXP_REAL(execvp);
  if (SXP_UNLIKELY(!real)) return errno = ENOSYS, -1;
  int handed = before_exec();
  return after_exec(handed, real(file, argv));
}

SXP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
  int (*real)(const char *, char *const[], char *const[]) = SXP_REAL(execvpe);
  if (SXP_UNLIKELY(!real)) return errno = ENOSYS, -1;
  int handed = before_exec();
  return after_exec(handed, real(file, argv, envp));
}

/* The list forms: glibc's own execl* call execve internally, past the
 * wrappers above, so they are wrapped too and rebuilt as vectors. */
#define MAX_ARGS 4096

static int count_args(const char *arg0, va_list ap) {
  int n = 1;
  if (!arg0) return 0;
  while (n < MAX_ARGS && va_arg(ap, const char *)) n++;
  return n;
}

/* Fills argv[0..n] (NULL-terminated) from arg0 and ap; returns envp for
 * execle (the pointer after the NULL), else NULL. */
static char *const *fill_args(char **argv, int n, const char *arg0, va_list ap, int want_env) {
  argv[0] = (char *)arg0;
  for (int i = 1; i < n; i++) argv[i] = va_arg(ap, char *);
  argv[n] = NULL;
  if (n > 0) (void)va_arg(ap, char *); /* the terminating NULL */
  return want_env ? va_arg(ap, char *const *) : NULL;
}

#define DEFINE_EXECL(name, want_env, call)                                      \
  SXP_EXPORT int name(const char *path, const char *arg0, ...) {                \
    va_list ap;                                                                 \
    va_start(ap, arg0);                                                         \
    int n = count_args(arg0, ap);                                               \
    va_end(ap);                                                                 \
    if (n >= MAX_ARGS) return errno = E2BIG, -1;                                \
    char *argv[n + 1];                                                          \
    va_start(ap, arg0);                                                         \
    char *const *envp = fill_args(argv, n, arg0, ap, want_env);                 \
    va_end(ap);                                                                 \
    (void)envp;                                                                 \
    return call;                                                                \
  }
DEFINE_EXECL(execl, 0, execv(path, argv))
DEFINE_EXECL(execlp, 0, execvp(path, argv))
DEFINE_EXECL(execle, 1, execve(path, argv, envp))
