#!/usr/bin/env bash
# clock_residual_us_p95: how far the daemons' clock-offset estimates (the
# offset every Batch carries, by which siox-server moves its times) lie from
# the truth, on a site of three network namespaces on this machine
# (tests/integration/clock_site.sh): siox-server in one, daemons in the
# others. Daemon A's host clock is +50 ms off, B's -50 ms
# (--test-clock-shift-ms); all share this machine's clock, so the true
# offset (server - daemon) of each is exactly -shift. A chain workload
# (siox-example-chain, application on A, storage server on B) keeps both
# daemons ingesting while `siox status` samples each daemon's estimate once
# a second. The baseline is daemon A0, beside A in A's namespace, with no
# shift: the residual a right clock gets on the same links under the same
# load.
# Prints (NAME VALUE UNIT):
#   clock_residual_us_p95            |estimate + shift|, p95 over the samples of A and B
#   clock_residual_us_median         the same, median
#   clock_residual_us_p95_unshifted  the baseline daemon's p95
#   clock_uncertainty_us_p95         the uncertainty the shifted daemons claim (half
#                                    the best ping round trip), p95: the matcher's widening
#   clock_residual_samples           samples behind the figures
# Needs root and iproute2. Starts and stops its own server, daemons and
# namespaces (by pid and name).
#   bench/bench_clock.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$top/build}" && pwd)
SECONDS_RUN=${2:-40}
export SIOX_SERVER=$B/siox-server/siox-server SIOX_DAEMON=$B/siox-daemon/siox-daemon SIOX_CLI=$B/siox-cli/siox
export SIOX_CHAIN=$B/examples/siox-example-chain
. "$top/tests/integration/lib.sh"
. "$top/tests/integration/clock_site.sh"
[ "$(id -u)" -eq 0 ] && command -v ip >/dev/null || { echo "# bench_clock: needs root and iproute2; skipped" >&2; exit 0; }
trap 'cleanup; site_down' EXIT
exec 3>&1 1>&2 # figures on the caller's stdout, the rest on stderr

site_up
site_server
site_daemon a sa 50
site_daemon b sb -50
site_daemon a a0 0

# The workload: chains one after the other until the sampling ends.
(
  i=0
  while :; do
    i=$((i + 1))
    ip netns exec "$NS_A" env SIOX_SOCKET="$T/sa.sock" SIOX_JOB_ID=bench-clock "$SIOX_CHAIN" --writes 50 --slow-device 1 \
      --slow-us 10000 --fast-us 2000 --object "clock-$i" --server-socket "$T/sb.sock" >/dev/null 2>&1 || true
  done
) &
PIDS+=("$!")

samples="$T/samples"
: >"$samples"
end=$((SECONDS + SECONDS_RUN))
sleep 2 # the first ping samples
while [ $SECONDS -lt $end ]; do
  for d in "a sa 50" "b sb -50" "a a0 0"; do
    set -- $d
    site_daemon_status "$1" "$2" 2>/dev/null | python3 -c '
import json, sys
c = json.load(sys.stdin)["daemon"]["counters"]
print(sys.argv[1], sys.argv[2], c["clock_offset_ns"], c["clock_uncertainty_ns"])' "$2" "$3" >>"$samples" || true
  done
  sleep 1
done

python3 - "$samples" >&3 <<'PY'
import statistics, sys
shifted, base, unc = [], [], []
for line in open(sys.argv[1]):
    name, shift_ms, off, u = line.split()
    # Truth: server - daemon = -shift (one machine, one clock).
    err = abs(int(off) + int(shift_ms) * 1000000) / 1000.0
    (base if shift_ms == "0" else shifted).append(err)
    if shift_ms != "0":
        unc.append(int(u) / 1000.0)
def p95(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(0.95 * (len(v) - 1))))]
if not shifted or not base:
    sys.exit("bench_clock: no samples")
print(f"clock_residual_us_p95 {p95(shifted):.1f} us")
print(f"clock_residual_us_median {statistics.median(shifted):.1f} us")
print(f"clock_residual_us_p95_unshifted {p95(base):.1f} us")
print(f"clock_uncertainty_us_p95 {p95(unc):.1f} us")
print(f"clock_residual_samples {len(shifted)} samples")
PY
