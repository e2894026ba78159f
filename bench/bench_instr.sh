#!/usr/bin/env bash
# Instructions per call of a 4 KiB pwrite, bare and under each preload: a
# figure the machine's load does not move (the timing benches under load
# move by tens of ns between rounds). valgrind's callgrind counts the
# user-space instructions of the application thread (--separate-threads)
# inside main() (--toggle-collect=main: the exit hand-over, which sends
# whatever the flusher left, varies with scheduling) of `bench_pwrite loop`
# with N and 2N calls; the difference over N is per call, so the start
# cancels out. The daemon is bench_drain_serve (reads, discards,
# acknowledges), started here and stopped by its pid.
#   bench/bench_instr.sh [BUILD_DIR] [PRELOAD_SO...]   (N: INSTR_CALLS, 20000)
# Prints, after a "# preload SO" line per library:
#   posix_instructions_per_call_4k        the application thread, preloaded
#   posix_added_instructions_per_call_4k  the same less the bare loop's
# The ring is 64 MiB (SIOX_BUFFER_KB): valgrind runs one thread at a time,
# and with the default 4 MiB the lagging flusher left the ring past its
# fill mark for most records (a call into siox__ring_past_mark each, which
# natively happens about once per 512 KiB), so the figure moved by +-40
# between runs of one library. Limits: the kernel's part of the call is not
# counted.
# Then the MPI-IO layer the same way (INSTR_MPIIO=0 leaves it out): one
# rank of `bench_mpiio --rank` (a singleton, no mpirun) writing 4 KiB with
# MPI_File_write_at, both layers preloaded; callgrind's inclusive counts of
# the layer's MPI_File_write_at less those of the PMPI_File_write_at it
# calls (so the POSIX records beneath are not in it), N and 2N calls:
#   mpiio_added_instructions_per_call_4k  the MPI-IO layer's own, per call
# INSTR_MPI_SOS="MPI_SO:POSIX_SO ..." (default this build's pair): one
# figure per pair, each after a "# preload" line (an A/B against a saved
# copy of main's libraries).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
shift $(($# > 0 ? 1 : 0))
PRELOADS=("$@")
[ ${#PRELOADS[@]} -gt 0 ] || PRELOADS=("$B/instrumentation/posix/libsiox-posix.so")
N=${INSTR_CALLS:-20000}
command -v valgrind >/dev/null || { echo "bench_instr: valgrind not found" >&2; exit 2; }
T=$(mktemp -d /tmp/siox-bench-instr.XXXXXX)
"$B/bench/bench_drain_serve" >"$T/sock" &
DRAIN=$!
trap 'kill "$DRAIN" 2>/dev/null; wait "$DRAIN" 2>/dev/null || true; rm -rf "$T" "/dev/shm/siox-bench-instr.$$"' EXIT
for _ in $(seq 50); do [ -s "$T/sock" ] && break; sleep 0.1; done
export SIOX_SOCKET=$(cat "$T/sock") SIOX_BUFFER_KB=65536

# Instructions of the main thread in run $1.
instr() {
  sed -n 's/^summary: //p' "$T/$1.out-01"
}

# Per-call instructions of the main thread of bench_pwrite under preload
# $1 ("" for bare).
per_call() {
  local n
  for n in "$N" $((2 * N)); do
    rm -f "$T/r$n".out-*
    env ${1:+LD_PRELOAD=$1} valgrind --tool=callgrind --separate-threads=yes --toggle-collect=main \
      --callgrind-out-file="$T/r$n.out" "$B/bench/bench_pwrite" loop "/dev/shm/siox-bench-instr.$$" "$n" >/dev/null 2>"$T/vg.log" ||
      { cat "$T/vg.log" >&2; exit 1; }
  done
  echo $(( ($(instr "r$((2 * N))") - $(instr "r$N")) / N ))
}

bare=$(per_call "")
echo "posix_instructions_per_call_4k_bare $bare instructions"
for so in "${PRELOADS[@]}"; do
  echo "# preload $so"
  main=$(per_call "$so")
  echo "posix_instructions_per_call_4k $main instructions"
  echo "posix_added_instructions_per_call_4k $((main - bare)) instructions"
done

[ "${INSTR_MPIIO:-1}" != 0 ] && [ -x "$B/bench/bench_mpiio" ] || exit 0
command -v callgrind_annotate >/dev/null || { echo "bench_instr: callgrind_annotate not found" >&2; exit 2; }
MN=${INSTR_MPIIO_CALLS:-5000}
# Inclusive instructions of function $2 (its name's end) in run $1.
incl() {
  callgrind_annotate --inclusive=yes "$T/$1.out-01" 2>/dev/null |
    awk -v f="$2" '$0 ~ (":" f " ") { gsub(",", "", $1); print $1; exit }'
}
# MPI-IO layer's instructions per MPI_File_write_at under preload $1.
mpi_per_call() {
  local n d=()
  for n in "$MN" $((2 * MN)); do
    rm -f "$T/m$n".out-* "/dev/shm/siox-bench-instr-mpi.$$"
    env LD_PRELOAD="$1" BENCH_MPIIO_NO_AB=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      valgrind --tool=callgrind --separate-threads=yes --toggle-collect=timed \
      --callgrind-out-file="$T/m$n.out" "$B/bench/bench_mpiio" --rank "/dev/shm/siox-bench-instr-mpi.$$" 4096 "$n" \
      >/dev/null 2>"$T/vg.log" || { cat "$T/vg.log" >&2; exit 1; }
    d+=($(($(incl "m$n" MPI_File_write_at) - $(incl "m$n" PMPI_File_write_at))))
  done
  rm -f "/dev/shm/siox-bench-instr-mpi.$$"
  echo $(((d[1] - d[0]) / MN))
}
read -ra PAIRS <<<"${INSTR_MPI_SOS:-$B/instrumentation/mpi/libsiox-mpi.so:$B/instrumentation/posix/libsiox-posix.so}"
for pair in "${PAIRS[@]}"; do
  [ ${#PAIRS[@]} -eq 1 ] || echo "# preload $pair"
  echo "mpiio_added_instructions_per_call_4k $(mpi_per_call "$pair") instructions"
done
