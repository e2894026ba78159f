#!/usr/bin/env bash
# Workload extraction and replay end to end (issue 13, sections 1-2): a
# 4-rank MPI-IO job (mpi_io_workload: independent, collective, strided,
# nonblocking, split-collective and ordered accesses, ROMIO) is traced with
# `siox run` on /dev/shm, extracted with `siox workload extract`, replayed
# with `siox replay` under `siox run` again, and the replay's own trace is
# extracted. Asserts: the replay moved the same bytes per file (read and
# written) and made the same number of operations of each kind per rank as
# the job (barriers included: the MPI layer records MPI_Barrier and the
# world-wide collectives, 2 per rank here, and siox-replay's own
# bookkeeping goes through PMPI); siox-replay's report agrees with the workload file; the
# characterization form replays to the same bytes per file; a truncated or
# foreign workload file is refused with a clear message before MPI starts.
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" # OpenMPI leaks at exit (see test_mpi_io.sh)
export OMPI_MCA_io=romio321
[ -n "${SIOX_POSIX_LIB:-}" ] || fail "libsiox-posix is not built (SIOX_POSIX_LIB unset)"
export SIOX_REPLAY
D=/dev/shm/siox-wl-it.$$
mkdir -p "$D/orig" "$D/replay" "$D/charact"
trap 'rm -rf "$D"; cleanup' EXIT
LIBDIR="$T/libs" # siox run takes the layers from here (the ASan runtime first when they carry it)
mkdir -p "$LIBDIR"
ln -s "$SIOX_MPI_LIB" "$LIBDIR/libsiox-mpi.so"
ln -s "$SIOX_POSIX_LIB" "$LIBDIR/libsiox-posix.so"
ASAN_RT=$(ldd "$SIOX_MPI_LIB" | awk '/libasan/ {print $3}')

# Waits until the warehouse's activity count has not changed for 2 s.
# settle JOB...: waits until every rank of each JOB has recorded MPI_Finalize
# (the ranks' last activity; 4 ranks each) and the warehouse's activity
# count has then not changed for 2 s.
settle() {
  local jobs="" j prev=-1 still=0 cur fin
  for j in "$@"; do jobs="$jobs${jobs:+,}'$j'"; done
  for _ in $(seq 900); do
    fin=$(sql "SELECT count(*) FROM activities a JOIN activity_types t USING (type_id)
               JOIN processes p USING (proc_id) WHERE t.name = 'MPI_Finalize' AND p.job IN ($jobs)")
    cur=$(sql "SELECT count(*) FROM activities")
    if [ "$cur" = "$prev" ]; then still=$((still + 1)); else still=0; fi
    [ "$fin" -ge $((4 * $#)) ] && [ $still -ge 10 ] && return 0
    prev=$cur
    sleep 0.2
  done
  fail "the ranks of $jobs did not all reach the warehouse"
}

traced() { # JOB CMD...: CMD under siox run, filed under JOB
  local job=$1
  shift
  SIOX_JOB_ID=$job "$SIOX_CLI" run --layers posix,mpi --libdir "$LIBDIR" --socket "$DAEMON_SOCK" -- "$@"
}

log "manual pages"
"$SIOX_CLI" workload --help | grep -q -- "--form trace|characterization" || fail "siox workload --help"
"$SIOX_CLI" help replay | grep -q -- "--ranks N" || fail "siox help replay"
"$SIOX_REPLAY" --help | grep -q -- "--generator" || fail "siox-replay --help"
"$SIOX_CLI" --help | grep -q "^  workload" || fail "siox --help does not list workload"

start_server
start_daemon "" --batch-ms 50
# The ASan runtime first for the traced (uninstrumented) programs, once the
# servers run: munged's key is made by dd, which ASan's allocator refuses.
export LD_PRELOAD=${ASAN_RT:-}
[ -n "$LD_PRELOAD" ] || unset LD_PRELOAD

log "the job, traced"
traced wl-orig mpirun --oversubscribe -np 4 "$SIOX_MPI_WORKLOAD" "$D/orig/data" "$T/manifest" \
  >>"$T/workload.log" 2>&1 || fail "mpi_io_workload failed (see $T/workload.log)"
settle wl-orig

log "extract"
siox_cli workload extract --job wl-orig --prefix "$D/orig/" -o "$T/orig.wl" 2>"$T/extract.txt" \
  || fail "extract failed: $(cat "$T/extract.txt")"
cat "$T/extract.txt"
grep -q "^workload file size: trace [0-9]* bytes, characterization [0-9]* bytes" "$T/extract.txt" \
  || fail "extract does not report the file size of both forms"
siox_cli workload extract --job wl-orig --prefix "$D/orig/" --form characterization -o "$T/orig.wlc" 2>/dev/null \
  || fail "characterization extract failed"
head -1 "$T/orig.wl" | grep -qx "siox-workload 3 trace" || fail "bad header: $(head -1 "$T/orig.wl")"
grep -q "^ranks 4$" "$T/orig.wl" || fail "the workload does not have 4 ranks"
grep -q " mpi_write_all " "$T/orig.wl" || fail "no collective write in the trace: two-phase I/O would be lost"
# mpi_io_workload's MPI_Barrier and MPI_Allreduce per rank are its
# synchronization points: the MPI layer records them, and they are kept.
for r in 0 1 2 3; do
  n=$(grep -c "^r $r barrier " "$T/orig.wl" || true)
  [ "$n" = 2 ] || fail "rank $r has $n barriers in the trace, want 2 (MPI_Barrier, MPI_Allreduce)"
done

# Its strided view (section 3 of mpi_io_workload: 8 blocks of 4 KiB every
# 4 ranks x 4 KiB from 2 x 128 KiB + rank x 4 KiB) is kept as such, and the
# byte view set after it as contiguous (block = step).
for r in 0 1 2 3; do
  grep -Eq "^r $r mpi_view [0-9]+ $((262144 + 4096 * r)) 4096 [0-9]+ [0-9]+ 16384$" "$T/orig.wl" \
    || fail "rank $r's strided view is not in the trace: $(grep "^r $r mpi_view" "$T/orig.wl")"
  grep -Eq "^r $r mpi_view [0-9]+ 0 1 [0-9]+ [0-9]+ 1$" "$T/orig.wl" || fail "rank $r's byte view is not in the trace"
done

log "bad input is refused before MPI starts"
head -c $(($(stat -c %s "$T/orig.wl") / 2)) "$T/orig.wl" >"$T/cut.wl"
if "$SIOX_CLI" replay "$T/cut.wl" --dir "$D/replay" 2>"$T/cut.err"; then fail "a truncated file was replayed"; fi
grep -q "truncated" "$T/cut.err" || fail "no clear message for a truncated file: $(cat "$T/cut.err")"
if "$SIOX_CLI" replay "$SIOX_MPI_WORKLOAD" --dir "$D/replay" 2>"$T/foreign.err"; then fail "a binary was replayed"; fi
grep -q "not a SIOX workload file" "$T/foreign.err" || fail "no clear message for a foreign file: $(cat "$T/foreign.err")"

log "replay, traced"
traced wl-replay "$SIOX_CLI" replay "$T/orig.wl" --dir "$D/replay" --mpirun "mpirun --oversubscribe" \
  >"$T/replay.out" 2>>"$T/workload.log" || fail "siox replay failed (see $T/workload.log)"
cat "$T/replay.out"
settle wl-replay
siox_cli workload extract --job wl-replay --prefix "$D/replay/" -o "$T/replay.wl" 2>/dev/null \
  || fail "extracting the replay failed"

# What ROMIO made of the accesses, below MPI-IO: the same POSIX reads and
# writes at the same offsets (two-phase I/O's and data sieving's file
# domains follow from the view; written contiguously, the strided
# collective write had its aggregators write other ranges). ROMIO's 8-byte
# shared-pointer I/O is left out: the replay does shared-pointer calls at
# their recorded offsets.
inner_io() { # JOB: offset bytes name of every POSIX data call inside an MPI-IO call, sorted
  sql "SELECT t.name || ' ' || a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/offset'))]
              || ' ' || a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/bytes'))]
         FROM activities a JOIN processes p USING (proc_id) JOIN activity_types t USING (type_id)
         JOIN nodes n ON n.node_id = a.node_id JOIN activities m ON m.aid = a.parent_aid
         JOIN nodes mn ON mn.node_id = m.node_id
        WHERE p.job = '$1' AND n.swid = 'POSIX' AND mn.swid = 'MPI-IO' AND (t.name LIKE 'pread%' OR t.name LIKE 'pwrite%')
          AND a.attr_vals[array_position(a.attr_ids, (SELECT id FROM ontology WHERE name = 'io/bytes'))] >= 64
        ORDER BY 1"
}
inner_io wl-orig >"$T/inner.orig"
inner_io wl-replay >"$T/inner.replay"
[ -s "$T/inner.orig" ] || fail "no POSIX call inside an MPI-IO call in the job"
diff "$T/inner.orig" "$T/inner.replay" >"$T/inner.diff" \
  || fail "the replay's POSIX calls under MPI-IO differ from the job's: $(head -20 "$T/inner.diff")"
echo "same POSIX calls under MPI-IO: $(wc -l <"$T/inner.orig") (offset, size)"

log "replay from the characterization"
"$SIOX_CLI" replay "$T/orig.wlc" --dir "$D/charact" --no-gaps --mpirun "mpirun --oversubscribe" \
  >"$T/charact.out" 2>>"$T/workload.log" || fail "siox replay of the characterization failed"

python3 - "$T/orig.wl" "$T/replay.wl" "$T/replay.out" "$T/charact.out" <<'PY' || fail "the replay differs from the job"
import collections, re, sys
def load(path):
    files, ops, by_file = {}, collections.Counter(), collections.defaultdict(lambda: [0, 0])
    for line in open(path):
        f = line.split(" ")
        if f[0] == "file":
            files[f[1]] = re.sub(r"^f\d+-", "", line.rstrip("\n").split(" ", 2)[2].rsplit("/", 1)[-1])
        elif f[0] == "r":
            rank, op, fid, off, size = f[1], f[2], f[3], int(f[4]), int(f[5])
            ops[(rank, op)] += 1
            if "read" in op or "write" in op:
                by_file[files[fid]][0 if "read" in op else 1] += size
    return ops, dict(by_file)
def report(path):
    out = {}
    for line in open(path):
        m = re.match(r"file \d+ \S*/f\d+-(\S+) read_bytes=(\d+) written_bytes=(\d+)", line)
        if m: out[m.group(1)] = [int(m.group(2)), int(m.group(3))]
    return out
ops_o, bytes_o = load(sys.argv[1])
ops_r, bytes_r = load(sys.argv[2])
bad = 0
if not bytes_o or sum(b[1] for b in bytes_o.values()) == 0:
    print("the job wrote nothing?"); bad = 1
for what, o, r in (("operations per rank and kind", ops_o, ops_r), ("bytes per file (read, written)", bytes_o, bytes_r),
                   ("siox-replay's bytes per file", bytes_o, report(sys.argv[3])),
                   ("the characterization's replay bytes per file", bytes_o, report(sys.argv[4]))):
    if o != r:
        print(f"{what} differ:\n  job    {sorted(o.items())}\n  replay {sorted(r.items())}"); bad = 1
    else:
        print(f"same {what}: {sorted(o.items())[:6]}")
sys.exit(bad)
PY
log "workload replay test passed"
