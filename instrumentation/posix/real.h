/*
 * The real libc functions behind the wrappers, each found with
 * dlsym(RTLD_NEXT) on its own first use (a process pays for the functions it
 * calls, not for all 75). One X-macro list makes the table, its indexes,
 * its resolver and the names, so a new wrapper is one line here.
 */
#ifndef SIOX_POSIX_REAL_H
#define SIOX_POSIX_REAL_H

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#define SXP_REAL_LIST(X)                                                        \
  X(open, int, (const char *, int, ...))                                        \
  X(open64, int, (const char *, int, ...))                                      \
  X(__open_2, int, (const char *, int))                                         \
  X(__open64_2, int, (const char *, int))                                       \
  X(openat, int, (int, const char *, int, ...))                                 \
  X(openat64, int, (int, const char *, int, ...))                               \
  X(__openat_2, int, (int, const char *, int))                                  \
  X(__openat64_2, int, (int, const char *, int))                                \
  X(creat, int, (const char *, mode_t))                                         \
  X(creat64, int, (const char *, mode_t))                                       \
  X(close, int, (int))                                                          \
  X(close_range, int, (unsigned, unsigned, int))                                \
  X(closedir, int, (DIR *))                                                     \
  X(dup, int, (int))                                                            \
  X(dup2, int, (int, int))                                                      \
  X(dup3, int, (int, int, int))                                                 \
  X(read, ssize_t, (int, void *, size_t))                                       \
  X(__read_chk, ssize_t, (int, void *, size_t, size_t))                         \
  X(write, ssize_t, (int, const void *, size_t))                                \
  X(pread, ssize_t, (int, void *, size_t, off_t))                               \
  X(pread64, ssize_t, (int, void *, size_t, off64_t))                           \
  X(__pread_chk, ssize_t, (int, void *, size_t, off_t, size_t))                 \
  X(__pread64_chk, ssize_t, (int, void *, size_t, off64_t, size_t))            \
  X(pwrite, ssize_t, (int, const void *, size_t, off_t))                        \
  X(pwrite64, ssize_t, (int, const void *, size_t, off64_t))                    \
  X(readv, ssize_t, (int, const struct iovec *, int))                           \
  X(writev, ssize_t, (int, const struct iovec *, int))                          \
  X(lseek, off_t, (int, off_t, int))                                            \
  X(lseek64, off64_t, (int, off64_t, int))                                      \
  X(fsync, int, (int))                                                          \
  X(fdatasync, int, (int))                                                      \
  X(ftruncate, int, (int, off_t))                                               \
  X(ftruncate64, int, (int, off64_t))                                           \
  X(stat, int, (const char *, struct stat *))                                   \
  X(lstat, int, (const char *, struct stat *))                                  \
  X(fstat, int, (int, struct stat *))                                           \
  X(fstatat, int, (int, const char *, struct stat *, int))                      \
  X(stat64, int, (const char *, struct stat64 *))                               \
  X(lstat64, int, (const char *, struct stat64 *))                              \
  X(fstat64, int, (int, struct stat64 *))                                       \
  X(fstatat64, int, (int, const char *, struct stat64 *, int))                  \
  X(__xstat, int, (int, const char *, struct stat *))                           \
  X(__lxstat, int, (int, const char *, struct stat *))                          \
  X(__fxstat, int, (int, int, struct stat *))                                   \
  X(__fxstatat, int, (int, int, const char *, struct stat *, int))              \
  X(__xstat64, int, (int, const char *, struct stat64 *))                       \
  X(__lxstat64, int, (int, const char *, struct stat64 *))                      \
  X(__fxstat64, int, (int, int, struct stat64 *))                               \
  X(__fxstatat64, int, (int, int, const char *, struct stat64 *, int))          \
  X(unlink, int, (const char *))                                                \
  X(rename, int, (const char *, const char *))                                  \
  X(mkdir, int, (const char *, mode_t))                                         \
  X(fopen, FILE *, (const char *, const char *))                                \
  X(fopen64, FILE *, (const char *, const char *))                              \
  X(fdopen, FILE *, (int, const char *))                                        \
  X(fclose, int, (FILE *))                                                      \
  X(fread, size_t, (void *, size_t, size_t, FILE *))                            \
  X(__fread_chk, size_t, (void *, size_t, size_t, size_t, FILE *))             \
  X(fwrite, size_t, (const void *, size_t, size_t, FILE *))                     \
  X(vfprintf, int, (FILE *, const char *, va_list))                             \
  X(__vfprintf_chk, int, (FILE *, int, const char *, va_list))                  \
  X(vfscanf, int, (FILE *, const char *, va_list))                              \
  X(__isoc99_vfscanf, int, (FILE *, const char *, va_list))                     \
  X(fgets, char *, (char *, int, FILE *))                                       \
  X(__fgets_chk, char *, (char *, size_t, int, FILE *))                         \
  X(fputs, int, (const char *, FILE *))                                         \
  X(fflush, int, (FILE *))                                                      \
  X(fseek, int, (FILE *, long, int))                                            \
  X(fseeko, int, (FILE *, off_t, int))                                          \
  X(ftell, long, (FILE *))                                                      \
  X(ftello, off_t, (FILE *))                                                    \
  X(execve, int, (const char *, char *const[], char *const[]))                  \
  X(execv, int, (const char *, char *const[]))                                  \
  X(execvp, int, (const char *, char *const[]))                                 \
  X(execvpe, int, (const char *, char *const[], char *const[]))

#define SXP_REAL_FIELD(name, ret, args) ret(*name) args;
struct sxp_real {
  SXP_REAL_LIST(SXP_REAL_FIELD)
};
#undef SXP_REAL_FIELD

extern struct sxp_real sxp__real;

#define SXP_REAL_INDEX(name, ret, args) SXP_RI_##name,
enum { SXP_REAL_LIST(SXP_REAL_INDEX) SXP_RI_COUNT };
#undef SXP_REAL_INDEX

/* Resolves table entry i (SXP_RI_*) unless this thread is already inside
 * dlsym (which may allocate, and an allocator may call open()); looks a
 * symbol libc lacks up once. The entry stays NULL in both cases: the caller
 * must then use a raw system call or fail with ENOSYS. */
void sxp__resolve_one(int i) __attribute__((cold));

/* The real function `name`, resolved on first use; NULL while this thread
 * is inside the resolver or when libc lacks it. The load is relaxed-atomic:
 * the entry is written once with the same value by whoever resolves first.
 * One load on the common path (two before: the test and the value). */
#define SXP_REAL(name)                                                          \
  ({                                                                            \
    __typeof__(sxp__real.name) sxp_r_ = __atomic_load_n(&sxp__real.name, __ATOMIC_RELAXED); \
    if (__builtin_expect(sxp_r_ == NULL, 0)) {                                  \
      sxp__resolve_one(SXP_RI_##name);                                          \
      sxp_r_ = __atomic_load_n(&sxp__real.name, __ATOMIC_RELAXED);              \
    }                                                                           \
    sxp_r_;                                                                     \
  })

#endif
