#!/usr/bin/env bash
# A slow device that two jobs use one after the other is a fault, not a
# lone outlier (warehouse/src/blame_wait.c, peer_ops_ratio). Two runs of the
# instrumented chain, jobs A and B, 6 writes each over two devices, dev1
# slowed to 40 ms against dev0's 2 ms, B right after A. Blame of B's slowest
# write served by dev1: its peers (dev0) judge the call slow; the device's
# other writes within +-2 s (A's and B's, 5 of them) are all as slow, so the
# class is fault and dev1 the culprit. B's own window holds only 2 other
# dev1 writes, too few to judge by, and the kind's model, fitted on dev0 and
# dev1 alone, sits between them: judged by it, the slow writes looked
# normal and blame called the device's state a transient.
. "$(dirname "$0")/lib.sh"
trap cleanup EXIT
start_server
start_daemon "" --batch-ms 50
for job in A B; do
  SIOX_JOB_ID=shared-$job-$$ "$SIOX_CHAIN" --writes 6 --slow-device 1 --slow-us 40000 --fast-us 2000 \
    --object "chain-$job-$$" >>"$T/chain.log" 2>&1 || fail "chain $job failed"
done
wait_activities 48 60
aid=$(root_of_slowest "shared-B-$$" device write app)
[ -n "$aid" ] || fail "no app write of job B reached dev1"
siox_cli blame "$aid" --json >"$T/blame.json" || fail "siox blame $aid failed"
got=$(json_get "$T/blame.json" 'j["class"] + " " + (j.get("culprit") or {}).get("hwid", "none")')
[ "$got" = "fault dev1" ] || { siox_cli blame "$aid" >&2; fail "blame of B's write $aid: '$got', want 'fault dev1'"; }
log "a device slow for two jobs is a fault: $(json_get "$T/blame.json" 'j["explanation"].splitlines()[0]')"
