#!/usr/bin/env bash
# Hint delivery with hint sets inserted by SQL (issue 4 item 4, tests a and b):
# real siox-server (knowledge base) and siox-daemon, 4 ranks of
# siox-strided-writes (romio321) under mpirun with libsiox-mpi and
# libsiox-posix preloaded and SIOX_HINTS=1.
#   run 1: no hint set yet -> every open records hints_status "none" and the
#          MPI_Info shows no SIOX key; ROMIO data-sieves (POSIX reads under
#          MPI_File_write).
#   two sets for the executable: one for other arguments, one for exactly
#   this command line and the file's pattern (digits -> #); the exact one
#   must win.
#   run 2 (another file of the same pattern): MPI_File_get_info shows the
#   set's keys, except cb_buffer_size, which the program set itself (the
#   user's value wins); every open records hints_status "applied", the set's
#   id and exactly the keys SIOX added; and the layer below shows the hint in
#   effect: with romio_ds_write=disable no POSIX read happens under
#   MPI_File_write, and each block is its own write.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kb_delivery_lib.sh"
[ -n "${SIOX_POSIX_LIB:-}" ] || fail "libsiox-posix is not built (SIOX_POSIX_LIB unset)"
D=/dev/shm/siox-kbd.$$
mkdir -p "$D"
trap 'rm -rf "$D"; cleanup' EXIT
BLOCKS=16 REPEAT=2
WL=(--blocks $BLOCKS --repeat $REPEAT --info cb_buffer_size=65536)

start_server
# TTL 1 s: run 1's "none" must not be served to run 2 from the cache.
start_daemon "" --batch-ms 50 --hints-ttl 1
wait_uplink 1
export SIOX_HINTS=1

log "run 1: no hint set"
JOB=run1 strided "$T/run1.out" "$D/out.1.dat" "${WL[@]}"
[ -z "$(info_of "$T/run1.out" romio_ds_write)" ] || fail "run 1 shows romio_ds_write without a hint set"
[ "$(info_of "$T/run1.out" cb_buffer_size)" = 65536 ] || fail "run 1 lost the program's cb_buffer_size"
wait_opens run1
[ "$(open_attr run1 mpi/hints_status | sort -u)" = none ] || fail "run 1 opens: $(open_attr run1 mpi/hints_status)"

log "hint sets by SQL"
pattern=$(kb_pattern "$D/out.1.dat")
args2="$SIOX_STRIDED $D/out.2.dat --print-info ${WL[*]}"
other=$(insert_hint_set "$SIOX_STRIDED" "--some other args" "$pattern" \
  '{"romio_ds_write": "enable", "ind_wr_buffer_size": "4096"}')
exact=$(insert_hint_set "$SIOX_STRIDED" "$args2" "$pattern" \
  '{"romio_ds_write": "disable", "cb_buffer_size": "1048576", "romio_cb_write": "disable"}')
[ -n "$other" ] && [ -n "$exact" ] || fail "could not insert the hint sets"
sleep 1.2 # the daemon's cache TTL

log "run 2: set $exact expected"
JOB=run2 strided "$T/run2.out" "$D/out.2.dat" "${WL[@]}"
[ "$(info_of "$T/run2.out" romio_ds_write)" = disable ] ||
  fail "run 2 MPI_File_get_info: romio_ds_write '$(info_of "$T/run2.out" romio_ds_write)', want disable (set $exact)"
[ "$(info_of "$T/run2.out" romio_cb_write)" = disable ] || fail "run 2 MPI_File_get_info lacks romio_cb_write=disable"
[ "$(info_of "$T/run2.out" cb_buffer_size)" = 65536 ] ||
  fail "run 2 cb_buffer_size '$(info_of "$T/run2.out" cb_buffer_size)': the program's 65536 was overridden"
[ -z "$(info_of "$T/run2.out" ind_wr_buffer_size)" ] || fail "run 2 got a key of the other-arguments set"
wait_opens run2
[ "$(open_attr run2 mpi/hints_status | sort -u)" = applied ] || fail "run 2 opens: $(open_attr run2 mpi/hints_status)"
[ "$(open_attr run2 mpi/hint_set | sort -u)" = "$exact" ] || fail "run 2 hint_set $(open_attr run2 mpi/hint_set), want $exact"
applied=$(open_attr run2 mpi/hints_applied | sort -u)
[ "$applied" = "romio_ds_write=disable;romio_cb_write=disable" ] ||
  [ "$applied" = "romio_cb_write=disable;romio_ds_write=disable" ] || fail "run 2 hints_applied '$applied'"
hints=$(open_attr run2 mpi/hints | sort -u)
case "$hints" in *cb_buffer_size=65536*romio_ds_write=disable* | *romio_ds_write=disable*cb_buffer_size=65536*) ;;
*) fail "run 2 mpi/hints (get_info) '$hints'" ;; esac

log "the layer below: POSIX calls under MPI_File_write"
sleep 1 # the POSIX records travel in the same batches; let the last one land
q_posix() { # JOB CALL-NAMES: POSIX calls of that kind under the job's MPI_File_write calls
  sql "SELECT count(*) FROM activities c JOIN activities w ON w.aid = c.parent_aid
       JOIN activity_types tc ON tc.type_id = c.type_id JOIN activity_types tw ON tw.type_id = w.type_id
       JOIN processes p ON p.proc_id = w.proc_id
       WHERE tw.name = 'MPI_File_write' AND p.job = '$1' AND tc.name IN ($2)"
}
reads1=$(q_posix run1 "'read','pread','pread64','readv'")
reads2=$(q_posix run2 "'read','pread','pread64','readv'")
writes2=$(q_posix run2 "'write','pwrite','pwrite64','writev'")
log "run 1: $reads1 POSIX reads under MPI_File_write; run 2: $reads2 reads, $writes2 writes"
[ "$reads1" -gt 0 ] || fail "run 1 (ROMIO default) shows no data-sieving reads under MPI_File_write"
[ "$reads2" -eq 0 ] || fail "run 2 (romio_ds_write=disable applied) still reads under MPI_File_write: $reads2"
[ "$writes2" -eq $((RANKS * BLOCKS * REPEAT)) ] ||
  fail "run 2: $writes2 POSIX writes under MPI_File_write, want one per block ($((RANKS * BLOCKS * REPEAT)))"
log "ok"
