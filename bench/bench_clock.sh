#!/usr/bin/env bash
# clock_residual_us_p95: how far the daemons' clock-offset estimates (the
# offset every Batch carries, by which siox-server moves its times) lie from
# the truth, on a site of three network namespaces on this machine
# (tests/integration/clock_site.sh): siox-server in one, daemons in the
# others. Daemon A's host clock is +50 ms off, B's -50 ms
# (--test-clock-shift-ms); all share this machine's clock, so the true
# offset (server - daemon) of each is exactly -shift. A chain workload
# (siox-example-chain, application on A, storage server on B) keeps both
# daemons ingesting while the offsets their batches carry (their rows in
# `daemons`) are sampled twice
# a second. The baseline is daemon A0, beside A in A's namespace, with no
# shift: the residual a right clock gets on the same links under the same
# load.
# Prints (NAME VALUE UNIT):
#   clock_residual_us_p95            |estimate + shift|, p95 over the samples of A and B
#   clock_residual_us_median         the same, median
#   clock_residual_us_p95_unshifted  the baseline daemon's p95
#   clock_uncertainty_us_p95         the uncertainty the shifted daemons claim (half the
#                                    best round trip plus 20 ppm drift since), p95
#   clock_residual_samples           samples behind the figures (the shifted daemons')
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

# The workload: chains one after the other until the sampling ends; the
# baseline daemon A0 gets a chain of its own (both ends on it).
chains() {
  local i=0
  while :; do
    i=$((i + 1))
    ip netns exec "$NS_A" env SIOX_SOCKET="$T/$1.sock" SIOX_JOB_ID=bench-clock "$SIOX_CHAIN" --writes 50 --slow-device 1 \
      --slow-us 10000 --fast-us 2000 --object "clock-$1-$i" --server-socket "$T/$2.sock" >/dev/null 2>&1 || true
  done
}
chains sa sb &
PIDS+=("$!")
chains a0 a0 &
PIDS+=("$!")

# Each Batch's offset and uncertainty land in its daemon's row of `daemons`
# (the values the server corrected that batch with): sampled twice a second.
signed_id() { python3 -c 'import sys; v = int(sys.argv[1], 16); print(v - (1 << 64) if v >= 1 << 63 else v)' "$1"; }
declare -A SHIFT_OF
for d in "sa 50" "sb -50" "a0 0"; do
  set -- $d
  hex=$(sed -n 's/^siox-daemon: id \([0-9a-f]*\),.*/\1/p' "$T/daemon-$1.log" | head -n 1)
  [ -n "$hex" ] || fail "no id in $T/daemon-$1.log"
  SHIFT_OF[$(signed_id "$hex")]=$2
done
samples="$T/samples"
: >"$samples"
end=$((SECONDS + SECONDS_RUN))
sleep 2
while [ $SECONDS -lt $end ]; do
  sql "SELECT daemon_id, clock_offset_ns, clock_uncertainty_ns FROM daemons" | while IFS='|' read -r id off unc; do
    [ -n "${SHIFT_OF[$id]:-}" ] && echo "$id ${SHIFT_OF[$id]} $off $unc" >>"$samples"
  done
  sleep 0.5
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
