#!/usr/bin/env bash
# `siox web` on a warehouse filled by real runs: a 4-rank MPI-IO job
# (mpi_io_workload, MPI-IO over POSIX) and the instrumented chain with one
# slowed device (a culprit for blame). Asserts:
#  - API: each document equals the CLI's --json (jobs, summary, blame of a
#    call and of a job, graph, top, capacity);
#    an unknown AID or job is 404 with a message, a malformed query 400;
#  - pages, driven in headless Chromium: the jobs page lists the job; the job
#    page's totals are `siox summary --json`'s and its heatmap has one row
#    per rank; the call page highlights blame's culprit (`siox blame --json`);
#  - a job listed and unchanged since gets its page stored before any view.
# Screenshots of every page go to $SIOX_ARTIFACTS (default $T/artifacts).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/web_lib.sh"
mpi_env
export SIOX_TEST_HINTS="romio_cb_write=enable;romio_cb_read=enable;cb_nodes=1"
command -v chromium >/dev/null || fail "chromium is not installed (scripts/install-deps.sh)"
ART=${SIOX_ARTIFACTS:-$T/artifacts}
mkdir -p "$ART"
RANKS=4 JOB=web-mpi-$$ CHAIN=web-chain-$$
OUT=/dev/shm/siox-web.$$
trap 'rm -f "$OUT"; cleanup' EXIT

start_server
start_daemon "" --batch-ms 50
mpirun --oversubscribe -np $RANKS -x ASAN_OPTIONS -x LD_PRELOAD="$ASAN_RT$SIOX_MPI_LIB:$SIOX_POSIX_LIB" \
  -x SIOX_SOCKET="$DAEMON_SOCK" -x SIOX_JOB_ID=$JOB "$SIOX_MPI_WORKLOAD" "$OUT" "$T/manifest" \
  >>"$T/workload.log" 2>&1 || fail "mpi_io_workload failed"
SIOX_JOB_ID=$CHAIN "$SIOX_CHAIN" --writes 12 --slow-device 1 --slow-us 30000 --fast-us 2000 --object "$CHAIN" \
  >>"$T/chain.log" 2>&1 || fail "chain program failed"
# The chain's 48 activities (app, fs-client; server, device: 12 each, in
# two processes) and its 12 implicit links: blame's culprit is the device,
# below the link. (Waiting for the client's 24 alone let a loaded ASan run
# blame a call whose server side had not arrived: no peers.)
for _ in $(seq 600); do
  n=$(sql "SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) WHERE t.name = 'MPI_Finalize'")
  c=$(sql "SELECT count(*) FROM activities a JOIN processes p USING (proc_id) WHERE p.job = '$CHAIN'")
  l=$(sql "SELECT count(*) FROM causal_links l JOIN activities a ON a.aid = l.child_aid
           JOIN processes p USING (proc_id) WHERE p.job = '$CHAIN'")
  [ "$n" -ge $RANKS ] && [ "$c" -ge 48 ] && [ "$l" -ge 12 ] && break
  sleep 0.2
done
[ "$c" -ge 48 ] && [ "$l" -ge 12 ] || fail "the chain's activities ($c of 48) or links ($l of 12) did not arrive"
sleep 2 # the last POSIX calls travel in the same flush

start_web
AID=$(root_of_slowest "$CHAIN" device write app)
[ -n "$AID" ] || fail "no app write of $CHAIN reached a device"

# ---- ahead of the first view -------------------------------------------------
# A listing (as the jobs page makes) stores the MPI job's sums; the job has
# ended, and nothing asks for its page: siox web computes and stores it on
# its own (summary, heatmap of the page's 80 bins) under the listing's stamp.
siox_cli jobs --json >/dev/null || fail "siox jobs failed"
stored() { sql "SELECT count(*) FROM job_aggregates s JOIN job_aggregates g ON g.job = s.job AND g.kind = 'jobs'
                 AND (g.acts, g.max_aid) = (s.acts, s.max_aid)
                 WHERE s.job = '$JOB' AND (s.kind = 'summary' OR (s.kind = 'heatmap' AND s.bins = 80))"; }
for _ in $(seq 240); do [ "$(stored)" = 2 ] && break; sleep 0.5; done
[ "$(stored)" = 2 ] || fail "job $JOB's page was not stored ahead of its first view: $(tail -n 3 "$T/web.log")"
grep -q "job $JOB's page computed ahead of its first view" "$T/web.log" || fail "siox web did not say it computed $JOB's page"
log "a listed job's page stored before its first view"

# ---- API: the CLI's documents, and the errors --------------------------------
get() { curl -s -o "$2" -w '%{http_code}' "$URL/api/$1"; }
same() { # NAME API-PATH CLI-ARGS...: equal documents (retried: the knowledge base may analyse meanwhile)
  local name=$1 path=$2
  shift 2
  for _ in 1 2 3 4 5; do
    siox_cli "$@" >"$T/cli.$name.json" || fail "siox $* failed"
    [ "$(get "$path" "$T/api.$name.json")" = 200 ] || fail "GET /api/$path: $(cat "$T/api.$name.json")"
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
      "$T/cli.$name.json" "$T/api.$name.json" && return 0
    sleep 1
  done
  fail "/api/$path differs from siox $*"
}
same summary "summary?job=$JOB" summary --job "$JOB" --json
same jobs jobs jobs --json
same graph "graph?aid=$AID" graph "$AID" --format json
same blame "blame?aid=$AID" blame "$AID" --json
same blamejob "blame?job=$CHAIN" blame --job "$CHAIN" --json
same top "top?job=$JOB&n=7" top --job "$JOB" --roots -n 7 --json
# capacity over [since, now): the window's ends are each side's own now, the
# rest equal (what the slowed device did is long inside the window) but for
# the rates' last digits: the CLI reads the clock twice (--until's default,
# then --since's age), so its window is some microseconds short of a day
siox_cli capacity --update >/dev/null || fail "siox capacity --update failed"
ok=0
for _ in 1 2 3 4 5; do
  siox_cli capacity --since 1d --component device --json >"$T/cli.capacity.json" || fail "siox capacity failed"
  [ "$(get "component?component=device&since=1d" "$T/api.capacity.json")" = 200 ] ||
    fail "GET /api/component: $(cat "$T/api.capacity.json")"
  python3 -c 'import json,math,sys
def same(x, y):
    if isinstance(x, float) or isinstance(y, float): return math.isclose(x, y, rel_tol=1e-9)
    if isinstance(x, dict): return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, list): return len(x) == len(y) and all(map(same, x, y))
    return x == y
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for d in (a, b): d.pop("since_ns"), d.pop("until_ns")
sys.exit(not same(a, b) or not a["components"])' "$T/cli.capacity.json" "$T/api.capacity.json" && { ok=1; break; }
  sleep 1
done
[ $ok = 1 ] || fail "/api/component differs from siox capacity --json (or lists no device)"
# the job page's document: the summary and the heatmap of one load, equal to
# the two documents the API serves apart
[ "$(get "job?job=$JOB&bins=80" "$T/api.job.json")" = 200 ] || fail "GET /api/job: $(cat "$T/api.job.json")"
[ "$(get "heatmap?job=$JOB&bins=80" "$T/api.heatmap.json")" = 200 ] || fail "GET /api/heatmap: $(cat "$T/api.heatmap.json")"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); sys.exit(p["summary"] != json.load(open(sys.argv[2])) or p["heatmap"] != json.load(open(sys.argv[3])))' \
  "$T/api.job.json" "$T/cli.summary.json" "$T/api.heatmap.json" || fail "/api/job differs from /api/summary and /api/heatmap"
expect() { # STATUS PATH [TEXT]: the status, and a JSON error naming TEXT
  local code
  code=$(get "$2" "$T/err.json")
  [ "$code" = "$1" ] || fail "GET /api/$2: HTTP $code, want $1: $(cat "$T/err.json")"
  python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["error"]; sys.exit(sys.argv[2] not in e)' \
    "$T/err.json" "${3:-}" || fail "GET /api/$2: error $(cat "$T/err.json") does not say '${3:-}'"
}
expect 404 "graph?aid=999999999" "999999999 is not in the warehouse"
expect 404 "blame?aid=999999999" "999999999"
expect 404 "summary?job=no-such-job" "no-such-job"
expect 400 "graph?aid=abc" "abc"
expect 400 "blame?aid=12x" "12x"
expect 400 "summary" "job"
expect 400 "heatmap?job=$JOB&bins=0" "bins"
expect 400 "job?job=$JOB&bins=5000" "bins"
expect 404 "job?job=no-such-job" "no-such-job"
expect 400 "jobs?sort=colour" "colour"
expect 400 "top?job=$JOB&n=0" "n must be"
expect 400 "component?component=device&since=yesterday" "yesterday"
expect 400 "component?component=device&since=now" "window is empty"
expect 404 "nothing" "no such API"
log "API documents equal the CLI's; errors 400/404"

# ---- pages in headless Chromium ----------------------------------------------
web_page jobs jobs 1000
web_page job "job/$JOB" 10000
web_page call "call/$AID" 10000
siox_cli blame "$AID" --json >"$T/blame.json"
[ "$(json_get "$T/blame.json" 'j["verdict"]')" = culprit ] || { siox_cli blame "$AID" >&2; siox_cli graph "$AID" >&2; fail "siox blame $AID names no culprit (the chain's slowed device)"; }
siox_cli summary --job "$JOB" --json >"$T/summary.json"
python3 "$(dirname "$0")/web_pages.py" "$T" "$JOB" "$RANKS" || fail "the pages do not show what the CLI says"
ls "$ART"/jobs.png "$ART"/job.png "$ART"/call.png >/dev/null || fail "screenshots missing"
log "web test passed (screenshots in $ART)"
