#!/usr/bin/env bash
# System test (a): the whole stack (siox-server, siox-daemon, a 4-brick
# GlusterFS testbed with SIOX translators) and the 4-rank HDF5 / MPI-IO /
# POSIX workload under `siox run --layers posix,mpi,hdf5 -- mpirun ...`.
# Three runs, each with a randomly chosen brick slowed by debug/delay-gen:
# `siox blame` of the slowest application-level POSIX write of the run (one
# the program made itself, not under MPI-IO; the workload writes one such
# file on every brick) and of the slowest collective H5Dwrite must name
# exactly that brick every time. Needs root and /dev/fuse (else 77).
. "$(dirname "$0")/lib.sh"
skip_unless_fuse_testbed
. "$(dirname "$0")/sys_lib.sh"
sys_start
for run in 1 2 3; do
  slow=$((RANDOM % BRICKS + 1)) job="sys-blame-$$-$run"
  tb_start "$slow" "$job"
  pick_files "r$run"
  log "run $run: brick $slow slowed by $DELAY_US us"
  run_workload "$job" "$T/workload$run.out" "$SIOX_CLI" run --layers posix,mpi,hdf5 --socket "$SIOX_SOCKET" --
  wait_finalized "$job" 4
  wait_links
  aid=$(slowest_app_write "$job")
  [ -n "$aid" ] || fail "no application-level POSIX write in run $run"
  blames_brick "$aid" "$slow" "run $run's pwrite"
  log "run $run: blame of the slowest pwrite ($aid) names brick $slow"
  # The slowest collective H5Dwrite: its time hides behind a trailing
  # MPI_File_set_view, the inode lock and FUSE's pieces; blame must still
  # reach the slowed brick.
  siox_cli top --job "$job" --layer HDF5 --name H5Dwrite -n 1 --json >"$T/top$run.json" || fail "siox top failed"
  h5=$(json_get "$T/top$run.json" 'j["activities"][0]["aid"]')
  blames_brick "$h5" "$slow" "run $run's H5Dwrite"
  log "run $run: blame of the slowest H5Dwrite ($h5) names brick $slow"
done
log "sys blame test passed"
