#!/usr/bin/env bash
# Re-validates a kept bench_capacity_validate.sh warehouse (SIOX_KEEP_TMP=1)
# with this build, no new runs: the default model, --kernel-pooled, --read-all and
# --healthy-ls on the cases asis healed fpp_healed 4to2 fpp_4to2, then the
# model's read lines and healthy reference (capacity/README.md "Reads queued
# behind another", "The healthy reference"). The window is the calibration
# job's first activity (floored to the second) to the first replay's, as the
# bench's --since/--until. Starts the kept PostgreSQL as user postgres and
# stops it at exit. Needs root (su postgres); logs in $LOGDIR (/tmp).
#   bench/capacity_revalidate.sh T JOB   (T: /tmp/siox-it.*, JOB: cv-<pid>)
set -euo pipefail
T=$1 JOB=$2 CLI=${SIOX_CLI:-$(cd "$(dirname "$0")/.." && pwd)/build/siox-cli/siox} O=${LOGDIR:-/tmp}
CI=$(cat $T/server/conninfo)
su postgres -c "pg_ctl -D $T/server/pg -l $O/pg-$(basename $T).log -w start" >/dev/null
trap 'su postgres -c "pg_ctl -D $T/server/pg -m fast -w stop" >/dev/null' EXIT
# window: from the calibration job's first POSIX activity (floored to s) to the first replay's
read t0 t1 < <(psql "$CI" -Atc "select (min(a.start_ns) filter (where p.job like '$JOB-cal%'))/1000000000,
  (min(a.start_ns) filter (where p.job not like '$JOB%'))/1000000000
  from activities a join processes p using(proc_id) where p.job <> ''" | tr '|' ' ')
echo "window @$t0 .. @$t1"
cases=()
for n in asis healed fpp_healed 4to2 fpp_4to2; do mapfile -t one <$T/case-$n.args; cases+=("${one[@]}"); done
for v in "" --kernel-pooled ${REVAL_VARIANTS---read-all --healthy-ls}; do
  nice -n 10 $CLI --data-dir $T/server capacity validate --job $JOB --prefix $T/tb1/mnt/job/ --mount $T/tb1/mnt \
    --since @$t0 --until @$t1 "${cases[@]}" $v --json >$O/reval-$(basename $T)${v}.json 2>$O/reval-$(basename $T)${v}.err || true
  python3 -c "
import json,sys,statistics
d=json.load(open(sys.argv[1]))
e=[c['error_pct'] for c in d['cases']]
print(sys.argv[2] or 'default', ' '.join(f\"{c['case']} {c['error_pct']:.1f}% ({c['predicted_io_time_ns']/1e9:.2f}/{c['measured_io_time_ns']/1e9:.2f} s)\" for c in d['cases']), 'median', round(statistics.median(e),1))
" $O/reval-$(basename $T)${v}.json "$v" || cat $O/reval-$(basename $T)${v}.err | tail -3
done
nice -n 10 $CLI --data-dir $T/server capacity model --since @$t0 --until @$t1 | grep -E "readv|read  |healthy reference|^COMPONENT| read " | head -24
