#!/usr/bin/env bash
# Two users (issue 9, part 6): the chain workload runs once as `nobody` and
# once as `daemon` (existing system users, no accounts are made). Each one's
# `siox top`, `siox graph` and `siox blame`, run as that user, show only
# their own activities and job, and so does a direct SELECT on activities
# through psql, and `siox web` run by A blames A's call as A's CLI does and
# not B's; root (the cluster's superuser) and www-data (a member of
# --admin-group www-data: role siox_admin) see both. A user with no role in
# the warehouse (games) is told "permission denied", and DIR/conninfo is
# world-readable without a password.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root to run workloads as other users"; exit 77; }
USER_A=nobody USER_B=daemon USER_NONE=games USER_ADMIN=www-data
for u in $USER_A $USER_B $USER_NONE $USER_ADMIN; do
  id -u "$u" >/dev/null 2>&1 || { echo "SKIP: no system user $u"; exit 77; }
done

# as USER CMD...: runs CMD as USER with that user's groups only.
as() {
  local u=$1
  shift
  setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups env HOME=/ "$@"
}

# www-data's primary group is www-data, so it is a member.
start_server --admin-group "$USER_ADMIN"
start_daemon "" --batch-ms 50

perm=$(stat -c %a "$SERVER_DIR/conninfo")
[ "$perm" = 644 ] || fail "DIR/conninfo has mode $perm, want 644"
grep -q password "$SERVER_DIR/conninfo" && fail "DIR/conninfo holds a password"

# Writes 4 (A) and 6 (B): 4 activities a write, 2 per process.
SIOX_JOB_ID=job-of-a as $USER_A "$SIOX_CHAIN" -n 4 -o file-of-a >>"$T/workload.log" 2>&1 || fail "workload of $USER_A"
SIOX_JOB_ID=job-of-b as $USER_B "$SIOX_CHAIN" -n 6 -o file-of-b >>"$T/workload.log" 2>&1 || fail "workload of $USER_B"
wait_activities 40 60
for u in $USER_A $USER_B; do
  for _ in $(seq 50); do
    [ "$(sql "SELECT count(*) FROM siox_users WHERE role = '$u'")" = 1 ] && break
    sleep 0.2
  done
done

# Each user's own view: counts by SQL and through the CLI.
check_user() {
  local u=$1 n=$2 mine=$3 other=$4 uid
  uid=$(id -u "$u")
  local rows
  rows=$(as "$u" psql "$(cat "$SERVER_DIR/conninfo")" -XAtqc \
    "SELECT count(*), count(*) FILTER (WHERE proc_id IN (SELECT proc_id FROM processes WHERE uid = $uid)) FROM activities") \
    || fail "$u: psql SELECT on activities failed"
  [ "$rows" = "$n|$n" ] || fail "$u: SELECT on activities gave '$rows', want $n of their own only"
  as "$u" "$SIOX_CLI" --data-dir "$SERVER_DIR" top -n 100 --json >"$T/top-$u.json" 2>"$T/top-$u.err" || fail "$u: siox top failed: $(cat "$T/top-$u.err")"
  as "$u" "$SIOX_CLI" --data-dir "$SERVER_DIR" top -n 100 >"$T/top-$u.txt" || fail "$u: siox top (text) failed"
  local got
  got=$(json_get "$T/top-$u.json" 'len(j.get("activities", j) if isinstance(j, dict) else j)')
  [ "$got" = "$n" ] || fail "$u: siox top lists $got activities, want $n"
  local aid
  aid=$(top_first_aid "$T/top-$u.json")
  as "$u" "$SIOX_CLI" --data-dir "$SERVER_DIR" graph "$aid" >"$T/graph-$u.txt" || fail "$u: siox graph $aid failed"
  as "$u" "$SIOX_CLI" --data-dir "$SERVER_DIR" blame "$aid" >"$T/blame-$u.txt" || fail "$u: siox blame $aid failed"
  for f in "$T/top-$u.txt" "$T/graph-$u.txt" "$T/blame-$u.txt"; do
    grep -q "$other" "$f" && fail "$u sees $other in $(basename "$f"): $(cat "$f")"
  done
  grep -q "$mine" "$T/graph-$u.txt" || fail "$u's graph does not name their job $mine: $(cat "$T/graph-$u.txt")"
  grep -q "device" "$T/graph-$u.txt" || fail "$u's graph lacks the device layer: $(cat "$T/graph-$u.txt")"
  # The other user's activity is not there for this user at all.
  local theirs
  theirs=$(sql "SELECT min(aid) FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$other'")
  as "$u" "$SIOX_CLI" --data-dir "$SERVER_DIR" graph "$theirs" >/dev/null 2>"$T/theirs-$u.err" \
    && fail "$u can load the causal tree of $other's activity $theirs"
  grep -q "not in the warehouse" "$T/theirs-$u.err" || fail "$u on $other's activity: $(cat "$T/theirs-$u.err")"
  log "$u sees their $n activities and job $mine only (top, graph, blame, psql)"
}
check_user $USER_A 16 job-of-a job-of-b
check_user $USER_B 24 job-of-b job-of-a

# `siox web` run by A answers blame in-process on its own warm connections
# (web/README.md, "Documents in-process"): A's call is blamed as A's `siox blame
# --json` blames it, and B's call does not exist for A's web either.
web_get() { curl -s -o "$2" -w '%{http_code}' "http://127.0.0.1:$WEB_PORT/api/$1"; }
WEB_PORT=$(free_port)
# setpriv itself in the background, not the `as` function: a function's
# subshell pid would be recorded and siox web outlive the test.
setpriv --reuid="$USER_A" --regid="$(id -g "$USER_A")" --clear-groups env HOME=/ \
  "$SIOX_CLI" --data-dir "$SERVER_DIR" web --listen "127.0.0.1:$WEB_PORT" >>"$T/web.log" 2>&1 &
PIDS+=($!)
wait_port "$WEB_PORT" "siox web of $USER_A"
aid_a=$(top_first_aid "$T/top-$USER_A.json")
aid_b=$(sql "SELECT min(aid) FROM activities a JOIN processes p USING (proc_id) WHERE p.job = 'job-of-b'")
for try in 1 2 3 4 5; do # retried: the knowledge base may fold baselines between the two
  code=$(web_get "blame?aid=$aid_a" "$T/web-a.json")
  [ "$code" = 200 ] || fail "$USER_A's siox web: blame of their call $aid_a: HTTP $code $(cat "$T/web-a.json")"
  as $USER_A "$SIOX_CLI" --data-dir "$SERVER_DIR" blame "$aid_a" --json >"$T/cli-a.json" || fail "$USER_A: siox blame $aid_a --json failed"
  python3 -c 'import json,sys; sys.exit(json.dumps(json.load(open(sys.argv[1]))) != json.dumps(json.load(open(sys.argv[2]))))' \
    "$T/web-a.json" "$T/cli-a.json" && break
  [ "$try" = 5 ] && fail "$USER_A's siox web blames $aid_a unlike their siox blame --json: $(cat "$T/web-a.json")"
  sleep 1
done
grep -q job-of-b "$T/web-a.json" && fail "$USER_A's siox web blame of $aid_a names job-of-b"
code=$(web_get "blame?aid=$aid_b" "$T/web-b.json")
[ "$code" = 404 ] || fail "$USER_A's siox web blamed $USER_B's call $aid_b: HTTP $code $(cat "$T/web-b.json")"
grep -q "not in the warehouse" "$T/web-b.json" || fail "$USER_A's siox web on $aid_b: $(cat "$T/web-b.json")"
code=$(web_get "blame?job=job-of-a" "$T/web-job-a.json")
[ "$code" = 200 ] || fail "$USER_A's siox web: blame of job-of-a: HTTP $code $(cat "$T/web-job-a.json")"
[ "$(json_get "$T/web-job-a.json" 'j["calls"]')" -gt 0 ] || fail "$USER_A's siox web blamed no call of job-of-a"
grep -q job-of-b "$T/web-job-a.json" && fail "$USER_A's siox web blame of job-of-a names job-of-b"
code=$(web_get "blame?job=job-of-b" "$T/web-job-b.json")
[ "$code" = 404 ] || fail "$USER_A's siox web blamed $USER_B's job-of-b: HTTP $code $(cat "$T/web-job-b.json")"
log "$USER_A's siox web blames their call and job as their siox blame --json does, and not $USER_B's"

# The knowledge base's per-job rows (siox_job_is_mine): each user reads
# their own job's only. The rows are made here, as the analysis thread
# would, so that the test does not wait for it.
sql "INSERT INTO kb_analysis_runs (job) VALUES ('job-of-a'), ('job-of-b') ON CONFLICT DO NOTHING" >/dev/null
got=$(as $USER_A psql "$(cat "$SERVER_DIR/conninfo")" -XAtqc \
  "SELECT string_agg(job, ',') FROM kb_analysis_runs WHERE job LIKE 'job-of-%'") \
  || fail "$USER_A: reading kb_analysis_runs failed"
[ "$got" = job-of-a ] || fail "$USER_A reads the analysis runs of '$got', want job-of-a only"

# The admin (root: the embedded cluster's superuser) sees both.
siox_cli top -n 100 --json >"$T/top-root.json" || fail "root: siox top failed"
got=$(json_get "$T/top-root.json" 'len(j.get("activities", j) if isinstance(j, dict) else j)')
[ "$got" = 40 ] || fail "root: siox top lists $got activities, want 40"
[ "$(sql "SELECT count(DISTINCT job) FROM processes")" = 2 ] || fail "root does not see both jobs"

# A member of --admin-group (no superuser: row-level security applies to it)
# sees both users' rows too.
as $USER_ADMIN "$SIOX_CLI" --data-dir "$SERVER_DIR" top -n 100 --json >"$T/top-admin.json" \
  || fail "$USER_ADMIN: siox top failed"
got=$(json_get "$T/top-admin.json" 'len(j.get("activities", j) if isinstance(j, dict) else j)')
[ "$got" = 40 ] || fail "$USER_ADMIN (siox_admin): siox top lists $got activities, want 40"
[ "$(as $USER_ADMIN psql "$(cat "$SERVER_DIR/conninfo")" -XAtqc "SELECT count(*) FROM activities")" = 40 ] \
  || fail "$USER_ADMIN (siox_admin): psql does not see all 40 activities"
[ "$(sql "SELECT rolsuper FROM pg_roles WHERE rolname = '$USER_ADMIN'")" = f ] || fail "$USER_ADMIN is a superuser"

# A user the server never stored a process of has no role: permission denied.
as $USER_NONE "$SIOX_CLI" --data-dir "$SERVER_DIR" top >/dev/null 2>"$T/none.err" && fail "$USER_NONE read the warehouse"
grep -q "permission denied" "$T/none.err" || fail "$USER_NONE was not told 'permission denied': $(cat "$T/none.err")"
grep -q "is siox-server running" "$T/none.err" && fail "$USER_NONE was asked whether siox-server runs"
log "two users: each sees their own only, root and the admin group see both, a stranger gets 'permission denied'"
