#!/usr/bin/env bash
# `siox jobs` reads each job's stored sums (kind 'jobs' of job_aggregates,
# warehouse/src/wh_jobs.c, wh_jobs_store.c) while they hold, and groups a job
# again once its activities change. Two jobs, each 2 ranks of mpi_io_workload
# through a real siox-daemon and siox-server. Asserts that:
#  - a listing stores one 'jobs' row per job, and the next listing reads it
#    (a marked stored row is what the list shows);
#  - once more activities arrive for job A, A's row in the list is no longer
#    the stored one but equals a direct listing (nothing stored) and counts
#    the new activities, while B, untouched, keeps its stored row;
#  - the whole list, served from the stored rows, is byte for byte what a
#    direct listing prints.
. "$(dirname "$0")/lib.sh"
mpi_env
A=jobsagg-a-$$ B=jobsagg-b-$$
OUT=/dev/shm/siox-jobsagg.$$
trap 'rm -f "$OUT"*; cleanup' EXIT

# no analysis: its findings, counted in each row of the list, would change
# between the listings compared below
start_server --no-analyze
start_daemon "" --batch-ms 50
mpi_jobs "$OUT" $A $B

jobs() { siox_cli jobs --json >"$1" || fail "siox jobs failed"; }
stored() { sql "SELECT count(*) FROM job_aggregates WHERE job = '$1' AND kind = 'jobs'"; }
row() { sql "SELECT acts || ' ' || max_aid || ' ' || updated_at FROM job_aggregates WHERE job = '$1' AND kind = 'jobs'"; }
field() { # job, field of its row in the list
  python3 -c 'import json, sys; print(next(j[sys.argv[3]] for j in json.load(open(sys.argv[1]))["jobs"] if j["job"] == sys.argv[2]))' "$@"; }
jobs "$T/l0.json"
[ "$(stored $A)" = 1 ] && [ "$(stored $B)" = 1 ] || fail "the jobs' sums were not stored ($(stored $A), $(stored $B) rows)"

# the next listing reads the stored sums
sql "UPDATE job_aggregates SET doc = replace(doc, '\"calls\":', '\"calls\":1000000') WHERE job = '$A' AND kind = 'jobs'" >/dev/null
jobs "$T/l1.json"
calls0=$(field "$T/l0.json" $A calls) calls1=$(field "$T/l1.json" $A calls)
[ "$calls1" = "1000000$calls0" ] || fail "the second listing did not read $A's stored sums: calls $calls0 then $calls1"
[ "$(field "$T/l1.json" $B calls)" = "$(field "$T/l0.json" $B calls)" ] || fail "$B's stored sums differ from its first grouping"

# more of job A arrives: its activities again, later, in the same processes
# (local numbers moved up by 2^20, as bench_web_job.sh fills)
span=$(sql "SELECT max(end_ns) - min(start_ns) + 1000 FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$A'")
sql "INSERT INTO activities (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, err,
                             attr_ids, attr_vals, real_ids, real_vals)
     SELECT a.aid + (1::bigint << 20), a.proc_id, a.parent_aid + (1::bigint << 20), a.node_id, a.type_id,
            a.start_ns + $span, a.end_ns + $span, a.err, a.attr_ids, a.attr_vals, a.real_ids, a.real_vals
       FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$A'" >/dev/null
b_row=$(row $B)
jobs "$T/l2.json"
[ "$(field "$T/l2.json" $A calls)" = "$((2 * calls0))" ] ||
  fail "$A's row after more activities arrived: calls $(field "$T/l2.json" $A calls), want $((2 * calls0))"
[ "$(field "$T/l2.json" $A activities)" = "$((2 * $(field "$T/l0.json" $A activities)))" ] ||
  fail "$A's late activities are not counted"
[ "$(row $B)" = "$b_row" ] || fail "$B's stored row changed though $B did not"

# the direct listing: nothing stored
jobs "$T/l3.json"
sql "DELETE FROM job_aggregates" >/dev/null
jobs "$T/l4.json"
cmp -s "$T/l2.json" "$T/l4.json" || fail "the listing after the late activities differs from a direct listing"
cmp -s "$T/l3.json" "$T/l4.json" || fail "the listing served from stored sums differs from a direct listing"
log "jobs aggregates test passed"
