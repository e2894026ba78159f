#!/usr/bin/env bash
# The committed seed corpus is what gen_corpus.c writes today: regenerates it
# into a scratch directory and compares file by file (regression seeds,
# regress_*, are committed by hand and not compared).
#   check_corpus.sh GENERATOR COMMITTED_CORPUS_DIR SCRATCH_DIR
set -euo pipefail
gen=$1 committed=$2 scratch=$3
rm -rf "$scratch"
"$gen" "$scratch"
status=0
while IFS= read -r f; do
  rel=${f#"$scratch"/}
  if ! cmp -s "$f" "$committed/$rel"; then
    echo "seed $rel differs from what $(basename "$gen") writes; regenerate: $gen $committed"
    status=1
  fi
done < <(find "$scratch" -type f | sort)
[ $status = 0 ] && echo "seed corpus matches the generator ($(find "$scratch" -type f | wc -l) files)"
exit $status
