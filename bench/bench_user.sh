#!/usr/bin/env bash
# Overhead as users measure it (bench_user.c): the real siox-server with its
# private PostgreSQL and the real siox-daemon, started here and stopped by
# pid, then bench_user's ABBA rounds of whole processes, bare and preloaded.
#   bench/bench_user.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
ROUNDS=${2:-16}
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
. "$top/tests/integration/lib.sh"
exec 3>&1 1>&2 # figures on the caller's stdout, the rest on stderr

start_server
start_daemon "127.0.0.1:$SERVER_PORT"
"$B/bench/bench_user" "$B/bench/bench_pwrite" "$B/instrumentation/posix/libsiox-posix.so" "$DAEMON_PID" "$ROUNDS" >&3
