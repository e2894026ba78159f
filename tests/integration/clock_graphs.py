#!/usr/bin/env python3
"""Summarizes the `siox graph --json` trees of one chain run (test_clock_shift.sh).

usage: clock_graphs.py GRAPH.json...

Each tree is an app write -> fs-client write -(implicit)-> server
handle_write -> device write. Prints one JSON object: the number of trees,
of implicit links, of those linked "inside" (no flags) with confidence 1,
the fs-client writes' exclusive times (ms), and how far each handle_write
lies outside its fs-client write (ms, 0 when inside), as the warehouse's
corrected times place them.
"""
import json
import sys


def find(node, swid):
    if node.get("swid") == swid:
        return node
    for c in node.get("children", []):
        hit = find(c, swid)
        if hit:
            return hit
    return None


def main():
    out = {"trees": 0, "implicit": 0, "inside_certain": 0, "fs_exclusive_ms": [], "outside_ms": []}
    for path in sys.argv[1:]:
        g = json.load(open(path))
        root = g.get("root", g)
        out["trees"] += 1
        fs = find(root, "fs-client")
        if not fs:
            continue
        out["fs_exclusive_ms"].append(fs["exclusive_ns"] / 1e6)
        for c in fs.get("children", []):
            link = c.get("link") or {}
            if link.get("kind") != "implicit":
                continue
            out["implicit"] += 1
            if not link.get("flags") and abs(link.get("confidence", 0) - 1.0) < 1e-6:
                out["inside_certain"] += 1
            before = fs["start_ns"] - c["start_ns"]
            after = c["end_ns"] - fs["end_ns"]
            out["outside_ms"].append(max(0, before, after) / 1e6)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
