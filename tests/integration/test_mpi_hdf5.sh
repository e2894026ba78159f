#!/usr/bin/env bash
# Parallel HDF5 end to end: 4 ranks of hdf5_parallel_write (collective
# H5Dwrite of a 2-D dataset through the MPI-IO driver, ROMIO) with
# libsiox-hdf5 + libsiox-mpi + libsiox-posix preloaded, through a real
# siox-daemon and siox-server. Asserts in the warehouse: per rank the HDF5
# calls made, H5Dwrite's name, selection bytes and collective flag, the
# explicit chain H5Dwrite -> MPI-IO -> POSIX, and a byte-identical file
# with and without SIOX.
. "$(dirname "$0")/lib.sh"
mpi_env
RANKS=4 ROWS=64 COLS=128
OUT=/dev/shm/siox-h5-it.$$
trap 'rm -f "$OUT" "$OUT".plain; cleanup' EXIT

run_writer() { # FILE [mpirun -x options...]
  local file=$1
  shift
  rm -f "$file"
  mpirun --oversubscribe -np $RANKS -x ASAN_OPTIONS "$@" "$SIOX_HDF5_WRITER" "$file" $ROWS $COLS \
    >>"$T/writer.log" 2>&1 || fail "hdf5_parallel_write failed"
}

log "uninstrumented run"
run_writer "$OUT.plain"
start_server
start_daemon "" --batch-ms 50
log "instrumented run"
run_writer "$OUT" -x LD_PRELOAD="$ASAN_RT$SIOX_HDF5_LIB:$SIOX_MPI_LIB:$SIOX_POSIX_LIB" \
  -x SIOX_SOCKET="$DAEMON_SOCK" -x SIOX_JOB_ID=hdf5-it
cmp -s "$OUT" "$OUT.plain" || fail "HDF5 file differs with SIOX preloaded"

# Per rank: Fcreate, Gcreate2, Dcreate2, Dwrite, Acreate2, Awrite, Fflush,
# Dread, Dclose, Fclose.
want=$((RANKS * 10))
q="SELECT count(*) FROM activities a JOIN nodes n USING (node_id) WHERE n.swid = 'HDF5'"
for _ in $(seq 300); do
  n=$(sql "$q" 2>/dev/null || echo 0)
  [ "$n" -ge "$want" ] && break
  sleep 0.2
done
[ "$n" -eq "$want" ] || fail "warehouse holds $n HDF5 activities, want $want"
q="SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) WHERE t.name = 'MPI_Finalize'"
for _ in $(seq 100); do [ "$(sql "$q")" -ge $RANKS ] && break; sleep 0.2; done

sql "SELECT coalesce(json_agg(r), '[]') FROM (
       SELECT a.aid, a.proc_id, a.parent_aid, n.swid, t.name FROM activities a
       JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)) r" >"$T/acts.json"
sql "SELECT coalesce(json_agg(r), '[]') FROM (
       SELECT v.aid, v.name, v.value FROM activity_attributes v JOIN activities a USING (aid)
       JOIN nodes n USING (node_id) WHERE n.swid IN ('HDF5', 'MPI')) r" >"$T/attrs.json"

python3 - "$T" $RANKS $ROWS $COLS <<'PY' || fail "warehouse does not match the HDF5 calls made"
import collections, json, sys
T, ranks, rows, cols = sys.argv[1], *map(int, sys.argv[2:])
acts = {a["aid"]: a for a in json.load(open(f"{T}/acts.json"))}
attrs = collections.defaultdict(dict)
for r in json.load(open(f"{T}/attrs.json")):
    attrs[r["aid"]][r["name"]] = r["value"]
proc_rank = {a["proc_id"]: int(attrs[a["aid"]]["mpi/rank"]) for a in acts.values() if a["name"] == "MPI_Init"}
assert sorted(proc_rank.values()) == list(range(ranks)), f"ranks {proc_rank}"
calls = ["H5Fcreate", "H5Gcreate2", "H5Dcreate2", "H5Dwrite", "H5Acreate2", "H5Awrite", "H5Fflush",
         "H5Dread", "H5Dclose", "H5Fclose"]
for rank in range(ranks):
    got = collections.Counter(a["name"] for a in acts.values()
                              if a["swid"] == "HDF5" and proc_rank.get(a["proc_id"]) == rank)
    assert got == collections.Counter(calls), f"rank {rank}: {got}"
sel = str(rows * cols * 8)
for a in acts.values():
    v = attrs[a["aid"]]
    if a["name"] in ("H5Dwrite", "H5Dread"):
        assert v.get("hdf5/name") == "/results/field", v
        assert v.get("hdf5/selection_bytes") == sel and v.get("io/bytes") == sel, v
        assert v.get("mpi/collective") == ("1" if a["name"] == "H5Dwrite" else "0"), v
    if a["name"] == "H5Dcreate2": assert v.get("hdf5/name") == "/results/field", v
    if a["name"] == "H5Awrite": assert v.get("io/bytes") == "4", v
children = collections.defaultdict(list)
for a in acts.values():
    if a["parent_aid"]: children[a["parent_aid"]].append(a)
def below(aid, swid):
    out = []
    for c in children[aid]:
        if c["swid"] == swid: out.append(c)
        out += below(c["aid"], swid)
    return out
chains = 0
for w in (a for a in acts.values() if a["name"] == "H5Dwrite"):
    mpiio = [c for c in children[w["aid"]] if c["swid"] == "MPI-IO"]
    assert any(c["name"].startswith("MPI_File_write") for c in mpiio), f"H5Dwrite {w['aid']}: MPI-IO children {mpiio}"
    chains += any(p["name"] in ("pwrite", "pwrite64", "write", "writev")
                  for c in mpiio for p in below(c["aid"], "POSIX"))
assert chains >= 1, "no H5Dwrite -> MPI-IO -> POSIX write chain"
print(f"ok: HDF5 calls match on {ranks} ranks; {chains} H5Dwrite -> MPI-IO -> POSIX write chains")
PY
log "mpi hdf5 test passed"
