#!/usr/bin/env bash
# Builds SIOX twice (release, and ASan+UBSan) and runs every test in both:
# cmocka unit tests and the integration tests that drive the real binaries
# (daemon, server, private PostgreSQL). Exits non-zero if anything fails.
#   scripts/test.sh            everything
#   scripts/test.sh -L unit    only one label (passed through to ctest)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/install-deps.sh"

"$top/scripts/build.sh" "$top/build"
"$top/scripts/build.sh" "$top/build-asan" -DSIOX_SANITIZE=ON

# ASan: abort on the first error, report leaks in our programs.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
for dir in build build-asan; do
  echo "=== ctest in $dir"
  (cd "$top/$dir" && ctest --output-on-failure --timeout 600 "$@") || status=1
done
exit $status
