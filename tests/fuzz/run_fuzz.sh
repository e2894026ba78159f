#!/usr/bin/env bash
# Runs one libFuzzer target of tests/fuzz for a bounded time (a ctest test,
# label fuzz). Starts from the committed seed corpus, writes what it finds to
# a scratch corpus in the build tree (never into the repository), and fails
# with the reproducer's path if the target crashed, leaked or timed out.
#   run_fuzz.sh TARGET_BINARY SEED_CORPUS_DIR WORK_DIR
#   SIOX_FUZZ_SECONDS   run time (default 60)
set -uo pipefail
bin=$1 seeds=$2 work=$3
secs=${SIOX_FUZZ_SECONDS:-60}
name=$(basename "$bin")
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
log=$work/log
# -timeout: one input taking longer is a hang (generous: ASan on a busy box).
# -rss_limit_mb: well under the machine, so a memory blow-up is a finding.
"$bin" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$work/corpus" "$seeds" >"$log" 2>&1
rc=$?
# The last status line: executions, coverage (cov:), features (ft:), exec/s.
grep -E '^#[0-9]+' "$log" | tail -n 1
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log"
if [ $rc -ne 0 ]; then
  echo "=== $name FAILED (exit $rc); last lines of $log:"
  tail -n 60 "$log"
  for f in "$work"/artifacts/*; do
    [ -e "$f" ] || continue
    echo "=== reproducer: $f"
    echo "    rerun it with: $bin $f"
  done
  exit 1
fi
exit 0
