"""Reading a kept capacity bench warehouse, for the bench/capacity_*.py
scripts: T is a kept bench temp dir (SIOX_KEEP_TMP=1
bench/bench_capacity_validate.sh) whose PostgreSQL runs again."""
import subprocess
import sys

# The io/bytes attribute of an activity row aliased a.
BYTES = "a.attr_vals[array_position(a.attr_ids,(select id from ontology where name='io/bytes'))]"


def conninfo(t):
    return open(f"{t}/server/conninfo").read().strip()


def query(ci, sql):
    """Rows of sql as lists of text fields; exits with psql's error."""
    r = subprocess.run(["psql", ci, "-Atqc", sql], capture_output=True, text=True)
    if r.returncode:
        sys.exit(r.stderr)
    return [line.split("|") for line in r.stdout.splitlines() if line]


def merge(iv):
    """The union of intervals (start, end), as sorted disjoint [start, end]."""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out
