#!/usr/bin/env bash
# siox-strided-writes --segmented (the shared-file job of
# bench/bench_capacity_validate.sh): 4 ranks, one shared file, each rank's
# calls in its own contiguous segment (IOR's segmented layout). Asserts,
# from the ranks' own system calls (strace -f), that every pwrite of a
# process lies in one segment of K x N x B bytes and each of the 4 segments
# is written by one process, K x N x B bytes of it; that the file is 4
# segments long and read back right ("ok"); and that the same job without
# --segmented (interleaved) fails the one-segment check, so that the check
# can fail. Needs strace (else 77).
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT
command -v strace >/dev/null || { echo "SKIP: no strace"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_io=romio321 OMPI_MCA_mpi_yield_when_idle=1
K=3 N=2 B=4096
SEG=$((K * N * B))
# run NAME [OPTION...]: the job under strace, its pwrites "pid offset bytes" in $T/NAME.pw
run() {
  local name=$1
  shift
  local f
  # -ff: one file per process (NAME.st.PID), so that no call is split in two lines.
  # LeakSanitizer cannot run under ptrace (the sanitizer build's ranks abort at exit).
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -ff -qq -e trace=pwrite64 -o "$T/$name.st" mpirun --oversubscribe -np 4 "$SIOX_STRIDED" \
    "$T/$name.dat" --blocks $N --block $B --repeat $K --read-back "$@" >"$T/$name.out" 2>&1 \
    || { cat "$T/$name.out"; fail "$name: the job failed"; }
  grep -q "siox_strided_writes: ok" "$T/$name.out" || fail "$name: the data read back is not what was written"
  for f in "$T/$name.st".*; do
    # pwrite64(FD, "...", BYTES, OFFSET) = WRITTEN
    awk -v pid="${f##*.}" '/^pwrite64\(/ { off = $(NF-2); gsub(/[^0-9]/, "", off); if ($NF > 0) print pid, off, $NF }' "$f"
  done >"$T/$name.pw"
  [ -s "$T/$name.pw" ] || fail "$name: no pwrite64 seen"
}
# segments FILE: "ok" when every process writes within one segment and the 4
# segments are each one process's, SEG bytes each; else what is wrong.
segments() {
  awk -v seg=$SEG '{ s = int($2 / seg); e = int(($2 + $3 - 1) / seg)
       if (s != e) { print "a pwrite of pid " $1 " crosses segments"; bad = 1 }
       if (($1 in of) && of[$1] != s) { print "pid " $1 " writes segments " of[$1] " and " s; bad = 1 }
       of[$1] = s; by[s] += $3; who[s] = who[s] == "" || who[s] == $1 ? $1 : "many" }
     END { for (s = 0; s < 4; s++) if (by[s] != seg || who[s] == "many") { print "segment " s ": " by[s] " bytes by " who[s]; bad = 1 }
           if (!bad) print "ok" }' "$1"
}
log "segmented"
run seg --segmented
[ "$(stat -c %s "$T/seg.dat")" = $((4 * SEG)) ] || fail "the file is $(stat -c %s "$T/seg.dat") bytes, not 4 x $SEG"
got=$(segments "$T/seg.pw")
[ "$got" = ok ] || fail "segmented layout: $got"
log "interleaved (the check must fail)"
run inter
[ "$(segments "$T/inter.pw")" != ok ] || fail "the interleaved job passed the segment check"
log "ok"
