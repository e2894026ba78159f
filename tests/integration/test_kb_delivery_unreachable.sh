#!/usr/bin/env bash
# Hint delivery never holds up MPI_File_open (issue 4 item 4, test c). With
# SIOX_HINTS=1, SIOX_HINTS_TIMEOUT_MS=300 and a hint set waiting in the
# knowledge base, 4 ranks of siox-strided-writes open a file while
#   1. the daemon is stopped (SIGSTOP): the open succeeds, no SIOX key is in
#      the MPI_Info, and (after SIGCONT) every open records "timeout";
#   2. no daemon listens at the socket: the open succeeds without hints;
#   3. the daemon runs but siox-server is down: the daemon answers
#      "server down" at once; the records reach the warehouse after the
#      server is back (the daemon spooled them).
# Each time the open's wall time (rank 0, around MPI_File_open) must stay
# below timeout + 5 s: a bound that only catches a hang, not a speed test.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kb_delivery_lib.sh"
D=/dev/shm/siox-kbu.$$
mkdir -p "$D"
trap 'kill -CONT "$DAEMON_PID" 2>/dev/null || true; rm -rf "$D"; cleanup' EXIT
WL=(--blocks 8 --repeat 1)
export SIOX_HINTS=1 SIOX_HINTS_TIMEOUT_MS=300
BOUND=5.3

start_server
start_daemon "" --batch-ms 50 --hints-ttl 0
pattern=$(kb_pattern "$D/out.1.dat")
set_id=$(insert_hint_set "$SIOX_STRIDED" "any" "$pattern" '{"romio_ds_write": "disable"}')
[ -n "$set_id" ] || fail "could not insert the hint set"
wait_uplink 1

# open_ok OUT: the open took less than BOUND s and got no SIOX hint.
open_ok() {
  local t
  t=$(awk '$1 == "open_time_s" {print $2}' "$1")
  [ -n "$t" ] || fail "no open_time_s in $1"
  python3 -c "import sys; sys.exit(0 if float('$t') < $BOUND else 1)" || fail "open took $t s (bound $BOUND s)"
  [ -z "$(info_of "$1" romio_ds_write)" ] || fail "hints were applied although the query could not be answered"
  log "open took $t s"
}

log "control: the daemon answers with set $set_id"
JOB=control strided "$T/control.out" "$D/out.1.dat" "${WL[@]}"
[ "$(info_of "$T/control.out" romio_ds_write)" = disable ] || fail "control run got no hints"

log "1. daemon stopped"
kill -STOP "$DAEMON_PID"
JOB=stopped strided "$T/stopped.out" "$D/out.2.dat" "${WL[@]}"
kill -CONT "$DAEMON_PID"
open_ok "$T/stopped.out"
wait_opens stopped
[ "$(open_attr stopped mpi/hints_status | sort -u)" = timeout ] ||
  fail "stopped daemon: opens recorded '$(open_attr stopped mpi/hints_status | tr '\n' ' ')', want timeout"
[ "$(open_attr stopped mpi/hint_set | sort -u)" = "<unset>" ] || fail "stopped daemon: a hint_set was recorded"

log "2. no daemon at the socket"
(DAEMON_SOCK="$T/nobody.sock" JOB=nodaemon strided "$T/nodaemon.out" "$D/out.3.dat" "${WL[@]}")
open_ok "$T/nodaemon.out"

log "3. server down"
stop_pid "$SERVER_PID"
stop_postmaster "$SERVER_DIR"
wait_uplink 0
JOB=serverdown strided "$T/serverdown.out" "$D/out.4.dat" "${WL[@]}"
open_ok "$T/serverdown.out"
start_server
wait_opens serverdown
[ "$(open_attr serverdown mpi/hints_status | sort -u)" = server-down ] ||
  fail "server down: opens recorded '$(open_attr serverdown mpi/hints_status | tr '\n' ' ')', want server-down"
log "ok"
