#!/usr/bin/env bash
# System tests (b), (c), (d) on one testbed (4 GlusterFS bricks, one slowed,
# SIOX translators) with the 4-rank HDF5 / MPI-IO / POSIX workload:
# (d) the output files are byte-identical with and without `siox run`;
# (c) the warehouse holds exactly the calls the workload says it made, per
#     layer (HDF5: all; MPI-IO and POSIX: those the program made itself);
# (b) every H5Dwrite's tree reaches HDF5 -> MPI-IO -> POSIX ->
#     GlusterFS-client -> GlusterFS-brick, and at each level the children's
#     io/bytes add up to the parent's (see the checks below for why each
#     level can be checked that way);
# (e) stdio's buffered writes and reads, made inside libc out of the POSIX
#     layer's sight, still link: every client writev of the stdio file has a stdio
#     parent (the fwrite or fclose that wrote the buffer out), and they add
#     up to the bytes written. Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
trap 'tb_stop; cleanup' EXIT

start_server
start_daemon "" --batch-ms 50
JOB="sys-tree-$$"
slow=$((RANDOM % BRICKS + 1))
tb_start "$slow" "$JOB-fs"

# (d) the same workload with and without SIOX, into files of the same kinds.
files_of() { local b; for b in $(seq $BRICKS); do echo "${H5_ON[$b]}"; done; echo "$MPIIO"
             for b in $(seq $BRICKS); do echo "${P_ON[$b]}"; done; echo "$STDIO"; }
pick_files plain
run_workload "$JOB-plain" "$T/plain.out"
mapfile -t PLAIN < <(files_of)
pick_files inst
log "instrumented run, brick $slow slowed"
run_workload "$JOB" "$T/inst.out" "$SIOX_CLI" run --layers posix,mpi,hdf5 --socket "$SIOX_SOCKET" --
mapfile -t INST < <(files_of)
wait_finalized "$JOB" 4
wait_links

# gfid (hex) -> brick number of every instrumented file, from the bricks.
for b in $(seq $BRICKS); do
  for f in "${H5_ON[$b]}" "${P_ON[$b]}"; do
    python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "trusted.gfid").hex(), sys.argv[2], sys.argv[3])' \
      "$TB/brick$b/$f" "$b" "$MNT/$f"
  done
done >"$T/gfids.txt"
b=$(brick_of "$STDIO")
python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], "trusted.gfid").hex(), sys.argv[2], sys.argv[3])' \
  "$TB/brick$b/$STDIO" "$b" "$MNT/$STDIO" >>"$T/gfids.txt" || fail "no gfid for $STDIO"

q() { sql "SELECT coalesce(json_agg(r), '[]') FROM ($1) r"; }
q "SELECT a.aid, a.parent_aid, a.proc_id, n.swid, n.hwid, t.name, a.start_ns, a.end_ns,
          (SELECT v.value FROM activity_attributes v WHERE v.aid = a.aid AND v.name = 'io/bytes') AS bytes,
          (SELECT v.value FROM activity_attributes v WHERE v.aid = a.aid AND v.name = 'posix/path') AS path,
          (SELECT v.value FROM activity_attributes v WHERE v.aid = a.aid AND v.name = 'posix/fd') AS fd,
          (SELECT v.value FROM activity_attributes v WHERE v.aid = a.aid AND v.name = 'io/result') AS result
   FROM activities a JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
   LEFT JOIN processes p USING (proc_id)
   WHERE p.job = '$JOB' OR n.swid LIKE 'GlusterFS%'" >"$T/acts.json"
q "SELECT parent_aid, child_aid, confidence FROM causal_links" >"$T/links.json"
q "SELECT r.aid, r.kind, d.value FROM remote_calls r JOIN descriptors d USING (desc_id) WHERE r.kind = 'S'" >"$T/sends.json"

# On failure: the remote calls of the instrumented files, for diagnosis.
dump_calls() {
  sql "SELECT n.swid, t.name, r.aid, r.kind, d.value, r.object_id, r.offset_b, r.length_b, r.matched,
              a.start_ns, a.end_ns, (SELECT string_agg(c.child_aid || '@' || c.confidence, ',') FROM causal_links c WHERE c.parent_aid = a.aid)
       FROM remote_calls r JOIN descriptors d USING (desc_id) JOIN activities a USING (aid)
       JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
       WHERE d.value IN ($(sed "s/ .*//; s/.*/'&'/" "$T/gfids.txt" | paste -sd,))
         AND t.name IN ('pwrite', 'writev') ORDER BY d.value, r.offset_b, a.start_ns" >&2 || true
}
python3 - "$T" $BRICKS "$TB" "${WL_ARGS[-1]}" <<'PY' || { dump_calls; fail "warehouse does not match the workload"; }
import collections, json, sys
T, bricks, TB = sys.argv[1], int(sys.argv[2]), sys.argv[3]
acts = {a["aid"]: a for a in json.load(open(f"{T}/acts.json"))}
kids = collections.defaultdict(list)          # explicit children
for a in acts.values():
    if a["parent_aid"] in acts: kids[a["parent_aid"]].append(a)
links = collections.defaultdict(list)         # implicit children
for l in json.load(open(f"{T}/links.json")):
    if l["parent_aid"] in acts and l["child_aid"] in acts: links[l["parent_aid"]].append(acts[l["child_aid"]])
sends = collections.defaultdict(set)
for s in json.load(open(f"{T}/sends.json")): sends[s["aid"]].add(s["value"])
gfid_brick, posix_paths, stdio_g = {}, set(), None
for line in open(f"{T}/gfids.txt"):
    g, b, path = line.split()
    gfid_brick[g] = int(b)
    if path.endswith(".posix"): posix_paths.add(path)
    if path.endswith(".stdio"): stdio_g = g
B = lambda a: int(a["bytes"])
app = [a for a in acts.values() if a["swid"] in ("HDF5", "MPI-IO", "POSIX", "stdio")]

# (c) counts per layer against the workload's own "COUNT LAYER CALL N".
want = collections.Counter()
for line in open(f"{T}/inst.out"):
    if line.startswith("COUNT "):
        _, layer, call, n = line.split()
        want[(layer, call)] = int(n)
got = collections.Counter()
for a in app:
    if a["swid"] == "HDF5": got[("HDF5", a["name"])] += 1
    # The program's own MPI-IO calls: nothing above them (HDF5's have an H5* parent).
    if a["swid"] == "MPI-IO" and a["parent_aid"] is None: got[("MPI-IO", a["name"])] += 1
# The program's own POSIX calls on its POSIX files: opens by path, reads and
# writes by the gfid they send to the file-system client, closes by the fd
# an open returned (the first close of that fd after the open).
opens = [a for a in app if a["swid"] == "POSIX" and a["parent_aid"] is None and a["name"] == "open"
         and a["path"] in posix_paths]
got[("POSIX", "open")] = len(opens)
for a in app:
    if a["swid"] != "POSIX" or a["parent_aid"] is not None or a["name"] not in ("pwrite", "pread"): continue
    # The gfid sent must be one of the POSIX files' (the H5 files are written under MPI-IO).
    if sends[a["aid"]] & set(gfid_brick): got[("POSIX", a["name"])] += 1
for o in opens:
    closes = sorted((c for c in app if c["proc_id"] == o["proc_id"] and c["name"] == "close" and
                     c["fd"] == o["result"] and c["start_ns"] >= o["end_ns"]), key=lambda c: c["start_ns"])
    got[("POSIX", "close")] += bool(closes)
# The program's own stdio calls: the fwrites that send the stdio file's gfid
# (every one must), and the freads of a whole block (MPI_Init's own freads
# read 8 KiB).
block = int(sys.argv[4])
for a in app:
    if a["swid"] == "stdio" and a["name"] == "fwrite" and stdio_g in sends[a["aid"]]: got[("stdio", "fwrite")] += 1
    if a["swid"] == "stdio" and a["name"] == "fread" and a["bytes"] is not None and B(a) == block:
        got[("stdio", "fread")] += 1
assert got == want, f"counts differ:\n want {sorted(want.items())}\n got  {sorted(got.items())}"
print(f"(c) warehouse counts equal the workload's: {sorted(want.items())}")

# The application's own POSIX writes are single 64 KiB page-aligned pwrites:
# FUSE hands each to the client as one writev, the client to one brick.
for a in app:
    if a["swid"] == "POSIX" and a["parent_aid"] is None and a["name"] == "pwrite" and sends[a["aid"]] & set(gfid_brick):
        c = [x for x in links[a["aid"]] if x["swid"] == "GlusterFS-client" and x["name"] == "writev"]
        assert len(c) == 1 and B(c[0]) == B(a), f"pwrite {a['aid']}: client writevs {c}"
        br = [x for x in links[c[0]["aid"]] if x["swid"] == "GlusterFS-brick"]
        assert len(br) == 1 and B(br[0]) == B(a), f"client writev {c[0]['aid']}: brick writevs {br}"

# (b) the tree of every H5Dwrite, level by level.
POSIX_W = ("pwrite", "pwrite64", "write", "writev")
n = 0
for h in (a for a in app if a["name"] == "H5Dwrite"):
    # HDF5 -> MPI-IO (explicit, same thread): one MPI_File_write_at_all with
    # the dataset selection's bytes (the dataset is allocated at create time,
    # so H5Dwrite writes raw data only).
    m = [x for x in kids[h["aid"]] if x["swid"] == "MPI-IO" and x["name"].startswith("MPI_File_write")]
    assert sum(map(B, m)) == B(h), f"H5Dwrite {h['aid']} ({B(h)} B): MPI-IO {[(x['name'], B(x)) for x in m]}"
    for mi in m:
        # MPI-IO -> POSIX (explicit): each rank's rows are contiguous and the
        # ranks' ranges do not interleave, so ROMIO's automatic collective
        # buffering stays off and each rank writes its own bytes. (With
        # aggregation this level becomes many-to-one across ranks, implicit
        # with split confidence, and is not checked per call.)
        p = [x for x in kids[mi["aid"]] if x["swid"] == "POSIX" and x["name"] in POSIX_W]
        assert sum(map(B, p)) == B(mi), f"{mi['name']} {mi['aid']} ({B(mi)} B): POSIX {[B(x) for x in p]}"
        for pi in p:
            # POSIX -> GlusterFS-client (implicit, gfid): FUSE splits a write at
            # 128 KiB / page boundaries; the pieces add up to the write.
            c = [x for x in links[pi["aid"]] if x["swid"] == "GlusterFS-client" and x["name"] == "writev"]
            assert c and sum(map(B, c)) == B(pi), f"pwrite {pi['aid']} ({B(pi)} B): client {[B(x) for x in c]}"
            (g,) = sends[pi["aid"]]
            for ci in c:
                # GlusterFS-client -> GlusterFS-brick: one brick writev, the
                # same bytes, on the brick that holds the file.
                br = [x for x in links[ci["aid"]] if x["swid"] == "GlusterFS-brick"]
                assert len(br) == 1 and B(br[0]) == B(ci), f"client writev {ci['aid']}: brick {br}"
                assert br[0]["hwid"] == f"brick{gfid_brick[g]}:{TB}/brick{gfid_brick[g]}", br[0]["hwid"]
            n += 1
assert n > 0

# (e) stdio -> GlusterFS-client: each client writev on the stdio file is
# linked from a stdio call of the job, and the writevs add up to the file.
cw = [a for a in acts.values() if a["swid"] == "GlusterFS-client" and a["name"] == "writev"]
parents = collections.defaultdict(list)
for p, kids_ in links.items():
    for k in kids_: parents[k["aid"]].append(acts[p])
stdio_w = [c for c in cw if any(p["swid"] == "stdio" for p in parents[c["aid"]])]
want_bytes = want[("stdio", "fwrite")] * block
assert sum(map(B, stdio_w)) == want_bytes, \
    f"stdio-linked client writevs: {[(B(c), [p['name'] for p in parents[c['aid']]]) for c in stdio_w]}, want {want_bytes} B"
print(f"(e) {len(stdio_w)} client writevs of the stdio file ({want_bytes} B) linked to "
      f"{sorted(set(p['name'] for c in stdio_w for p in parents[c['aid']] if p['swid'] == 'stdio'))}")
# ...and its buffered reads: the client readvs that refilled stdio's buffer
# are linked from the freads that asked for them, and add up to the file.
cr = [a for a in acts.values() if a["swid"] == "GlusterFS-client" and a["name"] == "readv"]
stdio_r = [c for c in cr if any(p["swid"] == "stdio" and p["name"] == "fread" and stdio_g in sends[p["aid"]]
                                 for p in parents[c["aid"]])]
want_read = want[("stdio", "fread")] * block
assert sum(map(B, stdio_r)) == want_read, \
    f"stdio-linked client readvs: {[(B(c), [p['name'] for p in parents[c['aid']]]) for c in stdio_r]}, want {want_read} B"
print(f"(e) {len(stdio_r)} client readvs of the stdio file ({want_read} B) linked to "
      f"{sorted(set(p['name'] for c in stdio_r for p in parents[c['aid']] if p['swid'] == 'stdio'))}")
print(f"(b) {sum(1 for a in app if a['name'] == 'H5Dwrite')} H5Dwrite trees: HDF5 -> MPI-IO -> POSIX -> "
      f"GlusterFS-client -> GlusterFS-brick, bytes add up at every level ({n} POSIX writes)")
PY

# The same tree through the CLI, for the slowest H5Dwrite.
siox_cli top --job "$JOB" --layer HDF5 --name H5Dwrite -n 1 --json >"$T/top.json" || fail "siox top failed"
aid=$(json_get "$T/top.json" '(j.get("activities", j) if isinstance(j, dict) else j)[0]["aid"]')
siox_cli graph "$aid" --json >"$T/graph.json" || fail "siox graph $aid failed"
python3 - "$T/graph.json" <<'PY' || fail "siox graph of H5Dwrite $aid lacks a layer"
import json, sys
swids = set()
def walk(x):
    if isinstance(x, dict):
        if "swid" in x: swids.add(x["swid"])
        for v in x.values(): walk(v)
    elif isinstance(x, list):
        for v in x: walk(v)
walk(json.load(open(sys.argv[1])))
need = {"HDF5", "MPI-IO", "POSIX", "GlusterFS-client", "GlusterFS-brick"}
assert need <= swids, swids
PY
log "siox graph of the slowest H5Dwrite ($aid) reaches every layer"

# (d) last: md5sum's reads go through the traced GlusterFS client, and a
# read within the lateness window (2 s) of the job's calls on the same file
# is linked to them at the lowest class, which (e) would then count (seen
# once under load: a 4 KiB readv of md5sum linked to the job's fwrite and
# fread). After the checks above, such links change nothing they read.
for k in "${!INST[@]}"; do
  a=$(md5sum <"$MNT/${PLAIN[$k]}") b=$(md5sum <"$MNT/${INST[$k]}")
  [ "$a" = "$b" ] || fail "${INST[$k]} differs from ${PLAIN[$k]} (written without siox run)"
done
log "(d) ${#INST[@]} output files identical with and without siox run"
log "sys tree test passed"
