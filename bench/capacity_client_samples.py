#!/usr/bin/env python3
"""What the capacity model's client lines are fitted on, per job and brick
(capacity/README.md "The client's part per brick: tried, measured, no gain").

  capacity_client_samples.py T [JOB_PREFIX]

T is a kept bench temp dir (SIOX_KEEP_TMP=1 bench/bench_capacity_validate.sh;
its PostgreSQL running again: pg_ctl -D T/server/pg start as postgres). For
each job (by the time window of its POSIX activities), fop (writev, readv),
the brick that served the client's request (its linked brick activity) and
whether another request of the client was in flight when it started
("conc": it may have waited for the brick behind it; "alone"), prints the
samples' count, median size, the client's exclusive time (its activity minus
its brick's: what siox_cap_model_fit gets) as median and mean, and the
brick's own time. Then, per job, the volume's POSIX pread/pwrite calls: count,
mean size, median duration and the time per call no client request was in
flight (the model's kernel's part, capacity/cap_kernel.c).
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


def covered(busy, starts, lo, hi):
    i, c = max(0, bisect.bisect_right(starts, lo) - 1), 0
    while i < len(busy) and busy[i][0] < hi:
        c += max(0, min(hi, busy[i][1]) - max(lo, busy[i][0]))
        i += 1
    return c


jobs = [(j, int(s), int(e)) for j, s, e in q(
    "select p.job, min(a.start_ns), max(a.end_ns) from activities a join processes p using(proc_id)"
    " join nodes n on n.node_id=a.node_id where n.swid='POSIX' and p.job <> '' group by 1 order by 2")
    if j.startswith(PREFIX)]


def job_of(t):
    return next((j for j, s, e in jobs if s - 1000000 <= t <= e + 1000000), None)


rows = q(f"""select t.name, a.start_ns, a.end_ns, coalesce({BYTES}, 0),
  (select max(c.end_ns-c.start_ns) from causal_links l join activities c on c.aid=l.child_aid
     join nodes cn on cn.node_id=c.node_id where l.parent_aid=a.aid and cn.swid='GlusterFS-brick'),
  (select min(cn.hwid) from causal_links l join activities c on c.aid=l.child_aid
     join nodes cn on cn.node_id=c.node_id where l.parent_aid=a.aid and cn.swid='GlusterFS-brick')
 from activities a join nodes n on n.node_id=a.node_id join activity_types t on t.type_id=a.type_id
 where n.swid='GlusterFS-client' and a.err=0 order by a.start_ns""")
req = [(int(r[1]), int(r[2])) for r in rows]
starts = [s for s, _ in req]
groups = {}
for name, s, e, b, brick_ns, brick in rows:
    if name not in ("writev", "readv") or not brick_ns:
        continue
    s, e, b, brick_ns = int(s), int(e), int(b), int(brick_ns)
    j = job_of(s)
    if j is None:
        continue
    i = bisect.bisect_left(starts, s)
    conc = any(req[k][1] > s for k in range(max(0, i - 64), i))
    groups.setdefault((j, name, brick.split(":")[0], "conc" if conc else "alone"), []).append((b, e - s - brick_ns, brick_ns))
for k in sorted(groups):
    v = groups[k]
    ex = [x[1] for x in v]
    print(f"{k[0]:22s} {k[1]:6s} {k[2]:8s} {k[3]:5s} n {len(v):5d} size med {st.median([x[0] for x in v]) / 1024:.0f} KiB"
          f" client excl med {st.median(ex) / 1e3:.0f} us mean {st.mean(ex) / 1e3:.0f} us;"
          f" brick med {st.median([x[2] for x in v]) / 1e3:.0f} us")

busy = merge(req)
bstarts = [b[0] for b in busy]
calls = q(f"""select p.job, t.name, a.start_ns, a.end_ns, {BYTES} from activities a join processes p using(proc_id)
 join nodes n on n.node_id=a.node_id join activity_types t on t.type_id=a.type_id
 where n.swid='POSIX' and t.name in ('pread','pwrite') and a.err=0 and {BYTES} > 0
   and exists (select 1 from activities c join nodes cn on cn.node_id=c.node_id join activity_types ct on ct.type_id=c.type_id
     where cn.swid='GlusterFS-client' and ct.name in ('readv','writev') and c.start_ns>=a.start_ns and c.start_ns<a.end_ns)""")
byjob = {}
for j, name, s, e, b in calls:
    if j.startswith(PREFIX):
        byjob.setdefault((j, name), []).append((int(s), int(e), int(b)))
for (j, name), v in sorted(byjob.items()):
    out = sum((e - s) - covered(busy, bstarts, s, e) for s, e in merge([(s, e) for s, e, _ in v]))
    print(f"{j:22s} {name:6s} calls {len(v):5d} mean {st.mean([x[2] for x in v]) / 2**20:.2f} MiB"
          f" duration med {st.median([e - s for s, e, _ in v]) / 1e3:.0f} us;"
          f" no client request in flight {out / len(v) / 1e3:.0f} us per call")
