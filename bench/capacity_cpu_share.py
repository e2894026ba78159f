#!/usr/bin/env python3
"""Where a testbed run's CPU goes (capacity/README.md, "The client node's CPU").

  capacity_cpu_share.py sample LOG
      every 0.2 s, every process's CPU time (utime + stime, all its threads)
      and /proc/stat's cpu line, appended to LOG as deltas; run it in the
      background beside bench_capacity_validate.sh (SIOX_KEEP_TMP=1) and
      stop it by its pid.
  capacity_cpu_share.py share LOG T0 T1 TDIR
      core-seconds per group of processes in [T0, T1] (epoch seconds): the
      testbed's (those whose command line, or an ancestor's, names TDIR, the
      bench's kept temp dir) as ranks, FUSE client, bricks, SIOX's warehouse
      (PostgreSQL, siox-server, siox-daemon), and everything else; the
      machine's idle time; prints NAME VALUE UNIT lines.

A process that lives less than one interval is missed (its time shows in
/proc/stat only); one that exits loses its last interval.
"""
import os
import sys
import time


def sample(path):
    prev, seen = {}, set()
    with open(path, "a") as out:
        while True:
            with open("/proc/stat") as f:
                cpu = f.readline().split()[1:9]
            lines = ["T %.3f %s" % (time.time(), " ".join(cpu))]
            cur = {}
            for p in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{p}/stat") as f:
                        s = f.read()
                    if p not in seen:
                        with open(f"/proc/{p}/cmdline", "rb") as f:
                            cmd = f.read().replace(b"\0", b" ")[:300].decode(errors="replace")
                except OSError:
                    continue
                r = s.rfind(")")
                fields = s[r + 2:].split()
                cur[p] = int(fields[11]) + int(fields[12])
                if p not in seen:
                    seen.add(p)
                    lines.append("P %s %s %s | %s" % (p, fields[1], s[s.find("(") + 1:r].replace(" ", "_"), cmd))
                d = cur[p] - prev[p] if p in prev else (cur[p] if prev else 0)
                if d > 0:
                    lines.append("C %s %d" % (p, d))
            prev = cur
            out.write("\n".join(lines) + "\n")
            out.flush()
            time.sleep(0.2)


def group(p, procs, tdir):
    """The group of pid p: testbed (TDIR in its or an ancestor's command line) or not."""
    ppid, comm, cmd = procs.get(p, ("0", "?", ""))
    mine, q, hops = False, p, 0
    while q in procs and hops < 32:
        if tdir in procs[q][2]:
            mine = True
            break
        q, hops = procs[q][0], hops + 1
    if not mine:
        return "other"
    if comm.startswith("glusterfs"):
        return "client" if "client.vol" in cmd else "bricks" if "brick" in cmd else "other"
    if "siox-replay" in cmd or "siox-strided" in cmd or "siox-io-workload" in cmd:
        return "ranks"
    if comm == "postgres" or "siox-server" in cmd or "siox-daemon" in cmd:
        return "warehouse"
    return "other"


def share(path, t0, t1, tdir):
    procs, ticks, stat, inwin = {}, {}, [], False
    with open(path) as f:
        for line in f:
            k, _, rest = line.partition(" ")
            if k == "T":
                v = rest.split()
                inwin = t0 <= float(v[0]) <= t1
                if inwin:
                    stat.append([int(x) for x in v[1:]])
            elif k == "P":
                pid, ppid, comm, cmd = rest.split(" ", 3)
                procs[pid] = (ppid, comm, cmd)
            elif k == "C" and inwin:
                pid, d = rest.split()
                ticks[pid] = ticks.get(pid, 0) + int(d)
    hz = os.sysconf("SC_CLK_TCK")
    tot = {}
    for pid, d in ticks.items():
        g = group(pid, procs, tdir)
        tot[g] = tot.get(g, 0) + d / hz
    avail = (os.cpu_count() or 1) * (t1 - t0)  # core-seconds of the machine in the window
    idle = (stat[-1][3] - stat[0][3]) / hz if len(stat) > 1 else 0.0
    print(f"capacity_cpu_window_s {t1 - t0:.2f} s")
    print(f"capacity_cpu_idle_core_s {idle:.2f} core-s")
    for g in ("ranks", "client", "bricks", "warehouse", "other"):
        print(f"capacity_cpu_{g}_core_s {tot.get(g, 0):.2f} core-s")
    run = sum(tot.get(g, 0) for g in ("ranks", "client", "bricks"))
    print(f"capacity_cpu_run_share_percent {100 * run / avail:.1f} %")
    print(f"capacity_cpu_warehouse_share_percent {100 * tot.get('warehouse', 0) / avail:.1f} %")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "sample":
        sample(sys.argv[2])
    elif len(sys.argv) == 6 and sys.argv[1] == "share":
        share(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    else:
        sys.exit(__doc__)
