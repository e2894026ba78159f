#!/usr/bin/env bash
# A job's stored aggregates (job_aggregates, warehouse/src/wh_job_cache.c)
# are served only while they hold. Two jobs, each 2 ranks of mpi_io_workload
# through a real siox-daemon and siox-server. Asserts that:
#  - `siox summary --job J` stores the document and the next view reads it
#    (a marked stored document is what the view shows);
#  - once more activities arrive for job A, A's view is no longer the stored
#    one but equals a direct scan (the same view with nothing stored), and
#    counts the new activities;
#  - job B, untouched, is still served from its own row, and that row is
#    byte for byte what a direct scan prints.
. "$(dirname "$0")/lib.sh"
mpi_env
A=jobagg-a-$$ B=jobagg-b-$$
OUT=/dev/shm/siox-jobagg.$$
trap 'rm -f "$OUT"*; cleanup' EXIT

start_server
start_daemon "" --batch-ms 50
mpi_jobs "$OUT" $A $B

summary() { siox_cli summary --job "$1" --json >"$2" || fail "siox summary --job $1 failed"; }
stored() { sql "SELECT count(*) FROM job_aggregates WHERE job = '$1' AND kind = 'summary'"; }
summary $A "$T/a0.json"
summary $B "$T/b0.json"
[ "$(stored $A)" = 1 ] && [ "$(stored $B)" = 1 ] || fail "the summaries were not stored"

# the next view reads the stored document
sql "UPDATE job_aggregates SET doc = '{\"marked\": true}' WHERE job = '$A'" >/dev/null
summary $A "$T/a1.json"
grep -q marked "$T/a1.json" || fail "the second view of $A did not read the stored document: $(head -c 200 "$T/a1.json")"
summary $B "$T/b1.json"
cmp -s "$T/b0.json" "$T/b1.json" || fail "$B's stored summary differs from its first computation"

# more of job A arrives: its activities again, later, in the same processes
# (local numbers moved up by 2^20, as bench_web_job.sh fills; the text
# attributes joined after the copy are the originals' only)
span=$(sql "SELECT max(end_ns) - min(start_ns) + 1000 FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$A'")
sql "INSERT INTO activities (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, err,
                             attr_ids, attr_vals, real_ids, real_vals)
     SELECT a.aid + (1::bigint << 20), a.proc_id, a.parent_aid + (1::bigint << 20), a.node_id, a.type_id,
            a.start_ns + $span, a.end_ns + $span, a.err, a.attr_ids, a.attr_vals, a.real_ids, a.real_vals
       FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$A';
     INSERT INTO activity_text_attrs (aid, attr_id, value)
     SELECT t.aid + (1::bigint << 20), t.attr_id, t.value
       FROM activity_text_attrs t JOIN activities a ON a.aid = t.aid JOIN processes p USING (proc_id) WHERE p.job = '$A'" >/dev/null
b_row=$(sql "SELECT acts || ' ' || max_aid || ' ' || updated_at FROM job_aggregates WHERE job = '$B' AND kind = 'summary'")
summary $A "$T/a2.json"
summary $B "$T/b2.json"
grep -q marked "$T/a2.json" && fail "$A's view served the stored document after more activities arrived"
[ "$(sql "SELECT acts || ' ' || max_aid || ' ' || updated_at FROM job_aggregates WHERE job = '$B' AND kind = 'summary'")" = "$b_row" ] ||
  fail "$B's stored row changed though $B did not"

# the direct scans: the same views with nothing stored
sql "DELETE FROM job_aggregates" >/dev/null
summary $A "$T/a3.json"
sql "DELETE FROM job_aggregates" >/dev/null
summary $B "$T/b3.json"
cmp -s "$T/a2.json" "$T/a3.json" || fail "$A's view after the late activities differs from a direct scan"
cmp -s "$T/b2.json" "$T/b3.json" || fail "$B's stored view differs from a direct scan"
python3 - "$T" <<'PY' || fail "job A's late activities are not counted"
import json, sys
T = sys.argv[1]
a0, a2 = (json.load(open(f"{T}/{n}.json"))["totals"] for n in ("a0", "a2"))
assert a2["activities"] == 2 * a0["activities"] and a2["calls"] == 2 * a0["calls"], (a0, a2)
assert a2["bytes_written"] == 2 * a0["bytes_written"], (a0, a2)
print(f"ok: {a0['activities']} then {a2['activities']} activities")
PY
log "job aggregates test passed"
