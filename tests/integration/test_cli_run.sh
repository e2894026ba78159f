#!/usr/bin/env bash
# `siox run` (siox-cli/cmd_run.c): the environment it builds (LD_PRELOAD of
# the chosen layers from the build tree after existing entries, SIOX_SOCKET),
# the daemon check, mpirun's -x options, exit statuses. A fake daemon (a
# python unix listener) and a fake mpirun (prints its arguments) stand in
# for the real ones; the system tests run the real stack.
. "$(dirname "$0")/lib.sh"
BUILD=$(cd "$(dirname "$SIOX_CLI")/.." && pwd)
SOCK="$T/fake.sock"
run() { "$SIOX_CLI" run "$@"; }
# A sanitizer build's layers need the ASan runtime first in LD_PRELOAD of the
# (uninstrumented) commands they are preloaded into; siox run keeps it first.
ASAN_RT=$(ldd "$SIOX_CLI" | awk '/libasan|libubsan/ {printf "%s%s", sep, $3; sep=":"}')
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
FIRST="${ASAN_RT:+$ASAN_RT:}/lib/x86_64-linux-gnu/libm.so.6"
export LD_PRELOAD=$FIRST

"$SIOX_CLI" help run | grep -q "^SYNOPSIS" || fail "siox help run prints no manual page"
run --help | grep -q -- "--no-check" || fail "siox run --help lacks --no-check"
"$SIOX_CLI" --help | grep -q "^  run " || fail "siox --help does not list run"

# No daemon: a clear message, exit 1, CMD not run.
set +e
run --socket "$SOCK" -- touch "$T/ran" 2>"$T/err"; rc=$?
set -e
[ $rc -eq 1 ] || fail "no daemon: exit $rc, want 1"
grep -q "no SIOX daemon is running at $SOCK" "$T/err" || fail "no daemon: message was '$(cat "$T/err")'"
[ ! -e "$T/ran" ] || fail "no daemon: the command ran anyway"

# Bad command lines, and a command that cannot be executed.
set +e
run --layers posix,nfs -- true 2>/dev/null; rc1=$?
run --no-check 2>/dev/null; rc2=$?
run --no-check -- "$T/no-such-program" 2>/dev/null; rc3=$?
set -e
[ "$rc1 $rc2 $rc3" = "2 2 127" ] || fail "exit statuses (bad layer, no command, no program) '$rc1 $rc2 $rc3', want '2 2 127'"

# A listening daemon socket: CMD runs with the environment, its status is ours.
python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); time.sleep(300)' "$SOCK" &
PIDS+=($!)
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
set +e
run --socket "$SOCK" --layers posix,hdf5 -- \
  sh -c 'printf "%s\n%s\n" "$LD_PRELOAD" "$SIOX_SOCKET" >"$0"; exit 7' "$T/env"; rc=$?
set -e
[ $rc -eq 7 ] || fail "the command's exit status 7 came back as $rc"
want="$FIRST:$BUILD/instrumentation/hdf5/libsiox-hdf5.so:$BUILD/instrumentation/posix/libsiox-posix.so"
[ "$(sed -n 1p "$T/env")" = "$want" ] || fail "LD_PRELOAD '$(sed -n 1p "$T/env")', want '$want'"
[ "$(sed -n 2p "$T/env")" = "$SOCK" ] || fail "SIOX_SOCKET '$(sed -n 2p "$T/env")', want '$SOCK'"
# A library already listed is not added twice.
env LD_PRELOAD="$FIRST:$BUILD/instrumentation/posix/libsiox-posix.so" "$SIOX_CLI" run --socket "$SOCK" --layers posix -- \
  sh -c 'echo "$LD_PRELOAD"' >"$T/env2"
[ "$(cat "$T/env2")" = "$FIRST:$BUILD/instrumentation/posix/libsiox-posix.so" ] || fail "duplicate preload: $(cat "$T/env2")"

# mpirun gets -x LD_PRELOAD -x SIOX_SOCKET (and SIOX_JOB_ID when set) unless given.
mkdir "$T/bin"
printf '#!/bin/sh\necho "$*"\n' >"$T/bin/mpirun"
chmod +x "$T/bin/mpirun"
args=$(PATH="$T/bin:$PATH" SIOX_JOB_ID=j1 run --socket "$SOCK" --layers posix -- mpirun -np 4 ./app -x)
[ "$args" = "-x LD_PRELOAD -x SIOX_SOCKET -x SIOX_JOB_ID -np 4 ./app -x" ] || fail "mpirun args '$args'"
args=$(PATH="$T/bin:$PATH" env -u SIOX_JOB_ID "$SIOX_CLI" run --socket "$SOCK" --layers posix -- \
  mpirun -x LD_PRELOAD=/x.so -np 2 ./app)
[ "$args" = "-x SIOX_SOCKET -x LD_PRELOAD=/x.so -np 2 ./app" ] || fail "mpirun args with -x given '$args'"
log "siox run test passed"
