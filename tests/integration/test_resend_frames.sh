#!/usr/bin/env bash
# Resent frames are stored once (issue 15: "kill -9 ... every activity
# arrives exactly once"). libsiox-client keeps every activity BATCH frame
# until the daemon's ACK covers it and sends the rest again on its next
# connection (or spills them to a loss file at exit). A frame the daemon
# had taken when it was killed, before its ACK, so reaches the next daemon
# twice. When the frame holds a running activity's records and no activity
# record (a text attribute, a remote call, a MAP), nothing on the server
# tells the copy from a repeat: both were stored (on main: 4 kills, 124 of
# 120 rows each). The daemon drops the copy by the frame's seq.
#
# The daemon runs with --test-kill-after-frames K (tests only): it kills
# itself right after journaling the read that took its K-th such frame,
# before the ACK (the window, hit every time). Parts:
#  1. killed at the ACK, restarted KILLS times while resend_producer runs:
#     the frame is in the journal of the open batch;
#  2. --test-kill-after-seal: ACKs withheld, killed once the frame's batch
#     is spooled and its journal removed (the seqs survive in the open
#     batch's journal, which carries the whole table);
#  3. killed at the ACK and restarted only after the producer exited: the
#     frame comes back in the producer's loss file.
# After each part every row the producer made must be in the warehouse
# exactly once (activities, text attributes, remote calls, mappings) and
# the job's account exact.
. "$(dirname "$0")/lib.sh"
P=${SIOX_RESEND_PRODUCER:?}
ROUNDS=${SIOX_RESEND_ROUNDS:-12}
STEPS=${SIOX_RESEND_STEPS:-10}
KILLS=${SIOX_RESEND_KILLS:-4}
K=${SIOX_RESEND_K:-9}
PARTS=${SIOX_RESEND_PARTS:-1 2 3}
part() { [[ " $PARTS " == *" $1 "* ]]; }

# Waits until the daemon (started by this shell) has killed itself.
wait_daemon_gone() {
  local st
  for _ in $(seq 600); do
    st=$(ps -o stat= -p "$DAEMON_PID" 2>/dev/null || true)
    if [ -z "$st" ] || [[ "$st" == Z* ]]; then
      wait "$DAEMON_PID" 2>/dev/null || true
      return 0
    fi
    kill -0 "$PRODUCER" 2>/dev/null || fail "the producer ended before the daemon's kill $1 (the test proves nothing)"
    sleep 0.05
  done
  fail "the daemon did not kill itself (kill $1)"
}

daemon() { start_daemon "127.0.0.1:$SERVER_PORT" --batch-ms 50 "$@"; }

# produce JOB ROUNDS [FLUSH_MS]: the producer in the background.
produce() {
  SIOX_JOB_ID=$1 "$P" "$2" "$STEPS" ${3:+"$3"} >"$T/$1.out" 2>>"$T/$1.err" &
  PRODUCER=$!
  PIDS+=("$PRODUCER")
}

# check JOB: every row JOB's producer made is stored exactly once.
check() {
  local job=$1 acts text sends maps made dropped dexit n
  wait "$PRODUCER" || fail "$job: the producer failed"
  read -r _ acts _ text _ sends _ maps _ made _ dropped _ dexit <"$T/$job.out" || fail "$job: no producer output"
  log "$job made: activities $acts text $text sends $sends maps $maps (client: made $made dropped $dropped dropped_exit $dexit)"
  [ "$dropped" -eq 0 ] && [ "$dexit" -eq 0 ] || fail "$job: the client dropped records: the comparison would not be exact"
  local in="activities a JOIN processes p USING (proc_id) WHERE p.job = '$job'"
  for _ in $(seq 300); do
    n=$(sql "SELECT count(*) FROM $in")
    [ "$n" -ge "$acts" ] && break
    sleep 0.2
  done
  sleep 2 # a last batch of rows without activities
  local ga gt gtd gs gsd gm gmd bad=""
  ga=$(sql "SELECT count(*) FROM $in")
  gt=$(sql "SELECT count(*) FROM activity_text_attrs x, $in AND x.aid = a.aid")
  gtd=$(sql "SELECT count(DISTINCT x.value) FROM activity_text_attrs x, $in AND x.aid = a.aid")
  gs=$(sql "SELECT count(*) FROM remote_calls r, $in AND r.aid = a.aid")
  gsd=$(sql "SELECT count(DISTINCT (r.aid, r.offset_b)) FROM remote_calls r, $in AND r.aid = a.aid")
  gm=$(sql "SELECT count(*) FROM descriptor_mappings m JOIN processes p USING (proc_id) WHERE p.job = '$job'")
  gmd=$(sql "SELECT count(DISTINCT m.from_desc) FROM descriptor_mappings m JOIN processes p USING (proc_id) WHERE p.job = '$job'")
  log "$job stored: activities $ga text $gt ($gtd distinct) remote calls $gs ($gsd distinct) mappings $gm ($gmd distinct)"
  [ "$ga" -eq "$acts" ] || bad="$bad activities $ga/$acts"
  [ "$gt" -eq "$text" ] && [ "$gtd" -eq "$text" ] || bad="$bad text $gt/$text"
  [ "$gs" -eq "$sends" ] && [ "$gsd" -eq "$sends" ] || bad="$bad remote-calls $gs/$sends"
  [ "$gm" -eq "$maps" ] && [ "$gmd" -eq "$maps" ] || bad="$bad mappings $gm/$maps"
  [ -z "$bad" ] || fail "$job stored/made:$bad (each row must be stored exactly once)"
  siox_cli status --job "$job" --json >"$T/status.json" 2>/dev/null || true
  local acc
  acc=$(json_get "$T/status.json" '"%d %d %d %d" % (j["job"]["made"], j["job"]["stored"], j["job"]["dropped_total"], j["job"]["unaccounted"])')
  log "$job account (made stored dropped unaccounted): $acc"
  set -- $acc
  [ "$1" -eq "$acts" ] && [ "$2" -eq "$acts" ] && [ "$4" -eq 0 ] || fail "$job: account '$acc', want $acts made and stored"
}

# The daemon's count of copies dropped (a part that dropped none proves nothing).
resent_dropped() {
  siox_cli status --socket "$DAEMON_SOCK" --json >"$T/d.json" 2>/dev/null || true
  json_get "$T/d.json" 'j["daemon"]["counters"].get("frames_resent_dropped", 0)'
}

start_server

if part 1; then
  log "1: killed between journal and ACK, $KILLS times"
  daemon --test-kill-after-frames "$K"
  produce resend-ack "$ROUNDS"
  for i in $(seq "$KILLS"); do
    wait_daemon_gone "$i"
    log "kill $i; restarting the daemon"
    if [ "$i" -lt "$KILLS" ]; then daemon --test-kill-after-frames "$K"; else daemon; fi
  done
  check resend-ack
  log "copies dropped by the last daemon: $(resent_dropped)"
  stop_pid "$DAEMON_PID"
fi

if part 2; then
  log "2: killed once the frame's batch is spooled, its ACK withheld"
  daemon --test-kill-after-frames "$K" --test-kill-after-seal
  produce resend-seal 4
  for i in 1 2; do
    wait_daemon_gone "$i"
    log "kill $i (after the seal); restarting the daemon"
    if [ "$i" -lt 2 ]; then daemon --test-kill-after-frames "$K" --test-kill-after-seal; else daemon; fi
  done
  check resend-seal
  d=$(resent_dropped)
  log "copies dropped by the last daemon: $d"
  [ "$d" -ge 1 ] || fail "the last daemon dropped no copy: the part proves nothing"
  stop_pid "$DAEMON_PID"
fi

if part 3; then
  log "3: killed between journal and ACK; the producer exits meanwhile (loss file)"
  daemon --test-kill-after-frames "$K"
  produce resend-lossfile 2 100
  wait_daemon_gone 1
  for _ in $(seq 600); do
    st=$(ps -o stat= -p "$PRODUCER" 2>/dev/null || true)
    [ -z "$st" ] || [[ "$st" == Z* ]] && break
    sleep 0.1
  done
  ls "$DAEMON_SOCK.lost/"*.loss >/dev/null 2>&1 || fail "the producer left no loss file"
  daemon
  for _ in $(seq 100); do ls "$DAEMON_SOCK.lost/"*.loss >/dev/null 2>&1 || break; sleep 0.1; done
  d=$(resent_dropped)
  log "copies dropped by the restarted daemon: $d"
  [ "$d" -ge 1 ] || fail "the restarted daemon dropped no copy from the loss file: the part proves nothing"
  check resend-lossfile
fi
log "PASS"
