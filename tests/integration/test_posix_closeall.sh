#!/usr/bin/env bash
# A launcher's child that closes every descriptor before exec (OpenMPI's
# orterun does, for each rank), under LD_PRELOAD=libsiox-posix.so against
# the real siox-daemon and siox-server (issue 10: `bench/run blame` round (b)
# lost its MPI_Finalize records behind thousands of resent ones).
# Before the fix the child's closes took libsiox-client's socket and
# eventfd, the new socket got the eventfd's number, the flusher read ACK
# bytes as wake-ups, broke the connection and resent everything it held, a
# few hundred times before exec. Asserts: every activity the tree made is
# stored exactly once, the daemon received each once (no resend loop),
# counted no bad frame, and the file the child wrote after its closes holds
# only its own bytes.
. "$(dirname "$0")/lib.sh"

posix_preload # sets PRELOAD

start_server
start_daemon "" --batch-ms 50
mkdir -p "$T/w"
# 1024 descriptors: the child closes 3..1023, the library's own among them.
(ulimit -n 1024 && SIOX_JOB_ID=closeall LD_PRELOAD=$PRELOAD "$SIOX_POSIX_CLOSEALL" "$T/w") >"$T/out" 2>>"$T/workload.log" ||
  fail "workload failed: $(cat "$T/out" "$T/workload.log")"
want=$(awk '/^calls / {print $2}' "$T/out")
[ -n "$want" ] && [ "$want" -gt 1000 ] || fail "workload printed no call count: $(cat "$T/out")"
log "the workload made $want calls"

q="SELECT count(*) FROM activities a JOIN processes p USING (proc_id) WHERE p.job = 'closeall'"
n=0
for _ in $(seq 300); do
  n=$(sql "$q")
  [ "$n" -ge "$want" ] && break
  sleep 0.2
done
[ "$n" -eq "$want" ] || fail "the warehouse holds $n of the job's activities, the workload made $want"
sleep 2 # resends, if any, arrive meanwhile

siox_cli status --socket "$DAEMON_SOCK" --json >"$T/status.json" 2>/dev/null || true
got=$(json_get "$T/status.json" 'j["daemon"]["counters"]["activities_received"]')
bad=$(json_get "$T/status.json" 'j["daemon"]["counters"]["bad_frames"]')
log "daemon: activities_received $got, bad_frames $bad"
[ "$got" -eq "$want" ] || fail "the daemon received $got activities for $want made: resent $((got - want)) times over"
[ "$bad" -eq 0 ] || fail "the daemon counted $bad bad frames: $(grep -i 'bad\|closing' "$T/daemon.log")"
dup=$(sql "SELECT count(*) - count(DISTINCT (aid, attr_id)) FROM activity_text_attrs")
[ "$dup" -eq 0 ] || fail "$dup text attributes stored twice"
[ "$(sql "$q")" -eq "$want" ] || fail "the job's activities changed to $(sql "$q") after the wait"

size=$(stat -c %s "$T/w/child2")
zs=$(tr -cd z <"$T/w/child2" | wc -c)
[ "$size" -eq 4096 ] && [ "$zs" -eq 4096 ] || fail "child2 holds $size bytes, $zs of them the child's: the library wrote into it"
log "ok: $want activities stored once, received once, no bad frame, the child's file intact"
