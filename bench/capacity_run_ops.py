#!/usr/bin/env python3
"""Where the measured runs of a validate case differ: per repeat, per rank and
kind of operation, the time the replay's ranks spent (capacity/README.md
"Reproducible runs").

  capacity_run_ops.py SIOX DATA_DIR T CASE...

SIOX is the `siox` binary, DATA_DIR its --data-dir (the bench's server dir,
its PostgreSQL running), T the bench's temp dir (its case-NAME.args).
For each case, each measured job's trace is extracted (`siox workload
extract --prefix REPLAY_DIR/`, as validate measures it) and summed per rank
and OP (the workload file's DUR_NS); printed per OP: the slowest rank's
(by I/O time) part and rank 0's part, per repeat, in ms, with the spread
(max - min) over the repeats. A case run with a warm-up (CV_WARMUP=1) lists
the warm-up's jobs (NAME-w-K) first: not measured, shown for the transient.
"""
import collections
import os
import subprocess
import sys

SIOX, DATA, T = sys.argv[1:4]
CASES = sys.argv[4:]


def case_args(name):
    """The case's jobs, its warm-up's first (not measured: case-NAME.warmup), and its replay dir."""
    a = open(os.path.join(T, f"case-{name}.args")).read().split("\n")
    jobs = [a[i + 1] for i, x in enumerate(a) if x == "--measured"]
    w = os.path.join(T, f"case-{name}.warmup")
    if os.path.exists(w):
        jobs = open(w).read().split() + jobs
    rdir = a[a.index("--replay-dir") + 1]
    return jobs, rdir


def sums(job, rdir):
    """{rank: {op: ns}} of the job's trace under rdir."""
    out = os.path.join(T, f"ops-{job}.wl")
    r = subprocess.run([SIOX, "--data-dir", DATA, "workload", "extract", "--job", job, "--prefix", rdir + "/",
                        "-o", out], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"extract {job}: {r.stderr}")
    s = collections.defaultdict(lambda: collections.defaultdict(int))
    for line in open(out):
        f = line.split()
        if f and f[0] == "r":
            s[int(f[1])][f[2]] += int(f[7])
    return s


for name in CASES:
    if not os.path.exists(os.path.join(T, f"case-{name}.args")):
        continue
    jobs, rdir = case_args(name)
    runs = [sums(j, rdir) for j in jobs]
    tot = [{k: sum(v.values()) for k, v in s.items()} for s in runs]
    slow = [max(t, key=t.get) for t in tot]
    ops = sorted({op for s in runs for v in s.values() for op in v})
    print(f"# {name}: runs {' '.join(jobs)}")
    print(f"#   io time (slowest rank): {' '.join(f'{t[r] / 1e6:.0f}' for t, r in zip(tot, slow))} ms;"
          f" slowest rank {' '.join(map(str, slow))}")
    for op in ops:
        sl = [s[r].get(op, 0) / 1e6 for s, r in zip(runs, slow)]
        r0 = [s[0].get(op, 0) / 1e6 for s in runs]
        allr = [[s[k].get(op, 0) / 1e6 for k in sorted(s)] for s in runs]
        print(f"#   {op:10s} slowest {' '.join(f'{x:7.0f}' for x in sl)} (spread {max(sl) - min(sl):6.0f})"
              f"  rank0 {' '.join(f'{x:7.0f}' for x in r0)}"
              f"  per rank {' | '.join(' '.join(f'{x:.0f}' for x in a) for a in allr)}")
