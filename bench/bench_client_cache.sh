#!/usr/bin/env bash
# The client node's page cache on the GlusterFS testbed: the source of the
# capacity model's cached-read cost and of what it assumes about caching
# (capacity/README.md, "The client's page cache").
#   One brick, slowed by 20 ms per READ (debug/delay-gen): a read that
#   reaches the brick costs >= 20 ms, one served by the kernel's page cache
#   well under 1 ms. A file of 8 MiB is written through the client with
#   1 MiB pwrites, then read back in 1 MiB preads, ROUNDS rounds through
#   the same descriptor and one round after a reopen. The baseline, in the
#   same run: the same reads with O_DIRECT (no page cache: every read a
#   brick request).
# Prints (NAME VALUE UNIT):
#   client_cache_read_ms_per_mib_median  a 1 MiB read of written data (median)
#   client_cache_read_us_4k_median       a 4 KiB one
#   client_cache_reads_to_brick_pct      share of those 1 MiB reads that took >= 10 ms
#   client_cache_reopen_reads_to_brick_pct  the same after close and reopen
#   client_direct_read_ms_per_mib_median the baseline: 1 MiB O_DIRECT reads
# Needs root, FUSE and glusterfsd (as testbed/siox-testbed).
#   bench/bench_client_cache.sh [ROUNDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-5}
T=$(mktemp -d /tmp/siox-cc.XXXXXX)
cleanup() {
  "$top/testbed/siox-testbed" stop --dir "$T/tb" >/dev/null 2>&1 || true
  rm -rf "$T"
}
trap cleanup EXIT
# A free port for the brick (the testbed listens on BASE + 1).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$top/testbed/siox-testbed" start --dir "$T/tb" --bricks 1 --slow 1 --delay-us 20000 --delay-fops READ \
  --base-port $((port - 1)) >/dev/null
python3 - "$T/tb/mnt/data" "$ROUNDS" <<'PY'
import mmap, os, statistics, sys, time
path, rounds = sys.argv[1], int(sys.argv[2])
MIB, N = 1 << 20, 8
def ms(fn):
    t = time.monotonic(); fn(); return (time.monotonic() - t) * 1e3
fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
for i in range(N):
    os.pwrite(fd, bytes([i]) * MIB, i * MIB)
hit = [ms(lambda: os.pread(fd, MIB, i * MIB)) for _ in range(rounds) for i in range(N)]
small = [ms(lambda: os.pread(fd, 4096, i * MIB)) for _ in range(rounds) for i in range(N)]
os.close(fd)
fd = os.open(path, os.O_RDONLY)
reopen = [ms(lambda: os.pread(fd, MIB, i * MIB)) for i in range(N)]
os.close(fd)
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, MIB)  # page-aligned, as O_DIRECT needs
direct = [ms(lambda: os.preadv(fd, [buf], i * MIB)) for i in range(N)]
os.close(fd)
print(f"client_cache_read_ms_per_mib_median {statistics.median(hit):.2f} ms")
print(f"client_cache_read_us_4k_median {statistics.median(small) * 1e3:.1f} us")
print(f"client_cache_reads_to_brick_pct {100 * sum(t >= 10 for t in hit) / len(hit):.1f} %")
print(f"client_cache_reopen_reads_to_brick_pct {100 * sum(t >= 10 for t in reopen) / len(reopen):.1f} %")
print(f"client_direct_read_ms_per_mib_median {statistics.median(direct):.2f} ms")
PY
