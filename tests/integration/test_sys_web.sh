#!/usr/bin/env bash
# `siox web` on the GlusterFS testbed (issue 14 §3): a 4-brick volume with
# one brick slowed and the 4-rank HDF5 / MPI-IO / POSIX job under `siox run`.
# Asserts what a user relies on, in headless Chromium:
#  - live: a browser left on the jobs page shows a job that starts after the
#    page loaded while that job still runs (the page's refresh, no reload);
#  - the job page's totals are `siox summary --json`'s, one heatmap row per
#    rank; the call page of the job's slowest application write highlights
#    blame's culprit, the slowed brick, and exactly blame's path
#    (web_pages.py);
#  - the component page of the slowed brick draws its latency over time.
# Screenshots go to $SIOX_ARTIFACTS/sys-web (default $T/artifacts).
# Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
. "$(dirname "$0")/web_lib.sh"
command -v chromium >/dev/null || fail "chromium is not installed (scripts/install-deps.sh)"
ART=${SIOX_ARTIFACTS:-$T/artifacts}/sys-web
mkdir -p "$ART"
sys_start
JOB="sys-web-$$" LIVE="sys-web-live-$$" SLOW=$((RANDOM % BRICKS + 1))
tb_start "$SLOW" "$JOB-fs"
SLOWB="brick$SLOW:$TB/brick$SLOW"

log "the job, brick $SLOW slowed"
traced_job "$JOB" web
start_web

log "live: a job that starts after the jobs page loaded appears while it runs"
chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$T/chromium-live" --enable-logging=stderr \
  --v=0 "$URL/#/jobs" 2>"$T/live.log" >/dev/null &
CHROMIUM=$!
PIDS+=($CHROMIUM)
for _ in $(seq 600); do grep -q "siox-ready jobs" "$T/live.log" && break; sleep 0.1; done
grep -q "siox-ready jobs" "$T/live.log" || fail "the jobs page did not load in the running browser"
LD_PRELOAD=$ASAN_RT SIOX_JOB_ID=$LIVE "$SIOX_CLI" run --layers posix --socket "$SIOX_SOCKET" -- \
  bash -c 'echo start >"$1"; sleep 20; echo end >>"$1"' live "$MNT/live-$$" >"$T/live-job.out" 2>&1 &
LIVEJOB=$!
PIDS+=($LIVEJOB)
while kill -0 $LIVEJOB 2>/dev/null && ! grep -q "siox-new-job $LIVE\"" "$T/live.log"; do sleep 0.2; done
kill -0 $LIVEJOB 2>/dev/null || fail "job $LIVE ended before the jobs page showed it: $(grep -c 'siox-ready jobs' "$T/live.log") refreshes"
log "  job $LIVE on the page while it runs"
wait $LIVEJOB || { cat "$T/live-job.out" >&2; fail "the live job failed"; }
stop_pid $CHROMIUM

log "pages"
# The call: the job's slowest application-level pwrite (on the slowed brick;
# the blame of the trickier H5Dwrite is integration_sys_blame's).
AID=$(slowest_app_write "$JOB")
[ -n "$AID" ] || fail "no application-level POSIX write in the job"
siox_cli blame "$AID" --json >"$T/blame.json" || fail "siox blame $AID failed"
culprit=$(json_get "$T/blame.json" '(j.get("culprit") or {}).get("hwid", "-")')
[ "$culprit" = "$SLOWB" ] || { siox_cli blame "$AID" >&2; fail "blame of pwrite $AID named '$culprit', not $SLOWB"; }
siox_cli summary --job "$JOB" --json >"$T/summary.json" || fail "siox summary failed"
web_page jobs jobs 1000
web_page job "job/$JOB" 10000
web_page call "call/$AID" 10000
web_page component "component/brick$SLOW" 10000
python3 "$(dirname "$0")/web_pages.py" "$T" "$JOB" 4 component || fail "the pages do not show what the CLI says"
grep -q "data-label=\"$SLOWB" "$T/component.html" || fail "the component page has no latency chart of $SLOWB"
ls "$ART"/jobs.png "$ART"/job.png "$ART"/call.png "$ART"/component.png >/dev/null || fail "screenshots missing"
log "sys web test passed (screenshots in $ART)"
