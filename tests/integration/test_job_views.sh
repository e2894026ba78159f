#!/usr/bin/env bash
# `siox jobs` and `siox summary` on a warehouse filled by a real run: 4 ranks
# of mpi_io_workload (MPI-IO over POSIX, ROMIO with one aggregator) with
# libsiox-mpi + libsiox-posix preloaded, through a real siox-daemon and
# siox-server. Asserts that the summary's MPI-IO figures for the data file are
# the calls the ranks made (their manifests: count, bytes, ranks), that the
# job's totals are the MPI-IO bytes plus the manifests' own stdio bytes, that
# `siox jobs` agrees with the summary, and the error paths. Leaves the
# documents in $SIOX_ARTIFACTS (when set) for the web tests to compare.
. "$(dirname "$0")/lib.sh"
mpi_env
export SIOX_TEST_HINTS="romio_cb_write=enable;romio_cb_read=enable;cb_nodes=1"
RANKS=4
JOB=jobviews-$$
OUT=/dev/shm/siox-jobviews.$$
trap 'rm -f "$OUT"; cleanup' EXIT

start_server
start_daemon "" --batch-ms 50
log "instrumented run"
mpirun --oversubscribe -np $RANKS -x ASAN_OPTIONS -x LD_PRELOAD="$ASAN_RT$SIOX_MPI_LIB:$SIOX_POSIX_LIB" \
  -x SIOX_SOCKET="$DAEMON_SOCK" -x SIOX_JOB_ID=$JOB "$SIOX_MPI_WORKLOAD" "$OUT" "$T/manifest" \
  >>"$T/workload.log" 2>&1 || fail "mpi_io_workload failed"

# every rank's MPI_Finalize stored means the run is in
for _ in $(seq 300); do
  n=$(sql "SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) WHERE t.name = 'MPI_Finalize'")
  [ "$n" -ge $RANKS ] && break
  sleep 0.2
done
[ "$n" -eq $RANKS ] || fail "$n MPI_Finalize stored, want $RANKS"
sleep 1 # the POSIX layer's last calls (the manifests' fclose) travel in the same flush

# the job's top-level calls (no explicit parent) as the warehouse holds them,
# for the totals; classified by the test's own name lists below
sql "SELECT coalesce(json_agg(r), '[]') FROM (
       SELECT t.name, n.swid,
              (SELECT v.value FROM activity_attributes v WHERE v.aid = a.aid AND v.name = 'io/bytes')::bigint AS bytes,
              (SELECT v.value FROM activity_attributes v WHERE v.aid = a.aid AND v.name = 'io/result')::bigint AS result
         FROM activities a JOIN processes p USING (proc_id)
         JOIN activity_types t ON t.type_id = a.type_id JOIN nodes n ON n.node_id = a.node_id
        WHERE p.job = '$JOB' AND a.parent_aid IS NULL AND n.swid IN ('HDF5', 'MPI-IO', 'POSIX', 'stdio')) r" \
  >"$T/top.json"
siox_cli summary --job "$JOB" --json >"$T/summary.json" || fail "siox summary failed"
siox_cli jobs --json >"$T/jobs.json" || fail "siox jobs failed"
siox_cli summary --job "$JOB" >"$T/summary.txt" || fail "siox summary (text) failed"
siox_cli jobs --sort io_time >"$T/jobs.txt" || fail "siox jobs (text) failed"
if [ -n "${SIOX_ARTIFACTS:-}" ]; then mkdir -p "$SIOX_ARTIFACTS" && cp "$T"/summary.* "$T"/jobs.* "$SIOX_ARTIFACTS"/; fi

python3 - "$T" $RANKS "$JOB" "$OUT" <<'PY' || fail "the job views do not match what the workload made"
import collections, glob, json, os, sys
T, ranks, job, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
man = [l.split() + [int(f.rsplit(".", 1)[1])] for f in glob.glob(f"{T}/manifest.*") for l in open(f)]
want = collections.Counter()
for name, off, nbytes, coll, rank in man:
    kind = "read" if "read" in name else "write"
    want[kind] += 1
    want["bytes_" + ("read" if kind == "read" else "written")] += int(nbytes)
s = json.load(open(f"{T}/summary.json"))
assert s["job"] == job and s["processes"] == ranks and s["ranks"] == ranks, (s["job"], s["processes"], s["ranks"])
mpiio = {l["layer"]: l for l in s["layers"]}["MPI-IO"]
f = {x["file"]: x for x in mpiio["files"]}
assert out in f, f"{out} not among the MPI-IO files {list(f)}"
d = f[out]
got = {"read": d["reads"], "write": d["writes"], "bytes_read": d["bytes_read"], "bytes_written": d["bytes_written"]}
assert got == dict(want), f"MPI-IO on {out}: {got}, the ranks made {dict(want)}"
assert d["ranks"] == list(range(ranks)), d["ranks"]
assert sum(d["access_sizes"].values()) == d["reads"] + d["writes"]
# the job's totals: every top-level read and write, by the test's own lists
# (POSIX counts what moved, io/result; the other layers what was asked)
R = {"read", "pread", "pread64", "readv", "preadv", "fread", "fgets", "fscanf", "vfscanf", "fgetc", "getc"}
W = {"write", "pwrite", "pwrite64", "writev", "pwritev", "fwrite", "fputs", "fprintf", "vfprintf", "fputc", "putc"}
want_r = want_w = 0
for c in json.load(open(f"{T}/top.json")):
    n = c["name"]
    moved = max(c["result"], 0) if c["swid"] == "POSIX" and c["result"] is not None else c["bytes"]
    if moved is None: continue
    if n in R or n.startswith(("MPI_File_read", "MPI_File_iread")): want_r += moved
    if n in W or n.startswith(("MPI_File_write", "MPI_File_iwrite")): want_w += moved
stdio = sum(os.path.getsize(m) for m in glob.glob(f"{T}/manifest.*"))
t = s["totals"]
assert t["bytes_read"] == want_r and t["bytes_written"] == want_w, (t, want_r, want_w)
# ... which hold the calls of the workload itself: MPI-IO's and the manifests' fprintf
assert want_r >= want["bytes_read"] and want_w >= want["bytes_written"] + stdio, (want_r, want_w, want, stdio)
crit = s["critical_files"]
assert crit and abs(sum(c["exclusive_ns"] for c in crit) - s["busy_ns"]) <= len(crit), "shares do not add up"
# the data file is one of them, and they come most critical first (not that
# it comes first: Open MPI's hwloc reads /sys files at MPI_Init, which on a
# loaded machine took longer than the ranks' small writes to /dev/shm)
assert out in [c["file"] for c in crit], f"the data file is not among the critical files {crit}"
assert all(a["exclusive_ns"] >= b["exclusive_ns"] for a, b in zip(crit, crit[1:])), "critical files not sorted"
j = [x for x in json.load(open(f"{T}/jobs.json"))["jobs"] if x["job"] == job]
assert len(j) == 1, j
j = j[0]
for k in ("bytes_read", "bytes_written", "io_time_ns"):
    assert j[k] == t[k], f"siox jobs says {k} {j[k]}, siox summary {t[k]}"
assert j["processes"] == ranks
colls = sum(1 for m in man if m[3] == "1")
fac = j["factors"]
assert abs(fac["collective_share"] - colls / len(man)) < 1e-9, (fac["collective_share"], colls, len(man))
assert fac["small_requests_share"] == 1.0, fac  # every call here moves < 64 KiB
print(f"ok: {len(man)} MPI-IO calls, {want['bytes_written']} B written + {stdio} B of manifests, "
      f"critical file {crit[0]['file']} {crit[0]['share']:.0%}")
PY

# errors: an unknown job and a missing --job
if siox_cli summary --job no-such-job 2>"$T/err"; then fail "summary of an unknown job succeeded"; fi
grep -q "no-such-job" "$T/err" || fail "unknown job: $(cat "$T/err")"
set +e
siox_cli summary 2>/dev/null; rc=$?
siox_cli jobs --sort colour 2>/dev/null; rc2=$?
set -e
[ $rc -eq 2 ] && [ $rc2 -eq 2 ] || fail "bad command lines exit $rc and $rc2, want 2"
log "job views test passed"
