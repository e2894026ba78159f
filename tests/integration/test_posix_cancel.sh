#!/usr/bin/env bash
# pread and pwrite under the preload stay cancellation points: a thread
# that only calls pwrite (or pread) must still end at pthread_cancel (a
# wrapper that called the kernel directly, skipping glibc's cancellation
# toggling, would not: instrumentation/posix/README.md).
# SIOX_DISABLE=1: the wrappers still call pread/pwrite through the same
# table entry, and nothing of the client runs around them; recording, the
# client's own system calls (a reconnect's connect, a wake-up's write) are
# cancellation points too and would end the thread even if the calls were
# not.
. "$(dirname "$0")/lib.sh"

posix_preload # sets PRELOAD

SIOX_DISABLE=1 LD_PRELOAD=$PRELOAD timeout 60 "$SIOX_POSIX_CANCEL" "$T/file" 2>"$T/cancel.log" ||
  fail "posix_cancel failed ($?): $(cat "$T/cancel.log")"
log "ok: pread and pwrite loops cancelled under the preload (SIOX_DISABLE=1)"
# Recording: the same program, its records counted at exit (no daemon).
SIOX_SOCKET=$T/none.sock LD_PRELOAD=$PRELOAD timeout 60 "$SIOX_POSIX_CANCEL" "$T/file" 2>"$T/cancel.log" ||
  fail "posix_cancel failed while recording ($?): $(cat "$T/cancel.log")"
log "ok: the same while recording"
