/*
 * Hooks of libsiox-posix for the layers above it in the same thread (today:
 * the MPI-IO layer). Include this header; it needs no link dependency: the
 * functions are weak references that resolve to libsiox-posix when it is
 * preloaded, and are NULL (the inline helpers do nothing) when it is not.
 *
 * MPI-IO -> POSIX (instrumentation/README.md, link 3): while an MPI-IO data
 * access activity is open in a thread, every POSIX read/write the thread
 * makes also reports siox_descriptor_receive(aid, posix/path, offset, bytes),
 * so the server can link other ranks' MPI-IO sends to this process's writes
 * (collective buffering). Calls nest; leave must pair with enter.
 */
#ifndef SIOX_POSIX_HOOKS_H
#define SIOX_POSIX_HOOKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the start / end of an MPI-IO data access in the calling thread. */
void siox_posix_mpiio_enter(void);
void siox_posix_mpiio_leave(void);
/* Watch the file at path (len bytes, borrowed until mpiio_lowest, compared
 * as the POSIX layer normalises paths), then take the lowest offset this
 * thread read or wrote in it since: 1 with *offset set, or 0 (*offset left
 * as it was) when it made no such call; either ends the watch. Independent
 * of enter/leave (no receives are recorded for it). A shared-pointer access
 * learns where it really landed from it (the pointer read before the call
 * races with other ranks). */
void siox_posix_mpiio_watch(const char *path, uint32_t len);
int siox_posix_mpiio_lowest(uint64_t *offset);

#ifndef SIOX_POSIX_BUILD
#pragma weak siox_posix_mpiio_enter
#pragma weak siox_posix_mpiio_leave
#pragma weak siox_posix_mpiio_watch
#pragma weak siox_posix_mpiio_lowest

static inline void siox_posix_hook_mpiio_enter(void) {
  if (siox_posix_mpiio_enter) siox_posix_mpiio_enter();
}
static inline void siox_posix_hook_mpiio_leave(void) {
  if (siox_posix_mpiio_leave) siox_posix_mpiio_leave();
}
static inline void siox_posix_hook_mpiio_watch(const char *path, uint32_t len) {
  if (siox_posix_mpiio_watch) siox_posix_mpiio_watch(path, len);
}
static inline int siox_posix_hook_mpiio_lowest(uint64_t *offset) {
  return siox_posix_mpiio_lowest ? siox_posix_mpiio_lowest(offset) : 0;
}
#endif

#ifdef __cplusplus
}
#endif
#endif
