#!/usr/bin/env bash
# Resent frames are stored once (issue 15: "kill -9 ... every activity
# arrives exactly once"). libsiox-client keeps every activity BATCH frame
# until the daemon's ACK covers it and sends the rest again on its next
# connection. A frame the daemon had journaled when it was killed, before
# its ACK, comes back to the restarted daemon as well as out of the
# journal. When the frame holds a running activity's records and no
# activity record (a text attribute, a remote call, a MAP), nothing on the
# server tells the copy from a repeat: both used to be stored.
#
# The daemon runs with --test-kill-after-frames K (tests only): it kills
# itself right after journaling the read that took its K-th such frame,
# before the ACK: the window, hit every time. It is restarted KILLS times
# (the last time without the option) while resend_producer runs; then every
# row the producer made must be in the warehouse exactly once: activities,
# text attributes, remote calls, mappings, and the job's account exact.
. "$(dirname "$0")/lib.sh"
P=${SIOX_RESEND_PRODUCER:?}
ROUNDS=${SIOX_RESEND_ROUNDS:-12}
STEPS=${SIOX_RESEND_STEPS:-10}
KILLS=${SIOX_RESEND_KILLS:-4}
K=${SIOX_RESEND_K:-9}
JOB=resend-frames

# Waits until the daemon (started by this shell) has killed itself.
wait_daemon_gone() {
  for _ in $(seq 600); do
    st=$(ps -o stat= -p "$DAEMON_PID" 2>/dev/null || true)
    [ -z "$st" ] || [[ "$st" == Z* ]] && { wait "$DAEMON_PID" 2>/dev/null || true; return 0; }
    kill -0 "$PRODUCER" 2>/dev/null || fail "the producer ended before the daemon's kill $1 (the test proves nothing)"
    sleep 0.05
  done
  fail "the daemon did not kill itself (kill $1)"
}

q() { sql "$1"; }
JOINED="activities a JOIN processes p USING (proc_id) WHERE p.job = '$JOB'"

start_server
start_daemon "127.0.0.1:$SERVER_PORT" --batch-ms 50 --test-kill-after-frames "$K"
SIOX_JOB_ID=$JOB "$P" "$ROUNDS" "$STEPS" >"$T/producer.out" 2>>"$T/producer.err" &
PRODUCER=$!
PIDS+=("$PRODUCER")
for i in $(seq "$KILLS"); do
  wait_daemon_gone "$i"
  log "kill $i: the daemon died between journal and ACK; restarting it"
  if [ "$i" -lt "$KILLS" ]; then
    start_daemon "127.0.0.1:$SERVER_PORT" --batch-ms 50 --test-kill-after-frames "$K"
  else
    start_daemon "127.0.0.1:$SERVER_PORT" --batch-ms 50
  fi
done
wait "$PRODUCER" || fail "the producer failed"
read -r _ acts _ text _ sends _ maps _ made _ dropped _ dexit <"$T/producer.out" || fail "no producer output"
log "made: activities $acts text $text sends $sends maps $maps (client: made $made dropped $dropped dropped_exit $dexit)"
[ "$dropped" -eq 0 ] && [ "$dexit" -eq 0 ] || fail "the client dropped records: the comparison below would not be exact"

# Everything the producer made has arrived once the activities have.
for _ in $(seq 300); do
  n=$(q "SELECT count(*) FROM $JOINED")
  [ "$n" -ge "$acts" ] && break
  sleep 0.2
done
sleep 2 # a last batch of rows without activities
got_acts=$(q "SELECT count(*) FROM $JOINED")
got_text=$(q "SELECT count(*) FROM activity_text_attrs x, $JOINED AND x.aid = a.aid")
got_text_d=$(q "SELECT count(DISTINCT x.value) FROM activity_text_attrs x, $JOINED AND x.aid = a.aid")
got_sends=$(q "SELECT count(*) FROM remote_calls r, $JOINED AND r.aid = a.aid")
got_sends_d=$(q "SELECT count(DISTINCT (r.aid, r.offset_b)) FROM remote_calls r, $JOINED AND r.aid = a.aid")
got_maps=$(q "SELECT count(*) FROM descriptor_mappings m JOIN processes p USING (proc_id) WHERE p.job = '$JOB'")
got_maps_d=$(q "SELECT count(DISTINCT m.from_desc) FROM descriptor_mappings m JOIN processes p USING (proc_id) WHERE p.job = '$JOB'")
log "stored: activities $got_acts text $got_text ($got_text_d distinct) remote calls $got_sends ($got_sends_d distinct) mappings $got_maps ($got_maps_d distinct)"
grep -h "resent frame" "$T/daemon.log" | tail -n 5 || true
bad=""
[ "$got_acts" -eq "$acts" ] || bad="$bad activities $got_acts/$acts"
[ "$got_text" -eq "$text" ] && [ "$got_text_d" -eq "$text" ] || bad="$bad text $got_text/$text"
[ "$got_sends" -eq "$sends" ] && [ "$got_sends_d" -eq "$sends" ] || bad="$bad remote-calls $got_sends/$sends"
[ "$got_maps" -eq "$maps" ] && [ "$got_maps_d" -eq "$maps" ] || bad="$bad mappings $got_maps/$maps"
[ -z "$bad" ] || fail "stored/made:$bad (each row must be stored exactly once)"

# The job's account: made = stored, nothing unaccounted.
siox_cli status --job "$JOB" --json >"$T/status.json" 2>/dev/null || true
acc=$(json_get "$T/status.json" '"%d %d %d %d" % (j["job"]["made"], j["job"]["stored"], j["job"]["dropped_total"], j["job"]["unaccounted"])')
log "account (made stored dropped unaccounted): $acc"
set -- $acc
[ "$1" -eq "$acts" ] && [ "$2" -eq "$acts" ] && [ "$4" -eq 0 ] || fail "account '$acc', want $acts made and stored"
log "PASS: $KILLS kills between journal and ACK, every row stored exactly once"
