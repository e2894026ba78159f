#!/usr/bin/env python3
"""Checks a `siox export --format chrome-trace` file: it parses, it fits
chrome_trace.schema.json, every track an event uses is named, every flow id
has exactly one start and one finish, each bound inside a slice of its own
track (the parent's at the start, the child's starting at the finish), and
the counts match what the caller expects.

usage: check_chrome_trace.py TRACE SCHEMA [--slices N] [--flows N] [--implicit N]
"""
import argparse
import collections
import json
import sys

import jsonschema


def fail(msg):
    print("check_chrome_trace: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("schema")
    ap.add_argument("--slices", type=int)
    ap.add_argument("--flows", type=int)
    ap.add_argument("--implicit", type=int)
    a = ap.parse_args()
    with open(a.trace) as f:
        doc = json.load(f)
    with open(a.schema) as f:
        jsonschema.validate(doc, json.load(f))
    ev = doc["traceEvents"]
    procs = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    slices = collections.defaultdict(list)
    aids = set()
    for e in ev:
        if e["ph"] != "X":
            continue
        if e["pid"] not in procs or (e["pid"], e["tid"]) not in threads:
            fail("slice %s on an unnamed track %s/%s" % (e["args"]["aid"], e["pid"], e["tid"]))
        if e["args"]["aid"] in aids:
            fail("activity %s exported twice" % e["args"]["aid"])
        aids.add(e["args"]["aid"])
        slices[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    starts, finishes = {}, {}
    for e in ev:
        if e["ph"] not in ("s", "f"):
            continue
        side = starts if e["ph"] == "s" else finishes
        if e["id"] in side:
            fail("flow id %d has two '%s' events" % (e["id"], e["ph"]))
        side[e["id"]] = e
    if set(starts) != set(finishes):
        fail("unpaired flow ids: %s" % sorted(set(starts) ^ set(finishes))[:10])
    eps = 0.0005  # the decimal text is exact; json floats round at the ns
    for i, s in starts.items():
        f = finishes[i]
        if s["name"] != f["name"]:
            fail("flow %d is named %r at its start and %r at its finish" % (i, s["name"], f["name"]))
        if s["args"]["parent_aid"] not in aids or s["args"]["child_aid"] not in aids:
            fail("flow %d links an activity not in the export" % i)
        if not any(b - eps <= s["ts"] <= e + eps for b, e in slices[(s["pid"], s["tid"])]):
            fail("flow %d starts outside every slice of its track" % i)
        if not any(abs(b - f["ts"]) <= eps for b, e in slices[(f["pid"], f["tid"])]):
            fail("flow %d finishes where no slice of its track starts" % i)
    n_implicit = sum(1 for s in starts.values() if s["args"]["kind"] == "implicit")
    for what, want, got in (("slices", a.slices, len(aids)), ("flows", a.flows, len(starts)),
                            ("implicit flows", a.implicit, n_implicit)):
        if want is not None and want != got:
            fail("%d %s, expected %d" % (got, what, want))
    print("check_chrome_trace: %d slices, %d flows (%d implicit), %d tracks: ok"
          % (len(aids), len(starts), n_implicit, len(threads)))


main()
