#!/usr/bin/env bash
# Blame's accuracy on the GlusterFS testbed (issue 10): ROUNDS randomized
# rounds (default 10; $1 or $BLAME_ROUNDS) of the scenarios in
# tests/integration/blame_scenarios.sh, each round with a fresh testbed, a
# random slowed brick and random file placement; (h) on a testbed without a
# slowed brick. Prints per scenario:
#   blame_correct_percent_<s>     the expected answer
#   blame_wrong_names_<s>         a healthy component named (count)
#   blame_no_verdict_percent_<s>  no verdict
# (g) on a testbed whose slowed brick delays LOOKUP, CREATE and OPEN instead.
# $BLAME_SCENARIOS (e.g. "c g") runs only the scenarios it lists (default: all).
# usage: bench_blame.sh BUILD_DIR [ROUNDS]   (needs root, /dev/fuse, glusterfsd)
B=$(cd "$1" && pwd)
ROUNDS=${2:-${BLAME_ROUNDS:-10}}
top=$(cd "$(dirname "$0")/.." && pwd)
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
export SIOX_WORKLOAD=$B/examples/siox-io-workload SIOX_STRIDED=$B/examples/siox-strided-writes
export SIOX_HDF5_WRITER=$B/tests/hdf5_parallel_write
export SIOX_TESTBED=$top/testbed/siox-testbed SIOX_XLATOR_DIR=$B/instrumentation/glusterfs/xlator
if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/fuse ] || ! command -v glusterfsd >/dev/null; then
  echo "bench_blame: skipped (needs root, /dev/fuse and glusterfsd)" >&2
  exit 0
fi
. "$top/tests/integration/lib.sh"
. "$top/tests/integration/sys_lib.sh"
. "$top/tests/integration/blame_scenarios.sh"
trap 'tb_stop; cleanup' EXIT
start_server
start_daemon "" --batch-ms 50
declare -A ok wrong none
SCEN=${BLAME_SCENARIOS:-a b c d f e h g}
want() { [[ " $SCEN " == *" $1 "* ]]; }
for s in $SCEN; do ok[$s]=0 wrong[$s]=0 none[$s]=0; done
tally() {
  echo "# round $2 ($1): $OUTCOME: $WHY" >&2
  case $OUTCOME in
  correct) ok[$1]=$((ok[$1] + 1)) ;;
  wrong) wrong[$1]=$((wrong[$1] + 1)) ;;
  no-verdict) none[$1]=$((none[$1] + 1)) ;;
  esac
}
for r in $(seq "$ROUNDS"); do
  R="b$$r$r"
  if want a || want b || want c || want d || want f || want e; then
    round_start "$R" $((RANDOM % BRICKS + 1))
    for s in a b c d f e; do want "$s" && { "scenario_$s" "$R"; tally "$s" "$r"; }; done
  fi
  if want h; then
    round_start "$R-h" ""
    scenario_h "$R"
    tally h "$r"
  fi
  if want g; then
    DELAY_FOPS=$META_FOPS round_start "$R-g" $((RANDOM % BRICKS + 1))
    scenario_g "$R"
    tally g "$r"
  fi
done
for s in $SCEN; do
  echo "blame_correct_percent_$s $((100 * ok[$s] / ROUNDS)) %"
  echo "blame_wrong_names_$s ${wrong[$s]} count"
  echo "blame_no_verdict_percent_$s $((100 * none[$s] / ROUNDS)) %"
done
echo "blame_rounds $ROUNDS count"
# Latency of one `siox blame` (the whole command) on this small testbed
# warehouse; its size is printed with it. The issue's figure on a 10M-activity
# warehouse is bench_blame_latency.sh's (blame_ms_p50, blame_ms_p95).
printf '%s\n' "${BLAME_MS[@]}" | sort -n | awk '{v[NR] = $1} END {
  p50 = v[int((NR + 1) / 2)]; i = int(0.95 * NR + 0.999); if (i < 1) i = 1
  print "blame_ms_small_p50 " p50 " ms"; print "blame_ms_small_p95 " v[i] " ms" }'
echo "blame_small_warehouse_activities $(sql "SELECT count(*) FROM activities") count"
