#!/usr/bin/env bash
# Exec through a PATH search under the POSIX preload (issue 12, part 1):
# dash appends 20 lines to a file, then `exec true` with true only in the
# 5th PATH entry, so execve fails four times before it succeeds. No daemon
# runs (its socket's .lost directory exists), so every hand-over the
# library makes before an execve writes a loss file: the figure shows what
# needless hand-overs cost a process. Whole processes, wall time, bare and
# preloaded in interleaved ABBA rounds; prints NAME VALUE UNIT:
#   exec_path_search_overhead_ms      median of (preloaded - bare) per round
#   exec_path_search_loss_files       loss files one preloaded run leaves
#   bench/bench_exec_path.sh [BUILD_DIR] [ROUNDS] [PRELOAD_SO...]
# With several PRELOAD_SO (e.g. a saved copy of the old library, then the
# new one) all are measured in the same rounds, each block after a
# "# preload" line.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
ROUNDS=${2:-15}
shift $(($# > 2 ? 2 : $#))
PRELOADS=("$@")
[ ${#PRELOADS[@]} -gt 0 ] || PRELOADS=("$B/instrumentation/posix/libsiox-posix.so")
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
mkdir -p "$D/p1" "$D/p2" "$D/p3" "$D/p4" "$D/s.sock.lost"
SEARCH="$D/p1:$D/p2:$D/p3:$D/p4:/usr/bin:/bin"

# one SO: prints the wall time in us of one run (SO empty: bare).
one() {
  local s e
  s=$(date +%s%N)
  SIOX_SOCKET=$D/s.sock LD_PRELOAD=$1 sh -c \
    'i=0; while [ $i -lt 20 ]; do echo $i >>"$1"; i=$((i+1)); done; PATH=$2; exec true' sh "$D/out" "$SEARCH"
  e=$(date +%s%N)
  echo $(((e - s) / 1000))
}

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

declare -A diffs files
for ((r = 0; r < ROUNDS; r++)); do
  for i in "${!PRELOADS[@]}"; do
    so=${PRELOADS[$i]}
    a=$(one "")
    rm -f "$D/s.sock.lost/"*
    b=$(one "$so")
    files[$i]=$(find "$D/s.sock.lost" -name '*.loss' | wc -l)
    rm -f "$D/s.sock.lost/"*
    c=$(one "$so")
    rm -f "$D/s.sock.lost/"*
    d=$(one "")
    diffs[$i]="${diffs[$i]:-} $((b - a)) $((c - d))"
  done
done
for i in "${!PRELOADS[@]}"; do
  [ ${#PRELOADS[@]} -eq 1 ] || echo "# preload ${PRELOADS[$i]}"
  m=$(tr ' ' '\n' <<<"${diffs[$i]}" | grep . | median)
  awk -v m="$m" 'BEGIN {printf "exec_path_search_overhead_ms %.3f ms\n", m / 1000}'
  echo "exec_path_search_loss_files ${files[$i]} files"
done
