# Shared helpers for SIOX integration tests (sourced by bash scripts).
# Each test gets its own temp dir, its own server port and daemon socket; all
# processes it starts are recorded by pid and stopped by pid at exit.
# Binaries come from the environment set by ctest: SIOX_SERVER, SIOX_DAEMON,
# SIOX_CLI, SIOX_CHAIN.
set -euo pipefail

T=$(mktemp -d /tmp/siox-it.XXXXXX)
chmod 755 "$T"   # the private PostgreSQL runs as user postgres and must reach it
PIDS=()

log() { echo "[$(date +%H:%M:%S)] $*"; }
fail() {
  echo "FAIL: $*" >&2
  for f in "$T"/*.log; do [ -f "$f" ] && { echo "--- $f (tail)"; tail -n 40 "$f"; }; done >&2
  exit 1
}

# Stops a process by pid: TERM, then KILL after 10 s.
stop_pid() {
  local pid=$1
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

# Stops an orphaned private postmaster (left by a kill -9 of the server):
# fast shutdown (SIGINT ends its sessions), then immediate (SIGQUIT). TERM
# waits for sessions that may never end, and KILL leaves its backends
# running on without a postmaster.
stop_postmaster() {
  local pidfile="$1/pg/postmaster.pid"
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(head -n 1 "$pidfile")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -INT "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -QUIT "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
}

cleanup() {
  local i
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "${PIDS[$i]}"; done
  stop_postmaster "$T/server"
  if [ "${SIOX_KEEP_TMP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits until a TCP port on loopback accepts connections.
wait_port() {
  local port=$1 what=$2
  for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  fail "$what did not listen on port $port"
}

# A private munged (MUNGE authenticates every daemon's Hello and `siox
# status`): fresh random key, socket $MUNGE_SOCK, stopped by its pid file's
# pid at exit. Idempotent; start_server and start_daemon call it.
MUNGE_DIR="$T/munge"
MUNGE_SOCK="$MUNGE_DIR/munge.sock"
start_munged() {
  [ -S "$MUNGE_SOCK" ] && return 0
  command -v munged >/dev/null || fail "munged is not installed (scripts/install-deps.sh)"
  mkdir -p "$MUNGE_DIR"
  chmod 755 "$MUNGE_DIR"   # munged wants its socket's directory searchable by all
  dd if=/dev/urandom of="$MUNGE_DIR/munge.key" bs=128 count=1 status=none
  chmod 600 "$MUNGE_DIR/munge.key"
  munged --socket="$MUNGE_SOCK" --key-file="$MUNGE_DIR/munge.key" --pid-file="$MUNGE_DIR/munged.pid" \
    --log-file="$MUNGE_DIR/munged.log" --seed-file="$MUNGE_DIR/munged.seed" 2>>"$T/munged.log" ||
    fail "munged did not start: $(tail -n 3 "$MUNGE_DIR/munged.log" 2>/dev/null)"
  for _ in $(seq 100); do [ -S "$MUNGE_SOCK" ] && [ -s "$MUNGE_DIR/munged.pid" ] && break; sleep 0.05; done
  [ -s "$MUNGE_DIR/munged.pid" ] || fail "munged wrote no pid file"
  PIDS=("$(cat "$MUNGE_DIR/munged.pid")" "${PIDS[@]}")   # stopped last
  export SIOX_MUNGE_SOCKET="$MUNGE_SOCK"                 # for `siox status`
}

SERVER_PORT=${SERVER_PORT:-$(free_port)}
SERVER_DIR="$T/server"
SERVER_PID=""

# SIOX_SERVER_NICE=N: the server (and the PostgreSQL it starts) at nice N,
# for benches whose measured runs share the machine with the warehouse.
start_server() {
  mkdir -p "$SERVER_DIR"
  start_munged
  ${SIOX_SERVER_NICE:+nice -n "$SIOX_SERVER_NICE"} "$SIOX_SERVER" --listen "127.0.0.1:$SERVER_PORT" --data-dir "$SERVER_DIR" --munge-socket "$MUNGE_SOCK" "$@" \
    >>"$T/server.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  wait_port "$SERVER_PORT" siox-server
  [ -s "$SERVER_DIR/conninfo" ] || fail "siox-server wrote no conninfo"
}

DAEMON_SOCK="$T/daemon.sock"
DAEMON_PID=""
start_daemon() {
  local server=${1:-127.0.0.1:$SERVER_PORT}
  shift || true
  start_munged
  "$SIOX_DAEMON" --socket "$DAEMON_SOCK" --server "$server" --state-dir "$T/daemon" --munge-socket "$MUNGE_SOCK" "$@" \
    >>"$T/daemon.log" 2>&1 &
  DAEMON_PID=$!
  PIDS+=("$DAEMON_PID")
  for _ in $(seq 100); do [ -S "$DAEMON_SOCK" ] && break; sleep 0.1; done
  [ -S "$DAEMON_SOCK" ] || fail "siox-daemon did not create $DAEMON_SOCK"
  export SIOX_SOCKET="$DAEMON_SOCK"
}

# Waits until the warehouse's activity count has not changed for 3 s (a
# rank's last batches can arrive after its MPI_Finalize; a trace missing one
# rank's collectives cannot be simulated or replayed); fails after 180 s.
wait_settled() {
  local prev=-1 still=0 cur
  for _ in $(seq 900); do
    cur=$(sql "SELECT count(*) FROM activities")
    if [ "$cur" = "$prev" ]; then still=$((still + 1)); else still=0; fi
    [ $still -ge 15 ] && return 0
    prev=$cur
    sleep 0.2
  done
  fail "the warehouse did not settle"
}

# Without a preloaded ASan runtime (tests export it for uninstrumented MPI
# programs): psql hung under it.
sql() { env -u LD_PRELOAD psql "$(cat "$SERVER_DIR/conninfo")" -v ON_ERROR_STOP=1 -Atqc "$1"; }

siox_cli() { "$SIOX_CLI" --data-dir "$SERVER_DIR" "$@"; }

# PRELOAD: libsiox-posix for a program under test. An ASan library can only
# be preloaded behind the ASan runtime itself (SKIP, exit 77, without it).
posix_preload() {
  PRELOAD=$SIOX_POSIX_LIB
  [ "${SIOX_SANITIZE:-0}" = 1 ] || return 0
  local asan
  asan=$("${CC:-cc}" -print-file-name=libasan.so)
  [ -e "$asan" ] || { echo "SKIP: ASan build and no libasan.so to preload first"; exit 77; }
  PRELOAD="$asan:$SIOX_POSIX_LIB"
  export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
}

# The sanitizer runtimes siox was built with (colon-separated, empty in a
# release build): an uninstrumented program run under an ASan-built layer
# needs them preloaded first.
asan_rt() { ldd "$SIOX_CLI" | awk '/libasan|libubsan/ {printf "%s%s", sep, $3; sep=":"}'; }

# The environment of a test that runs MPI ranks under the layers: root may
# run mpirun; leak checks off in the ranks (OpenMPI, hwloc and HDF5 leak at
# exit, also from MCA components already unloaded, so no suppression can
# name them; every other ASan/UBSan check stays on); ROMIO (predictable
# aggregation, instrumentation/mpi/README.md); ASAN_RT, the ASan runtime to
# preload first ("path:", empty in a release build) when the layers carry it.
mpi_env() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_io=romio321
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  ASAN_RT=$(ldd "$SIOX_MPI_LIB" | awk '/libasan/ {print $3 ":"}')
  [ -n "${SIOX_POSIX_LIB:-}" ] || fail "libsiox-posix is not built (SIOX_POSIX_LIB unset)"
}

# mpi_jobs OUT JOB...: one 2-rank run of mpi_io_workload per JOB (after
# mpi_env, start_server, start_daemon; files OUT.JOB), then waits for every
# rank's MPI_Finalize in the warehouse.
mpi_jobs() {
  local out=$1 J n=0
  shift
  for J in "$@"; do
    log "instrumented run of $J"
    mpirun --oversubscribe -np 2 -x ASAN_OPTIONS -x LD_PRELOAD="$ASAN_RT$SIOX_MPI_LIB:$SIOX_POSIX_LIB" \
      -x SIOX_SOCKET="$DAEMON_SOCK" -x SIOX_JOB_ID="$J" "$SIOX_MPI_WORKLOAD" "$out.$J" "$T/manifest.$J" \
      >>"$T/workload.log" 2>&1 || fail "mpi_io_workload failed"
  done
  for _ in $(seq 300); do
    n=$(sql "SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) WHERE t.name = 'MPI_Finalize'")
    [ "$n" -ge $((2 * $#)) ] && break
    sleep 0.2
  done
  [ "$n" -eq $((2 * $#)) ] || fail "$n MPI_Finalize stored, want $((2 * $#))"
  sleep 1
}

# Waits until the warehouse holds exactly $1 activities (fails on more, or on
# fewer after the timeout in seconds, $2, default 60).
wait_activities() {
  local want=$1 timeout=${2:-60} n=0
  for _ in $(seq $((timeout * 5))); do
    n=$(sql "SELECT count(*) FROM activities" 2>/dev/null || echo 0)
    [ "$n" -gt "$want" ] && fail "warehouse holds $n activities, more than the $want made"
    [ "$n" -eq "$want" ] && return 0
    sleep 0.2
  done
  fail "warehouse holds $n activities after ${timeout}s, want $want"
}

# json_get FILE EXPR: evaluates a Python expression over the parsed JSON `j`.
json_get() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

# root_of_slowest JOB SWID NAME ROOT_SWID: the call of layer ROOT_SWID that
# the job's slowest SWID NAME activity served (upwards along causal_edges,
# explicit and implicit): e.g. the app write whose device write was slowest.
# On a loaded machine the slowest app write itself may be a healthy
# device's, slowed by the scheduler in the client process, where blame
# rightly names nothing. Waits up to 30 s for the links to reach it.
root_of_slowest() {
  local r=""
  for _ in $(seq 60); do
    r=$(root_of_slowest_now "$@")
    if [ -n "$r" ]; then break; fi
    sleep 0.5
  done
  echo "$r"
}
root_of_slowest_now() {
  sql "WITH RECURSIVE d AS (
         SELECT a.aid FROM activities a JOIN nodes n USING (node_id) JOIN activity_types t USING (type_id)
         JOIN processes p USING (proc_id) WHERE p.job = '$1' AND n.swid = '$2' AND t.name = '$3'
         ORDER BY a.end_ns - a.start_ns DESC, a.aid LIMIT 1),
       up (aid, depth) AS (SELECT aid, 0 FROM d
         UNION ALL SELECT e.parent_aid, up.depth + 1 FROM causal_edges e JOIN up ON e.child_aid = up.aid
         WHERE up.depth < 16)
       SELECT up.aid FROM up JOIN activities a USING (aid) JOIN nodes n USING (node_id)
       WHERE n.swid = '$4' ORDER BY up.depth LIMIT 1"
}

# top_first_aid FILE: the aid of the first row of `siox top --json` output.
top_first_aid() {
  python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
rows = rows.get("activities", rows) if isinstance(rows, dict) else rows
print(rows[0]["aid"])' "$1"
}

# assert_graph FILE SWID...: the `siox graph --json` tree in FILE contains
# every named layer, has at least one implicit link, and every implicit link
# in it has confidence 1.0. Returns non-zero (with the reason) otherwise.
assert_graph() {
  python3 - "$@" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
need = set(sys.argv[2:])
swids, implicit = set(), []
def walk(x):
    if isinstance(x, dict):
        if "swid" in x: swids.add(x["swid"])
        if x.get("link") == "implicit" or x.get("kind") == "implicit":
            implicit.append(x.get("confidence"))
        for v in x.values(): walk(v)
    elif isinstance(x, list):
        for v in x: walk(v)
walk(g)
assert need <= swids, f"layers {sorted(swids)}, need {sorted(need)}"
assert implicit and all(abs(c - 1.0) < 1e-6 for c in implicit), f"implicit links {implicit}"
PY
}

# skip_unless_fuse_testbed: exits 77 (a ctest skip) unless the GlusterFS
# testbed can run here: root, /dev/fuse and glusterfsd are all needed.
skip_unless_fuse_testbed() {
  [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (FUSE mount)"; exit 77; }
  [ -c /dev/fuse ] || { echo "SKIP: /dev/fuse is missing"; exit 77; }
  command -v glusterfsd >/dev/null || { echo "SKIP: glusterfsd not installed"; exit 77; }
}

# free_port_block N: prints a base port B such that B+1 .. B+N are all free
# on loopback (the testbed's brick N listens on B+N); prints nothing if none
# was found.
free_port_block() {
  python3 - "$1" <<'PY'
import random, socket, sys
n = int(sys.argv[1])
for _ in range(200):
    b = random.randint(20000, 50000)
    ok = True
    for p in range(b + 1, b + n + 1):
        s = socket.socket()
        try: s.bind(("127.0.0.1", p))
        except OSError: ok = False
        finally: s.close()
    if ok: print(b); break
PY
}
