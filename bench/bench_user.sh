#!/usr/bin/env bash
# Overhead as users measure it (bench_user.c): the real siox-server with its
# private PostgreSQL and the real siox-daemon, started here and stopped by
# pid, then bench_user's ABBA rounds of whole processes, bare and preloaded.
#   bench/bench_user.sh [BUILD_DIR] [ROUNDS] [PRELOAD_SO...]
# PRELOAD_SO (default BUILD_DIR's libsiox-posix.so): with several, each is
# measured in turn against the same daemon (e.g. a saved copy of the old
# library, then the new one), each block of figures after a "# preload"
# line, so that before and after come from one sitting.
# SIOX_DAEMON_ALT=PATH (another siox-daemon binary, e.g. main's): a second
# daemon of that binary runs beside the first (same server), and each
# PRELOAD_SO block runs against both, in alternating order (ABBA over the
# blocks), each after a "# daemon" line: an A/B of the daemon in one sitting.
# The slots are not alike: an A/A (one binary in both) favoured the first
# daemon's figures (2026-12-07, bench/results.txt); run it both ways round.
# USER_BASE_SO=LIB (bench_user.c): every loop round also runs LIB (e.g. a
# saved copy of main's libsiox-posix.so), interleaved with bare and this
# library, and prints posix_ab_* (this library - LIB) figures: the A/B of
# two preloads in one sitting (ROUNDS a multiple of 6: every order alike).
# USER_DAEMON=PATH runs that siox-daemon binary instead of BUILD_DIR's (an
# A/B of the daemon's CPU per activity against a saved copy of main's).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
ROUNDS=${2:-16}
shift $(($# > 2 ? 2 : $#))
PRELOADS=("$@")
[ ${#PRELOADS[@]} -gt 0 ] || PRELOADS=("$B/instrumentation/posix/libsiox-posix.so")
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=${USER_DAEMON:-$B/siox-daemon/siox-daemon} SIOX_CLI=$B/siox-cli/siox
. "$top/tests/integration/lib.sh"
exec 3>&1 1>&2 # figures on the caller's stdout, the rest on stderr

start_server
start_daemon "127.0.0.1:$SERVER_PORT"
DAEMONS=("$DAEMON_PID:$DAEMON_SOCK")
if [ -n "${SIOX_DAEMON_ALT:-}" ]; then
  "$SIOX_DAEMON_ALT" --socket "$T/alt.sock" --server "127.0.0.1:$SERVER_PORT" --state-dir "$T/daemon-alt" \
    --munge-socket "$MUNGE_SOCK" >>"$T/daemon-alt.log" 2>&1 &
  PIDS+=("$!")
  DAEMONS+=("$!:$T/alt.sock")
  for _ in $(seq 100); do [ -S "$T/alt.sock" ] && break; sleep 0.1; done
  [ -S "$T/alt.sock" ] || fail "the second siox-daemon did not create $T/alt.sock"
fi
i=0
for so in "${PRELOADS[@]}"; do
  [ ${#PRELOADS[@]} -eq 1 ] || echo "# preload $so" >&3
  order=("${DAEMONS[@]}")
  [ $((i++ % 2)) -eq 0 ] || order=($(printf '%s\n' "${DAEMONS[@]}" | tac))
  for d in "${order[@]}"; do
    [ ${#DAEMONS[@]} -eq 1 ] || echo "# daemon ${d#*:} $(cut -d' ' -f1 /proc/loadavg)" >&3
    SIOX_SOCKET=${d#*:} "$B/bench/bench_user" "$B/bench/bench_pwrite" "$so" "${d%%:*}" "$ROUNDS" >&3
  done
done
