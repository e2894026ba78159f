#!/usr/bin/env bash
# The main job: builds SIOX, starts the whole stack (siox-server with its
# private PostgreSQL, siox-daemon), and shows what SIOX finds in two runs:
#  1. an instrumented two-process I/O chain with one slowed storage device
#     (quick, needs nothing else);
#  2. the real stack: a GlusterFS testbed (4 bricks, brick 3 slowed by
#     debug/delay-gen, SIOX translators on client and bricks) and a 4-rank
#     MPI program (parallel HDF5 collective writes, independent MPI-IO writes,
#     POSIX writes, read back) under `siox run --layers posix,mpi,hdf5 --
#     mpirun ...` (needs root and /dev/fuse; skipped otherwise).
# For each: siox top, the causal tree of the slowest write through every
# layer, siox blame naming the slow component, an SVG graph.
# Everything runs on loopback and under DEMO_DIR (default ./.siox-demo); all
# processes are stopped by pid (the testbed by its pid files) and the volume
# unmounted at the end. Set SIOX_DEMO_KEEP=1 to keep the stack running after
# the demo (the script prints how to stop it). SIOX_BUILD_DIR picks the build
# tree (default ./build).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
DEMO_DIR=${DEMO_DIR:-$top/.siox-demo}
PORT=${SIOX_DEMO_PORT:-7410}

"$top/scripts/install-deps.sh"
echo "== building"
B=${SIOX_BUILD_DIR:-$top/build}
"$top/scripts/build.sh" "$B"

rm -rf "$DEMO_DIR"
mkdir -p "$DEMO_DIR"
chmod 755 "$DEMO_DIR"
PIDS=()
TB=""
stop_all() {
  if [ "${SIOX_DEMO_KEEP:-0}" = 1 ]; then
    [ -n "$TB" ] && echo "testbed kept running: $top/testbed/siox-testbed stop --dir $TB"
    echo "stack kept running: kill ${PIDS[*]}"
    return
  fi
  # The testbed first: its processes report to the daemon.
  [ -n "$TB" ] && { "$top/testbed/siox-testbed" stop --dir "$TB" >/dev/null 2>&1 || true; echo "== testbed stopped, volume unmounted"; }
  local i
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    kill -TERM "${PIDS[$i]}" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "${PIDS[$i]}" 2>/dev/null || break; sleep 0.1; done
  done
  echo "== stack stopped"
}
trap stop_all EXIT

# MUNGE authenticates the daemon to the server (their default): the system
# munged when it answers, else a private one with a fresh key under
# DEMO_DIR/munge, stopped with the stack.
MUNGE_SOCK=/run/munge/munge.socket.2
if ! munge -n -S "$MUNGE_SOCK" 2>/dev/null | unmunge -S "$MUNGE_SOCK" >/dev/null 2>&1; then
  MUNGE_SOCK=$DEMO_DIR/munge/munge.sock
  echo "== starting a private munged ($MUNGE_SOCK)"
  mkdir -p "$DEMO_DIR/munge"
  chmod 755 "$DEMO_DIR/munge"
  dd if=/dev/urandom of="$DEMO_DIR/munge/munge.key" bs=128 count=1 status=none
  chmod 600 "$DEMO_DIR/munge/munge.key"
  munged --socket="$MUNGE_SOCK" --key-file="$DEMO_DIR/munge/munge.key" --pid-file="$DEMO_DIR/munge/munged.pid" \
    --log-file="$DEMO_DIR/munge/munged.log" --seed-file="$DEMO_DIR/munge/munged.seed"
  for _ in $(seq 100); do [ -s "$DEMO_DIR/munge/munged.pid" ] && break; sleep 0.05; done
  PIDS+=("$(cat "$DEMO_DIR/munge/munged.pid")")
fi
export SIOX_MUNGE_SOCKET=$MUNGE_SOCK   # `siox status` signs its request with it

echo "== starting siox-server (private PostgreSQL under $DEMO_DIR/server, MUNGE authentication)"
"$B/siox-server/siox-server" --listen "127.0.0.1:$PORT" --data-dir "$DEMO_DIR/server" --munge-socket "$MUNGE_SOCK" \
  >"$DEMO_DIR/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do [ -s "$DEMO_DIR/server/conninfo" ] && break; sleep 0.1; done
[ -s "$DEMO_DIR/server/conninfo" ] || { echo "siox-server did not start; see $DEMO_DIR/server.log"; tail "$DEMO_DIR/server.log"; exit 1; }

echo "== starting siox-daemon"
export SIOX_SOCKET=$DEMO_DIR/daemon.sock
"$B/siox-daemon/siox-daemon" --socket "$SIOX_SOCKET" --server "127.0.0.1:$PORT" --munge-socket "$MUNGE_SOCK" \
  --state-dir "$DEMO_DIR/daemon" --batch-ms 50 >"$DEMO_DIR/daemon.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do [ -S "$SIOX_SOCKET" ] && break; sleep 0.1; done

siox() { "$B/siox-cli/siox" --data-dir "$DEMO_DIR/server" "$@"; }

# The hint loop on the testbed: small strided independent writes (each
# rank's 4 KiB blocks 1 MiB apart, a column of a large row-major array) run
# once without hints; the knowledge base analyses that job and computes a
# ROMIO hint set from what it saw; the second run asks for it at
# MPI_File_open (siox run --hints) and applies it.
hint_loop() {
  local f="" out run i
  # On a healthy brick: this part is about the hints, not the slowed brick
  # (whose 80 ms per operation would dominate either strategy).
  for i in $(seq 40); do
    : >"$MNT/strided-$i.dat"
    if [ "$(brick_of "strided-$i.dat")" != "$SLOW" ]; then f=$MNT/strided-$i.dat; break; fi
    rm -f "$MNT/strided-$i.dat"
  done
  [ -n "$f" ] || { echo "no file name landed on a healthy brick"; return 0; }
  local wl=(--blocks 16 --repeat 8 --stride 1048576)
  for run in 1 2; do
    local opt=()
    [ $run = 2 ] && opt=(--hints)
    echo; echo "== hint loop, run $run: SIOX_JOB_ID=demo-hints-$run siox run ${opt[*]} --layers posix,mpi -- mpirun -np 4 siox-strided-writes ${wl[*]}"
    out=$(SIOX_JOB_ID=demo-hints-$run "$B/siox-cli/siox" run "${opt[@]}" --layers posix,mpi -- \
      mpirun --oversubscribe -np 4 "$B/examples/siox-strided-writes" "$f" "${wl[@]}" --print-info --no-verify)
    echo "$out" | grep -E "io_time_s|^info (romio_ds_write|ind_wr_buffer_size|romio_cb_write|cb_buffer_size|cb_nodes) " || true
    if [ $run = 1 ]; then
      wait_for "SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) JOIN processes p USING (proc_id)
                WHERE t.name = 'MPI_Finalize' AND p.job = 'demo-hints-1'" 4 || true
      sleep 2
      echo; echo "== siox hints --job demo-hints-1 --analyze   (findings and the hint set computed from run 1)"
      siox hints --job demo-hints-1 --analyze || true
      echo; echo "== siox hints --job demo-hints-1 --export romio"
      siox hints --job demo-hints-1 --export romio || true
    fi
  done
}

echo "== running the instrumented chain: app -> fs-client -> server -> devices dev0/dev1 (dev1 slowed)"
SIOX_JOB_ID=demo "$B/examples/siox-example-chain" --writes 20 --slow-device 1 --slow-us 25000 --fast-us 2000
for _ in $(seq 100); do
  n=$(psql "$(cat "$DEMO_DIR/server/conninfo")" -Atqc "SELECT count(*) FROM activities" 2>/dev/null || echo 0)
  [ "$n" -ge 80 ] && break
  sleep 0.2
done

echo; echo "== siox top"
siox top --job demo -n 8
aid=$(siox top --job demo --layer app --name write -n 1 --json |
  python3 -c 'import json,sys; j=json.load(sys.stdin); j=j.get("activities", j) if isinstance(j, dict) else j; print(j[0]["aid"])')
echo; echo "== siox graph $aid   (the slowest app write, through every layer)"
siox graph "$aid"
echo; echo "== siox blame $aid"
siox blame "$aid"
siox graph "$aid" --format dot >"$DEMO_DIR/graph.dot"
dot -Tsvg "$DEMO_DIR/graph.dot" -o "$DEMO_DIR/graph.svg"
echo; echo "== SVG of the graph: $DEMO_DIR/graph.svg"
# ---------------------------------------------------------------------------
# 2. The real stack: GlusterFS testbed + 4-rank MPI/HDF5 workload.
sql() { psql "$(cat "$DEMO_DIR/server/conninfo")" -Atqc "$1"; }
wait_for() { # SQL WANT: until the count SQL returns reaches WANT (60 s)
  for _ in $(seq 300); do [ "$(sql "$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0; sleep 0.2; done
  return 1
}
why=""
[ "$(id -u)" -eq 0 ] || why="needs root (FUSE mount)"
[ -c /dev/fuse ] || why="/dev/fuse is missing"
command -v glusterfsd >/dev/null || why="glusterfsd is not installed"
[ -x "$B/examples/siox-io-workload" ] || why="siox-io-workload was not built (MPI / parallel HDF5 missing)"
[ -d "$B/instrumentation/glusterfs/xlator" ] || why="the GlusterFS translators were not built"
if [ -n "$why" ]; then
  echo; echo "== skipping the GlusterFS + MPI part: $why"
else
  SLOW=3 DELAY_US=${SIOX_DEMO_DELAY_US:-80000} JOB=demo-mpi
  TB=$DEMO_DIR/tb
  BASE=$(python3 -c '
import socket, random
for _ in range(200):
    b = random.randint(20000, 50000); ok = True
    for p in range(b + 1, b + 5):
        s = socket.socket()
        try: s.bind(("127.0.0.1", p))
        except OSError: ok = False
        finally: s.close()
    if ok: print(b); break')
  echo; echo "== starting the GlusterFS testbed: 4 bricks, brick $SLOW slowed by $((DELAY_US / 1000)) ms per WRITE/READ, SIOX translators"
  # No job for the file system: server-side processes serve every job, and
  # blame takes its peers from the job plus such job-less processes.
  "$top/testbed/siox-testbed" start --dir "$TB" --bricks 4 --slow $SLOW --delay-us "$DELAY_US" \
    --base-port "$BASE" --client-xlator debug/siox-client --brick-xlator debug/siox-brick \
    --xlator-dir "$B/instrumentation/glusterfs/xlator" >"$DEMO_DIR/testbed.out" 2>&1 ||
    { cat "$DEMO_DIR/testbed.out"; exit 1; }
  MNT=$TB/mnt
  # distribute places a file by the hash of its name: take one HDF5 file and
  # one POSIX file per brick, so that every brick gets writes.
  brick_of() { local n; for n in 1 2 3 4; do [ -e "$TB/brick$n/$1" ] && { echo "$n"; return; }; done; echo 0; }
  ARGS=()
  for kind in h5 posix; do
    declare -A on=()
    for i in $(seq 80); do
      f="out-$i.$kind"
      : >"$MNT/$f"
      b=$(brick_of "$f")
      if [ "$b" != 0 ] && [ -z "${on[$b]:-}" ]; then on[$b]=$f; ARGS+=("--$kind" "$MNT/$f"); else rm -f "$MNT/$f"; fi
      [ ${#on[@]} -eq 4 ] && break
    done
    unset on
  done
  ARGS+=(--mpiio "$MNT/out.mpiio")
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_io=romio321
  cmd=(siox run --layers posix,mpi,hdf5 -- mpirun --oversubscribe -np 4 "$B/examples/siox-io-workload"
       --rows 32 --cols 512 --steps 2 --block 65536 "${ARGS[@]}")
  echo; echo "== SIOX_JOB_ID=$JOB ${cmd[*]}"
  SIOX_JOB_ID=$JOB "$B/siox-cli/siox" "${cmd[@]:1}"
  q="SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) JOIN processes p USING (proc_id)
     WHERE t.name = 'MPI_Finalize' AND p.job = '$JOB'"
  wait_for "$q" 4 || echo "(not all ranks' records arrived within 60 s)"
  n=-1
  for _ in $(seq 30); do m=$(sql "SELECT count(*) FROM causal_links"); [ "$m" = "$n" ] && break; n=$m; sleep 1; done

  echo; echo "== siox top --job $JOB"
  siox top --job $JOB -n 8
  aid=$(siox top --job $JOB --layer HDF5 --name H5Dwrite -n 1 --json |
    python3 -c 'import json,sys; j=json.load(sys.stdin); j=j.get("activities", j) if isinstance(j, dict) else j; print(j[0]["aid"])')
  echo; echo "== siox graph $aid   (the slowest H5Dwrite: HDF5 -> MPI-IO -> POSIX -> GlusterFS client -> brick)"
  siox graph "$aid"
  siox graph "$aid" --format dot >"$DEMO_DIR/h5dwrite.dot"
  dot -Tsvg "$DEMO_DIR/h5dwrite.dot" -o "$DEMO_DIR/h5dwrite.svg"
  # Blame walks into the layer group holding most of the time (not the
  # trailing collective set_view) and judges the cross-process components
  # below it (bricks) against their peers.
  echo; echo "== siox blame $aid   (the slowest H5Dwrite)"
  siox blame "$aid"
  echo; echo "== SVG of the H5Dwrite's graph: $DEMO_DIR/h5dwrite.svg"

  # 3. What the knowledge base learns: hints (computed from run 1 of the
  # strided workload, applied in run 2), then anomalies and capacity over
  # everything so far (folded once the rows have settled, 15 s).
  hint_loop
  # Folds take activities that ended over 15 s ago (rows still in flight
  # come later); this demo is quicker than that.
  echo; echo "== (waiting 16 s for the last rows to settle before folding baselines and capacity)"
  sleep 16
  echo; echo "== siox anomalies --since 15m --update   (components slower than their own baselines)"
  siox anomalies --since 15m --update || true
  echo; echo "== siox capacity --since 15m --update --what-if 4 --plot $DEMO_DIR/capacity"
  siox capacity --since 15m --update --what-if 4 --plot "$DEMO_DIR/capacity" || true
fi

echo; echo "== siox status"
siox status --socket "$SIOX_SOCKET" --server "127.0.0.1:$PORT" || true
