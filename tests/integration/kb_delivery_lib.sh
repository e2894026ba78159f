# Helpers of the hint-delivery tests (test_kb_delivery*.sh, test_hints_e2e.sh),
# sourced after lib.sh: the strided workload (examples/siox_strided_writes.c)
# under mpirun with libsiox-mpi (+ libsiox-posix) preloaded, and queries of
# what its MPI_File_open activities recorded.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_io=romio321 # hint sets name the component (knowledge-base/README.md)
# Under -DSIOX_SANITIZE=ON: OpenMPI leaks at exit; every other check stays on,
# and the ASan runtime must come first in LD_PRELOAD of the (uninstrumented) ranks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
ASAN_RT=$(ldd "$SIOX_MPI_LIB" | awk '/libasan|libubsan/ {printf "%s%s", $3, ":"}')
PRELOAD="$ASAN_RT$SIOX_MPI_LIB${SIOX_POSIX_LIB:+:$SIOX_POSIX_LIB}"
RANKS=4

# strided OUT FILE [workload options...]: 4 ranks of the workload, output
# (with --print-info) in OUT; SIOX_HINTS and SIOX_HINTS_TIMEOUT_MS are passed
# through when set.
strided() {
  local out=$1 file=$2
  shift 2
  mpirun --oversubscribe -np $RANKS -x ASAN_OPTIONS -x OMPI_MCA_io -x LD_PRELOAD="$PRELOAD" \
    -x SIOX_SOCKET="$DAEMON_SOCK" -x SIOX_JOB_ID="${JOB:-kb-delivery}" -x SIOX_HINTS="${SIOX_HINTS:-0}" \
    -x SIOX_HINTS_TIMEOUT_MS="${SIOX_HINTS_TIMEOUT_MS:-200}" \
    "$SIOX_STRIDED" "$file" --print-info "$@" >"$out" 2>&1 || { cat "$out" >&2; fail "siox-strided-writes failed"; }
  grep -q "siox_strided_writes: ok" "$out" || fail "the workload did not verify its data ($out)"
}

# info_of OUT KEY: the value MPI_File_get_info showed for KEY, or "".
info_of() { awk -v k="$2" '$1 == "info" && $2 == k {print $3}' "$1"; }

# open_attr JOB NAME: "value" of attribute NAME on each of the job's
# MPI_File_open activities, one per line, sorted.
open_attr() {
  sql "SELECT coalesce(v.value, '<unset>') FROM activities a JOIN activity_types t USING (type_id)
       JOIN processes p USING (proc_id) LEFT JOIN activity_attributes v ON v.aid = a.aid AND v.name = '$2'
       WHERE t.name = 'MPI_File_open' AND p.job = '$1' ORDER BY 1"
}

# wait_opens JOB: until the job's RANKS open activities are in the warehouse.
wait_opens() {
  local q="SELECT count(*) FROM activities a JOIN activity_types t USING (type_id) JOIN processes p USING (proc_id)
           WHERE t.name = 'MPI_File_open' AND p.job = '$1'"
  for _ in $(seq 300); do [ "$(sql "$q" 2>/dev/null || echo 0)" -ge $RANKS ] && return 0; sleep 0.2; done
  fail "the $RANKS MPI_File_open activities of job $1 did not reach the warehouse"
}

# kb_args_hash ARGS: siox_kb_args_hash (64-bit FNV-1a) as the signed bigint stored.
kb_args_hash() {
  python3 -c '
import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode(): h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
print(h - 2**64 if h >= 2**63 else h)' "$1"
}

# kb_pattern PATH: siox_kb_file_pattern (every run of digits -> #).
kb_pattern() { python3 -c 'import re, sys; print(re.sub(r"[0-9]+", "#", sys.argv[1]))' "$1"; }

# insert_hint_set EXE ARGS PATTERN JSON: a kb_apps row (if new) and a live
# romio321 hint set; prints its hint_set_id.
insert_hint_set() {
  local hash
  hash=$(kb_args_hash "$2")
  sql "INSERT INTO kb_apps (exe, args_hash, args) VALUES ('$1', $hash, '$2') ON CONFLICT (exe, args_hash) DO NOTHING" >/dev/null
  sql "INSERT INTO kb_hint_sets (app_id, file_pattern, component, hints)
       SELECT app_id, '$3', 'romio321', '$4'::jsonb FROM kb_apps WHERE exe = '$1' AND args_hash = $hash
       RETURNING hint_set_id"
}

# daemon_connected: the daemon's hint_link_connected counter (1 or 0).
daemon_connected() {
  local j
  j=$("$SIOX_CLI" status --socket "$DAEMON_SOCK" --json 2>/dev/null) || true # exits 1 while the server is down
  python3 -c 'import json, sys; print(json.loads(sys.argv[1])["daemon"]["counters"]["hint_link_connected"])' "$j" \
    2>/dev/null || echo 0
}

# wait_uplink 1|0: until the daemon is (1) or is no longer (0) connected to
# the server; a hint query before that is answered "server down".
wait_uplink() {
  for _ in $(seq 150); do [ "$(daemon_connected)" = "$1" ] && return 0; sleep 0.2; done
  fail "the daemon's server connection did not become $1"
}
