#!/usr/bin/env python3
"""The capacity model's kernel part per call, per job: how the calls' shares
are spread and what each estimator makes of them (capacity/README.md "The
kernel's part", "Robust per call").

  capacity_kernel_calls.py T [JOB_PREFIX]

T is a kept bench temp dir (SIOX_KEEP_TMP=1 bench/bench_capacity_validate.sh;
its PostgreSQL running again: pg_ctl -D T/server/pg start as postgres). Per
job (the time window of its POSIX activities) and class (pread, pwrite on
the volume: a call a client readv/writev started in), each call's share of
the time with no client request in flight (a moment k calls of the class
were in progress counts 1/k to each; cap_kernel.c) is computed as the model
does, over the job's own window, and printed as quantiles, the plain mean
(the estimate before), the robust estimate (siox_cap_fit_robust's rule on a
constant: calls beyond 3 x 1.4826 MAD of the median left out until none more
leave, never below half) and its count left out.
"""
import bisect
import statistics as st
import sys

from capacity_wh import BYTES, conninfo, merge, query

T = sys.argv[1]
PREFIX = sys.argv[2] if len(sys.argv) > 2 else ""
CI = conninfo(T)


def q(sql):
    return query(CI, sql)


def shares(calls, busy):
    """Each call's share of the time no request was in flight (cap_kernel.c's share_curve)."""
    ev = sorted([(s, 1) for s, e in calls] + [(e, -1) for s, e in calls] + [(b, 0) for iv in busy for b in iv])
    ts, F, active, acc, j, i = [], [], 0, 0.0, 0, 0
    while i < len(ev):
        now = ev[i][0]
        if ts and active > 0:
            lo = ts[-1]
            while j < len(busy) and busy[j][1] <= lo:
                j += 1
            inside = j < len(busy) and busy[j][0] <= lo and busy[j][1] >= now
            if not inside:
                acc += (now - lo) / active
        ts.append(now)
        F.append(acc)
        while i < len(ev) and ev[i][0] == now:
            active += ev[i][1]
            i += 1
    at = lambda x: F[bisect.bisect_right(ts, x) - 1]
    return [at(e) - at(s) for s, e in calls]


def robust(y):
    keep = list(y)
    while True:
        med = st.median(keep)
        scale = max(1.0, 1.4826 * st.median([abs(v - med) for v in keep]))
        # the kept mean is the fitted constant; residuals are judged from it as in cap_fit_robust.c
        a = st.mean(keep)
        r = [v - a for v in keep]
        mr = st.median(r)
        nk = [v for v, rr in zip(keep, r) if abs(rr - mr) <= 3 * scale]
        if len(nk) == len(keep) or 2 * len(nk) < len(y):
            return st.mean(keep), len(y) - len(keep)
        keep = nk


jobs = [(j, int(s), int(e)) for j, s, e in q(
    "select p.job, min(a.start_ns), max(a.end_ns) from activities a join processes p using(proc_id)"
    " join nodes n on n.node_id=a.node_id where n.swid='POSIX' and p.job <> '' group by 1 order by 2")
    if j.startswith(PREFIX)]
req = merge([(int(s), int(e)) for s, e in q(
    "select a.start_ns, a.end_ns from activities a join nodes n on n.node_id=a.node_id where n.swid='GlusterFS-client'")])
calls = q(f"""select p.job, t.name, a.start_ns, a.end_ns from activities a join processes p using(proc_id)
 join nodes n on n.node_id=a.node_id join activity_types t on t.type_id=a.type_id
 where n.swid='POSIX' and t.name in ('pread','pwrite') and a.err=0 and {BYTES} > 0
   and exists (select 1 from activities c join nodes cn on cn.node_id=c.node_id join activity_types ct on ct.type_id=c.type_id
     where cn.swid='GlusterFS-client' and ct.name in ('readv','writev') and c.start_ns>=a.start_ns and c.start_ns<a.end_ns)""")
byjob = {}
for j, name, s, e in calls:
    if j.startswith(PREFIX):
        byjob.setdefault((j, name), []).append((int(s), int(e)))
for (j, name), v in sorted(byjob.items(), key=lambda kv: (next((s for jj, s, e in jobs if jj == kv[0][0]), 0), kv[0][1])):
    y = sorted(shares(v, req))
    n = len(y)
    qt = lambda p: y[min(n - 1, int(p * n))] / 1e6
    rb, out = robust(y)
    top = sum(y[int(0.99 * n):]) / sum(y) if sum(y) else 0
    print(f"{j:24s} {name:6s} calls {n:5d} ms/call: p10 {qt(.1):.3f} p50 {qt(.5):.3f} p90 {qt(.9):.3f} p99 {qt(.99):.3f}"
          f" max {y[-1] / 1e6:.1f}; mean {st.mean(y) / 1e6:.3f} robust {rb / 1e6:.3f} ({out} out);"
          f" top 1% of calls {100 * top:.0f}% of the time")
