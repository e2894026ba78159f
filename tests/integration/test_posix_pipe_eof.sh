#!/usr/bin/env bash
# The flusher thread's own descriptor table (siox-client/src/own_table.c),
# seen from outside a preloaded program: a shell under
# LD_PRELOAD=libsiox-posix.so writes to a pipe, records file I/O (so its
# flusher runs), closes its stdout and sleeps on. The reader must see EOF
# now, not when the shell exits: a flusher holding a copy of the
# application's descriptors would keep the pipe open. And one thread of the
# shell (the flusher) has a table of its own, without the shell's stdin
# and stderr: the shell's table has one user, the kernel's fast path. The
# flusher takes that table once the process has made 2,048 records
# (own_table.c): 1,000 appends of open, write, close make enough.
# No daemon is needed: the flusher runs and retries its connection anyway.
. "$(dirname "$0")/lib.sh"

posix_preload # sets PRELOAD

mkfifo "$T/pipe"
SIOX_SOCKET=$T/none.sock LD_PRELOAD=$PRELOAD sh -c '
  i=0
  while [ $i -lt 1000 ]; do echo x >>"$1"; i=$((i + 1)); done
  echo written
  sleep 0.3
  exec >&-
  sleep 60' sh "$T/file" >"$T/pipe" 2>"$T/writer.log" </dev/null &
wpid=$!
PIDS+=("$wpid")
# EOF while the writer sleeps on (60 s); a copy of its stdout elsewhere in
# the process would hold the pipe open until then.
timeout 20 cat "$T/pipe" >"$T/got" || fail "no EOF on the pipe 20 s after the writer closed it (timeout's status $?)"
[ "$(cat "$T/got")" = written ] || fail "the pipe carried '$(cat "$T/got")'"
kill -0 "$wpid" 2>/dev/null || fail "the writer exited: the EOF proves nothing ($(cat "$T/writer.log"))"
log "EOF while the writer still runs"

own=0
for task in /proc/"$wpid"/task/*; do
  [ -e "$task/fd/0" ] || [ -e "$task/fd/2" ] || own=$((own + 1))
done
[ "$own" -eq 1 ] || fail "$own threads of the writer without its stdin and stderr (want 1: the flusher's own table): $(ls /proc/"$wpid"/task)"
log "ok: the flusher's table holds none of the shell's descriptors"
