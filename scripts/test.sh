#!/usr/bin/env bash
# Builds SIOX twice (release, and ASan+UBSan) and runs every test in both:
# cmocka unit tests and the integration tests that drive the real binaries
# (daemon, server, private PostgreSQL). Then builds the libFuzzer targets
# (clang, build-fuzz) and runs each for SIOX_FUZZ_SECONDS (default 60; 0
# skips the stage), label fuzz. Exits non-zero if anything fails; a fuzz
# failure prints the path of the input that crashed.
#   scripts/test.sh            everything
#   scripts/test.sh -L unit    only one label (passed through to ctest)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"

"$top/scripts/build.sh" "$top/build"
"$top/scripts/build.sh" "$top/build-asan" -DSIOX_SANITIZE=ON
fuzz=1
[ "${SIOX_FUZZ_SECONDS:-60}" != 0 ] || fuzz=0
if [ $fuzz = 1 ]; then
  # Only the fuzz targets (and what they link) are built in this tree.
  CC=clang cmake -S "$top" -B "$top/build-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIOX_FUZZ=ON >/dev/null
  cmake --build "$top/build-fuzz" -j "$(nproc)" --target siox-fuzz
fi

# ASan: abort on the first error, report leaks in our programs.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
for dir in build build-asan; do
  echo "=== ctest in $dir"
  (cd "$top/$dir" && ctest --output-on-failure --timeout 600 "$@") || status=1
done
if [ $fuzz = 1 ]; then
  echo "=== ctest in build-fuzz (label fuzz, ${SIOX_FUZZ_SECONDS:-60} s per target)"
  (cd "$top/build-fuzz" && ctest --output-on-failure -L fuzz "$@") || status=1
fi
exit $status
