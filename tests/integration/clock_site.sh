# A test site of three "hosts" on this machine (sourced after lib.sh): the
# siox-server in one network namespace and two daemons, A and B, each in its
# own, joined by veth pairs on a bridge inside the server's namespace:
#
#   netns SITE-srv: br0 10.201.0.1/24 (siox-server listens here), va, vb
#   netns SITE-a:   eth0 10.201.0.2/24 (daemon A)   -- va
#   netns SITE-b:   eth0 10.201.0.3/24 (daemon B)   -- vb
#
# The namespaces, the addresses and every interface exist only inside
# namespaces this file creates; nothing is added to the machine's own
# namespace, and no traffic leaves them. Clients reach a daemon by its unix
# socket (a path: namespaces do not hide it), the CLI reaches the warehouse
# by the private PostgreSQL's unix socket. site_down (on EXIT, after the
# processes are stopped by pid) deletes the namespaces, and with them the
# interfaces. Used by test_clock_shift.sh and bench/bench_clock.sh.
# Needs root and `ip`: callers exit 77 (skip) otherwise.

SITE="siox-clk-$$"
NS_SRV="$SITE-srv" NS_A="$SITE-a" NS_B="$SITE-b"
SITE_SERVER_ADDR=10.201.0.1
SITE_NS=()

skip_unless_netns() {
  [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (network namespaces)"; exit 77; }
  command -v ip >/dev/null || { echo "SKIP: ip (iproute2) not installed"; exit 77; }
}

site_down() {
  local ns
  for ns in "${SITE_NS[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  SITE_NS=()
}

# site_up: the three namespaces and their links.
site_up() {
  local ns
  for ns in "$NS_SRV" "$NS_A" "$NS_B"; do
    ip netns add "$ns" || fail "ip netns add $ns failed"
    SITE_NS+=("$ns")
    ip -n "$ns" link set lo up
  done
  ip -n "$NS_SRV" link add br0 type bridge || fail "no bridge in $NS_SRV"
  ip -n "$NS_SRV" addr add "$SITE_SERVER_ADDR/24" dev br0
  ip -n "$NS_SRV" link set br0 up
  local side addr
  for side in a b; do
    ns=$NS_A addr=10.201.0.2
    [ $side = b ] && ns=$NS_B addr=10.201.0.3
    ip -n "$NS_SRV" link add "v$side" type veth peer name eth0 netns "$ns" || fail "veth to $ns failed"
    ip -n "$NS_SRV" link set "v$side" master br0
    ip -n "$NS_SRV" link set "v$side" up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
  done
}

# site_link a|b up|down: a daemon's host loses or regains the network.
site_link() { ip -n "$SITE-$1" link set eth0 "$2"; }

# site_server [ARGS...]: siox-server in the server's namespace, listening on
# its bridge address (--insecure: that address is not loopback, and it is
# reachable from the site's namespaces only).
site_server() {
  mkdir -p "$SERVER_DIR"
  start_munged
  ip netns exec "$NS_SRV" "$SIOX_SERVER" --listen "$SITE_SERVER_ADDR:$SERVER_PORT" --insecure --data-dir "$SERVER_DIR" \
    --munge-socket "$MUNGE_SOCK" "$@" >>"$T/server.log" 2>&1 &
  SERVER_PID=$!
  PIDS+=("$SERVER_PID")
  for _ in $(seq 300); do
    ip netns exec "$NS_SRV" bash -c "exec 3<>/dev/tcp/$SITE_SERVER_ADDR/$SERVER_PORT" 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || fail "siox-server exited"
    sleep 0.1
  done
  [ -s "$SERVER_DIR/conninfo" ] || fail "siox-server wrote no conninfo"
}

# site_daemon a|b NAME SHIFT_MS [ARGS...]: a daemon in host a's or b's
# namespace whose clock is SHIFT_MS off; its socket is $T/NAME.sock, its
# pid in DPID[NAME].
declare -A DPID
site_daemon() {
  local side=$1 name=$2 shift_ms=$3
  shift 3
  ip netns exec "$SITE-$side" "$SIOX_DAEMON" --socket "$T/$name.sock" --server "$SITE_SERVER_ADDR:$SERVER_PORT" \
    --state-dir "$T/$name" --munge-socket "$MUNGE_SOCK" --batch-ms 50 --test-clock-shift-ms "$shift_ms" "$@" \
    >>"$T/daemon-$name.log" 2>&1 &
  DPID[$name]=$!
  PIDS+=("$!")
  for _ in $(seq 100); do [ -S "$T/$name.sock" ] && return 0; sleep 0.1; done
  fail "siox-daemon $name did not create $T/$name.sock"
}

# site_daemon_status a|b NAME: `siox status --json` of daemon NAME.
site_daemon_status() {
  ip netns exec "$SITE-$1" "$SIOX_CLI" status --socket "$T/$2.sock" --server "$SITE_SERVER_ADDR:$SERVER_PORT" --json
}
