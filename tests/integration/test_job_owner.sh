#!/usr/bin/env bash
# Job ids are the daemon's word, keyed by uid (issue 9, part 6). User B
# (daemon) runs its job job-of-b; user A (nobody) then claims job-of-b in
# its HELLO while its environment says SLURM_JOB_ID=job-of-a, and once with
# no job in its environment at all. A's activities must land in job-of-a and
# in "claimed:job-of-b", never in job-of-b: B's job holds B's activities only,
# and B's `siox top --job job-of-b` and the admin's show B's alone.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to run clients as other users"; exit 77; }
for u in nobody daemon; do id -u "$u" >/dev/null 2>&1 || { echo "SKIP: no system user $u"; exit 77; }; done
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups env HOME=/ "$@"; }

start_server
start_daemon "" --batch-ms 50

as daemon env -u SIOX_JOB_ID SLURM_JOB_ID=job-of-b "$SIOX_JOB_CLAIM" job-of-b 5 >>"$T/workload.log" 2>&1 \
  || fail "B's workload failed"
as nobody env -u SIOX_JOB_ID SLURM_JOB_ID=job-of-a "$SIOX_JOB_CLAIM" job-of-b 3 >>"$T/workload.log" 2>&1 \
  || fail "A's workload (environment job-of-a) failed"
as nobody env -u SIOX_JOB_ID -u SLURM_JOB_ID "$SIOX_JOB_CLAIM" job-of-b 2 >>"$T/workload.log" 2>&1 \
  || fail "A's workload (no job in its environment) failed"
wait_activities 10 60

got=$(sql "SELECT p.job || ':' || p.uid || ':' || count(*) FROM activities a JOIN processes p USING (proc_id)
            GROUP BY p.job, p.uid ORDER BY 1" | tr '\n' ' ')
want="claimed:job-of-b:$(id -u nobody):2 job-of-a:$(id -u nobody):3 job-of-b:$(id -u daemon):5 "
[ "$got" = "$want" ] || fail "jobs by uid: got '$got', want '$want'"
grep -q "job id only claimed in its HELLO: stored as claimed:job-of-b" "$T/daemon.log" \
  || fail "the daemon did not log the claimed job id"

siox_cli top -n 100 --job job-of-b --json >"$T/top-admin.json" || fail "admin: siox top --job failed"
[ "$(json_get "$T/top-admin.json" 'len(j.get("activities", j) if isinstance(j, dict) else j)')" = 5 ] \
  || fail "admin: job-of-b does not hold exactly B's 5 activities: $(cat "$T/top-admin.json")"
for _ in $(seq 50); do [ "$(sql "SELECT count(*) FROM siox_users WHERE role = 'daemon'")" = 1 ] && break; sleep 0.2; done
as daemon "$SIOX_CLI" --data-dir "$SERVER_DIR" top -n 100 --job job-of-b --json >"$T/top-b.json" || fail "B: siox top failed"
[ "$(json_get "$T/top-b.json" 'len(j.get("activities", j) if isinstance(j, dict) else j)')" = 5 ] \
  || fail "B: job-of-b does not hold exactly B's 5 activities"
log "a claimed job id went to the claimer's own job; the victim's job holds its own activities only"
