#!/usr/bin/env bash
# The install layout: `cmake --install` of this build into a fresh prefix
# gives bin/siox, bin/siox-daemon, bin/siox-server, bin/siox-testbed, the
# public headers, libsiox-client with its pkg-config file (siox-client.pc,
# relocatable) and the layer libraries, which resolve
# libsiox-client from the prefix (not from the build tree). The installed
# `siox run` preloads the installed layers, and a program run under it is
# traced by a real daemon and server into the warehouse.
. "$(dirname "$0")/lib.sh"
# A sanitizer build installs sanitized libraries: the plain programs here
# load them without the runtime first.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:verify_asan_link_order=0"
BUILD=$(cd "$(dirname "$SIOX_CLI")/.." && pwd)
P="$T/prefix"
cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1 || { cat "$T/install.log" >&2; fail "cmake --install failed"; }
LIBDIR=$(dirname "$(find "$P" -name 'libsiox-posix.so' | head -1)")
[ -n "$LIBDIR" ] && [ -d "$LIBDIR" ] || fail "no libsiox-posix.so under $P"
for f in bin/siox bin/siox-daemon bin/siox-server bin/siox-testbed include/siox/siox.h include/siox/siox_ontology.h; do
  [ -e "$P/$f" ] || fail "$f is not installed"
done
for l in client posix mpi hdf5; do
  [ -e "$LIBDIR/libsiox-$l.so" ] || { [ "$l" = mpi ] || [ "$l" = hdf5 ]; } || fail "libsiox-$l.so is not installed"
done
# The preload carries the client inside (one DSO on the hot path); it must
# not also load a second copy.
! ldd "$LIBDIR/libsiox-posix.so" | grep -q libsiox-client || fail "libsiox-posix.so still links libsiox-client"
nm -D --defined-only "$LIBDIR/libsiox-posix.so" | grep -qw siox_activity_start ||
  fail "libsiox-posix.so does not export the client API the other layers bind to"
# The other layers find libsiox-client in the prefix, whatever LD_LIBRARY_PATH says.
for so in "$LIBDIR"/libsiox-mpi.so "$LIBDIR"/libsiox-hdf5.so; do
  [ -e "$so" ] || continue
  got=$(ldd "$so" | awk '/libsiox-client/ {print $3}')
  [ "$got" = "$LIBDIR/libsiox-client.so.0" ] || fail "$(basename "$so") resolves libsiox-client to '$got', want $LIBDIR/libsiox-client.so.0"
done
# A program compiled against the installed header and library.
cat >"$T/app.c" <<'C'
#include <siox/siox.h>
int main(void) { siox_unid n; return siox_node_register("h", "app", NULL, &n) == 0 ? 0 : 1; }
C
cc -I"$P/include" "$T/app.c" -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lsiox-client -o "$T/app" 2>"$T/cc.err" \
  || { cat "$T/cc.err" >&2; fail "cannot build against the installed header and library"; }
SIOX_SOCKET="$T/none.sock" "$T/app" || fail "a program linked to the installed libsiox-client failed"
# The same through pkg-config, as a layer built outside this tree would: the
# .pc file finds the prefix from where it lies, and the layers' header is there.
[ -e "$P/include/siox/siox_internal.h" ] || fail "include/siox/siox_internal.h (the layers' header) is not installed"
cat >"$T/layer.c" <<'C'
#include <siox/siox.h>
#include <siox/siox_internal.h>
int main(void) { siox_unid n; return siox_internal_in_library() || siox_node_register("h", "app", NULL, &n) != 0; }
C
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
flags=$(pkg-config --cflags --libs siox-client) || fail "pkg-config does not know siox-client (PKG_CONFIG_PATH=$PKG_CONFIG_PATH)"
pkg-config --modversion siox-client | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$' || fail "siox-client.pc has no version"
# shellcheck disable=SC2086 # the flags are words
cc "$T/layer.c" $flags -Wl,-rpath,"$LIBDIR" -o "$T/layer" 2>"$T/cc.err" \
  || { cat "$T/cc.err" >&2; fail "cannot build with \`pkg-config --cflags --libs siox-client\` ($flags)"; }
SIOX_SOCKET="$T/none.sock" "$T/layer" || fail "a program built with pkg-config's flags failed"
unset PKG_CONFIG_PATH

# The installed siox run, against the installed daemon and server.
SIOX_SERVER="$P/bin/siox-server" SIOX_DAEMON="$P/bin/siox-daemon"
start_server
start_daemon
SIOX_CLI="$P/bin/siox"
ASAN_RT=$(ldd "$SIOX_CLI" | awk '/libasan|libubsan/ {printf "%s%s", sep, $3; sep=":"}')
export LD_PRELOAD=$ASAN_RT
SIOX_JOB_ID="install-$$" "$SIOX_CLI" run --socket "$SIOX_SOCKET" --layers posix -- \
  sh -c 'echo "$LD_PRELOAD" >"$1"; dd if=/dev/zero of="$2" bs=4096 count=3 status=none' sh "$T/preload" "$T/out" \
  || fail "the installed siox run failed"
grep -q "$LIBDIR/libsiox-posix.so" "$T/preload" || fail "siox run preloaded '$(cat "$T/preload")', not the installed layer"
unset LD_PRELOAD
n=0
for _ in $(seq 100); do
  n=$(sql "SELECT count(*) FROM activities a JOIN processes p USING (proc_id) JOIN activity_types t USING (type_id)
           WHERE p.job = 'install-$$' AND p.exe LIKE '%/dd' AND t.name = 'write'")
  [ "$n" -ge 3 ] && break
  sleep 0.2
done
[ "$n" -eq 3 ] || fail "$n write activities of dd under the installed siox run, want 3"
log "installed layout works: $LIBDIR"
