#!/usr/bin/env bash
# POSIX layer end to end: test_posix_workload (fds, dup, stdio, threads, a
# fork whose child writes to an inherited fd and then execs) runs under
# LD_PRELOAD=libsiox-posix.so against the real siox-daemon and siox-server.
# Asserts: the warehouse holds exactly the calls the workload made (per
# process, node and name), each data call with the offset and byte count
# the workload computed, the path -> fd and FILE -> fd mappings, the one
# error, the one MPI-IO receive (siox_posix_hooks.h); and the files written are identical to an uninstrumented run.
. "$(dirname "$0")/lib.sh"

posix_preload # sets PRELOAD
# libasan's own fprintf/fscanf interceptors come first and call the real
# vfprintf/vfscanf, which is what this layer then sees and names.
[ "${SIOX_SANITIZE:-0}" != 1 ] || export POSIX_IT_ALIASES="fprintf=vfprintf fscanf=vfscanf"

start_server
start_daemon "" --batch-ms 50

mkdir -p "$T/plain" "$T/traced"
"$SIOX_POSIX_WORKLOAD" "$T/plain" >"$T/plain.out" 2>>"$T/workload.log" || fail "uninstrumented workload failed"
SIOX_JOB_ID=posix-it LD_PRELOAD=$PRELOAD "$SIOX_POSIX_WORKLOAD" "$T/traced" >"$T/expect.out" 2>>"$T/workload.log" \
  || fail "workload failed under the preload"

sums() { (cd "$1" && find . -type f | sort | xargs sha256sum); }
[ "$(sums "$T/plain")" = "$(sums "$T/traced")" ] || fail "files differ with the preload: $(diff <(sums "$T/plain") <(sums "$T/traced"))"
log "files identical with and without the preload ($(sums "$T/traced" | wc -l) files)"

# Hand count of the workload: fd_writes 22, fd_reads 10, stdio_work 20,
# names 6, mpiio_hook 4, threads 2 x 22, fork_and_exec: parent 4 +
# child 8 + exec'd 5.
WANT=123
calls=$(grep -c '^call ' "$T/expect.out")
[ "$calls" -eq "$WANT" ] || fail "workload reports $calls calls, the hand count is $WANT"
wait_activities "$WANT" 90

sql "SELECT p.pid, n.swid, t.name, a.err,
            coalesce((SELECT a.attr_vals[i] FROM generate_subscripts(a.attr_ids, 1) i
                       WHERE a.attr_ids[i] = (SELECT id FROM ontology WHERE name = 'io/offset')), -1),
            coalesce((SELECT a.attr_vals[i] FROM generate_subscripts(a.attr_ids, 1) i
                       WHERE a.attr_ids[i] = (SELECT id FROM ontology WHERE name = 'io/bytes')), -1)
       FROM activities a JOIN activity_types t ON t.type_id = a.type_id
       JOIN nodes n ON n.node_id = t.node_id JOIN processes p ON p.proc_id = a.proc_id
      WHERE p.job = 'posix-it'" >"$T/acts.txt" || fail "activity query failed"
sql "SELECT p.pid, fo.name, df.value, tot.name, dt.value
       FROM descriptor_mappings m JOIN processes p ON p.proc_id = m.proc_id
       JOIN descriptors df ON df.desc_id = m.from_desc JOIN ontology fo ON fo.id = df.type
       JOIN descriptors dt ON dt.desc_id = m.to_desc JOIN ontology tot ON tot.id = dt.type" >"$T/maps.txt" \
  || fail "mapping query failed"

sql "SELECT p.pid, d.value, r.offset_b, r.length_b
       FROM remote_calls r JOIN descriptors d ON d.desc_id = r.desc_id
       JOIN activities a ON a.aid = r.aid JOIN processes p ON p.proc_id = a.proc_id
      WHERE r.kind = 'R'" >"$T/recv.txt" || fail "remote call query failed"

python3 - "$T/expect.out" "$T/acts.txt" "$T/maps.txt" "$T/recv.txt" <<'PY' || fail "warehouse does not match the workload"
import sys
from collections import Counter
import os
alias = dict(a.split("=") for a in os.environ.get("POSIX_IT_ALIASES", "").split())
exp = [l.split() for l in open(sys.argv[1])]
for e in exp:
    if e[0] == "call": e[3] = alias.get(e[3], e[3])
    if e[0] in ("io", "err"): e[2] = alias.get(e[2], e[2])
acts = [l.rstrip("\n").split("|") for l in open(sys.argv[2]) if l.strip()]
maps = {tuple(l.rstrip("\n").split("|")) for l in open(sys.argv[3]) if l.strip()}
bad = []
want = Counter((e[1], e[2], e[3]) for e in exp if e[0] == "call")
got = Counter((a[0], a[1], a[2]) for a in acts)
if want != got:
    bad.append(f"calls: missing {want - got}, extra {got - want}")
io = Counter((e[1], e[2], int(e[3]), int(e[4])) for e in exp if e[0] == "io")
io_names = {k[1] for k in io}
got_io = Counter((a[0], a[2], int(a[4]), int(a[5])) for a in acts if a[2] in io_names)
if io != got_io:
    bad.append(f"offsets/bytes: missing {io - got_io}, unexpected {got_io - io}")
errs = Counter((e[1], e[2], int(e[3])) for e in exp if e[0] == "err")
got_err = Counter((a[0], a[2], int(a[3])) for a in acts if int(a[3]) != 0)
if errs != got_err:
    bad.append(f"errors: want {errs}, got {got_err}")
for e in exp:
    if e[0] == "map" and (e[1], "posix/path", e[2], "posix/fd", e[3]) not in maps:
        bad.append(f"no mapping {e[2]} -> fd {e[3]} in pid {e[1]}")
    if e[0] == "smap" and not any(m[0] == e[1] and m[1] == "stdio/file" and m[3] == "posix/fd" and m[4] == e[2] for m in maps):
        bad.append(f"no mapping FILE -> fd {e[2]} in pid {e[1]}")
recv = sorted(tuple(l.rstrip("\n").split("|")) for l in open(sys.argv[4]) if l.strip())
want_recv = sorted(tuple(e[1:5]) for e in exp if e[0] == "recv")
if recv != want_recv:
    bad.append(f"MPI-IO receives: want {want_recv}, got {recv}")
dups = [m for m in maps if m[1] == "posix/fd" and m[3] == "posix/fd"]
if len(dups) != 2:
    bad.append(f"want 2 fd -> fd mappings (dup, dup2), got {dups}")
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
print(f"{len(acts)} activities, {sum(io.values())} offsets, {len(maps)} mappings match")
PY
log "posix trace test passed"
