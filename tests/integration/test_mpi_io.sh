#!/usr/bin/env bash
# MPI-IO layer end to end: 4 ranks of mpi_io_workload under mpirun (ROMIO
# with one collective-buffering aggregator by default; OMPIO when
# SIOX_MPI_IO_COMPONENT=ompio) with libsiox-mpi + libsiox-posix
# preloaded, through a real siox-daemon and siox-server. Asserts in the
# warehouse: per rank, the MPI-IO activities are exactly the calls made
# (type, io/offset, io/bytes, mpi/collective), hints are recorded, POSIX
# calls are explicit children of MPI-IO calls (and only the aggregator
# writes under collective calls), and the output file is byte-identical
# with and without SIOX.
. "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Under -DSIOX_SANITIZE=ON: OpenMPI, hwloc and HDF5 leak at exit (also from
# MCA components already unloaded, so no suppression can name them); keep
# every other ASan/UBSan check on in the ranks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# ...and the ASan runtime must come first in LD_PRELOAD when the layers
# carry it (processes the ranks start are not built with it).
ASAN_RT=$(ldd "$SIOX_MPI_LIB" | awk '/libasan/ {print $3 ":"}')
COMPONENT=${SIOX_MPI_IO_COMPONENT:-romio321}
export OMPI_MCA_io=$COMPONENT # romio321: predictable aggregation (instrumentation/mpi/README.md)
export SIOX_TEST_HINTS="romio_cb_write=enable;romio_cb_read=enable;cb_nodes=1"
# Ranks race on the shared pointer; each _shared write's io/offset must be
# where its data landed (found by the workload afterwards). Under ROMIO half
# of them are MPI_File_iwrite_shared; OMPIO makes nonblocking I/O with POSIX
# aio, out of the POSIX layer's sight, so there only the blocking calls are
# exact (README, known limits).
if [ "$COMPONENT" = romio321 ]; then export SIOX_TEST_SHARED=2; else export SIOX_TEST_SHARED=1; fi
[ -n "${SIOX_POSIX_LIB:-}" ] || fail "libsiox-posix is not built (SIOX_POSIX_LIB unset)"
RANKS=4
OUT=/dev/shm/siox-mpi-it.$$
trap 'rm -f "$OUT" "$OUT".plain "$OUT".shared "$OUT".plain.shared; cleanup' EXIT

run_workload() { # FILE MANIFEST [mpirun -x options...]
  local file=$1 manifest=$2
  shift 2
  rm -f "$file"
  mpirun --oversubscribe -np $RANKS -x ASAN_OPTIONS "$@" "$SIOX_MPI_WORKLOAD" "$file" "$manifest" \
    >>"$T/workload.log" 2>&1 || fail "mpi_io_workload failed"
}

log "uninstrumented run"
run_workload "$OUT.plain" "$T/plain"
start_server
start_daemon "" --batch-ms 50
log "instrumented run"
run_workload "$OUT" "$T/manifest" -x LD_PRELOAD="$ASAN_RT$SIOX_MPI_LIB:$SIOX_POSIX_LIB" \
  -x SIOX_SOCKET="$DAEMON_SOCK" -x SIOX_JOB_ID=mpi-it
[ "$(sha256sum <"$OUT")" = "$(sha256sum <"$OUT.plain")" ] || fail "output differs with SIOX preloaded"

want=$(cat "$T"/manifest.* | wc -l)
# + Init, Finalize, 2 open, 2 close, 2 set_view, sync per rank, and the
# collectives on MPI_COMM_WORLD: 2 MPI_Barrier (one in the shared-pointer
# race) and 1 MPI_Allreduce
want=$((want + RANKS * 12))
q_io="SELECT count(*) FROM activities a JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
      WHERE n.swid IN ('MPI-IO','MPI') AND t.name NOT IN ('post','complete')"
for _ in $(seq 300); do
  n=$(sql "$q_io" 2>/dev/null || echo 0)
  [ "$n" -ge "$want" ] && break
  sleep 0.2
done
[ "$n" -eq "$want" ] || fail "warehouse holds $n MPI activities, want $want"
# Link 3: non-aggregator write_at_all calls are linked implicitly to the
# aggregator's POSIX writes; the server matches after ingest, so wait until
# the number of linked calls has settled (2 s unchanged, 30 s at most).
q_links="SELECT count(DISTINCT l.parent_aid) FROM causal_links l JOIN activities a ON a.aid = l.parent_aid
         JOIN activity_types t USING (type_id) WHERE t.name = 'MPI_File_write_at_all'"
prev=-1 still=0
for _ in $(seq 150); do
  cur=$(sql "$q_links")
  if [ "$cur" = "$prev" ]; then still=$((still + 1)); else still=0; fi
  [ "$cur" -gt 0 ] && [ $still -ge 10 ] && break
  prev=$cur
  sleep 0.2
done

sql "SELECT coalesce(json_agg(r), '[]') FROM (
       SELECT a.aid, a.proc_id, a.parent_aid, n.swid, t.name, a.err FROM activities a
       JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)) r" >"$T/acts.json"
sql "SELECT coalesce(json_agg(r), '[]') FROM (
       SELECT v.aid, v.name, v.value FROM activity_attributes v JOIN activities a USING (aid)
       JOIN nodes n USING (node_id) WHERE n.swid IN ('MPI-IO', 'MPI')) r" >"$T/attrs.json"
sql "SELECT coalesce(json_agg(r), '[]') FROM (SELECT parent_aid, child_aid, confidence FROM causal_links) r" \
  >"$T/links.json"

python3 - "$T" $RANKS "$COMPONENT" <<'PY' || fail "warehouse does not match the calls made"
import collections, glob, json, sys
T, ranks, component = sys.argv[1], int(sys.argv[2]), sys.argv[3]
acts = {a["aid"]: a for a in json.load(open(f"{T}/acts.json"))}
attrs = collections.defaultdict(dict)
for r in json.load(open(f"{T}/attrs.json")):
    attrs[r["aid"]][r["name"]] = r["value"]
proc_rank = {a["proc_id"]: int(attrs[a["aid"]]["mpi/rank"]) for a in acts.values() if a["name"] == "MPI_Init"}
assert sorted(proc_rank.values()) == list(range(ranks)), f"MPI_Init ranks {proc_rank}"
for a in acts.values():
    if a["name"] == "MPI_Init":
        assert int(attrs[a["aid"]]["mpi/size"]) == ranks and attrs[a["aid"]]["job/id"] == "mpi-it"

data = lambda a: a["swid"] == "MPI-IO" and "io/bytes" in attrs[a["aid"]] and a["name"].startswith("MPI_File_")
errors = []
for rank in range(ranks):
    want = collections.Counter(tuple(l.split()) for l in open(f"{T}/manifest.{rank}"))
    got = collections.Counter()
    names = collections.Counter()
    for a in acts.values():
        if proc_rank.get(a["proc_id"]) != rank: continue
        names[a["name"]] += 1
        if data(a):
            v = attrs[a["aid"]]
            got[(a["name"], v.get("io/offset", "?"), v["io/bytes"], v["mpi/collective"])] += 1
    if got != want:
        errors.append(f"rank {rank}: missing {want - got}, unexpected {got - want}")
    for name, n in [("MPI_Init", 1), ("MPI_Finalize", 1), ("MPI_File_open", 2), ("MPI_File_close", 2),
                    ("MPI_File_set_view", 2), ("MPI_File_sync", 1)]:
        if names[name] != n: errors.append(f"rank {rank}: {names[name]} {name}, want {n}")
assert not errors, "\n".join(errors)

opens = [a for a in acts.values() if a["name"] == "MPI_File_open"]
for a in opens:
    h = attrs[a["aid"]].get("mpi/hints", "")
    assert "cb_nodes=1" in h and "romio_cb_write=enable" in h, f"hints {h!r}"

children = collections.defaultdict(list)
for a in acts.values():
    if a["parent_aid"]: children[a["parent_aid"]].append(a)
def posix_below(aid):  # POSIX activities in the subtree (through post/complete)
    out = []
    for c in children[aid]:
        if c["swid"] == "POSIX": out.append(c)
        elif c["swid"] == "MPI-IO": out += posix_below(c["aid"])
    return out
def is_write(c): return c["name"] in ("write", "pwrite", "pwrite64", "writev")
def is_read(c): return c["name"] in ("read", "pread", "pread64", "readv")
# OMPIO runs nonblocking I/O through POSIX AIO (glibc's own threads call
# pwrite inside libc, out of any wrapper's reach): explicit children exist
# for the nonblocking calls under ROMIO only, which does the I/O in the call.
blocking_only = component != "romio321"
for a in acts.values():
    if a["name"] in ("MPI_File_write_at", "MPI_File_iwrite_at"):
        if blocking_only and a["name"] == "MPI_File_iwrite_at": continue
        assert any(is_write(c) for c in posix_below(a["aid"])), f"{a['name']} {a['aid']} has no POSIX write child"
    if a["name"] in ("MPI_File_read_at", "MPI_File_iread_at"):
        if blocking_only and a["name"] == "MPI_File_iread_at": continue
        assert any(is_read(c) for c in posix_below(a["aid"])), f"{a['name']} {a['aid']} has no POSIX read child"
# ROMIO with cb_nodes=1: one aggregator process writes for all ranks under
# write_at_all (OMPIO picks its own aggregators and ignores ROMIO's keys).
writers = {a["proc_id"] for a in acts.values() if a["name"] == "MPI_File_write_at_all"
           and any(is_write(c) for c in posix_below(a["aid"]))}
assert len(writers) == 1 or (component != "romio321" and 1 <= len(writers) < ranks), \
    f"processes writing under MPI_File_write_at_all: {writers}"
links = json.load(open(f"{T}/links.json"))
linked = {l["parent_aid"] for l in links}
others = [a for a in acts.values() if a["name"] == "MPI_File_write_at_all" and a["proc_id"] not in writers]
implicit = sum(a["aid"] in linked for a in others)
# ROMIO ends a collective write with an error-code exchange, so every
# rank's call spans the aggregator's pwrite and all must be linked. OMPIO
# lets a rank return once its data reached the aggregator, before the
# pwrite: the server's rule (receiver inside the sender's interval) then
# rightly finds no certain parent, so only the count is reported.
if component == "romio321":
    assert others and implicit == len(others), f"{implicit}/{len(others)} non-aggregator write_at_all linked to POSIX"
print(f"ok: {sum(map(data, acts.values()))} MPI-IO data accesses match; aggregator proc {writers}; "
      f"{implicit}/{len(others)} non-aggregator write_at_all implicitly linked to POSIX")
PY
log "mpi io test passed"
