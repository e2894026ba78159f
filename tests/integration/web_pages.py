#!/usr/bin/env python3
"""Checks the pages of `siox web` that headless Chromium dumped against what
the CLI says (test_web.sh, test_sys_web.sh).

usage: web_pages.py DIR JOB RANKS [component]
DIR holds jobs.html, job.html, call.html (and component.html with
"component"), summary.json (`siox summary --job JOB --json`) and blame.json
(`siox blame AID --json` of the call page's AID). Asserts: every page ran
and drew without error; the jobs page lists JOB; the job page's totals are
the summary's and its heatmap has one row per rank (RANKS); the call page
highlights blame's culprit and exactly blame's path, with the evidence."""
import html.parser
import json
import sys


class Dom(html.parser.HTMLParser):
    VOID = ("br", "img", "input", "meta", "link", "hr", "wbr")

    def __init__(self, path):
        super().__init__()
        self.els, self.stack = [], []
        self.feed(open(path).read())

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        a["_tag"], a["_in"] = tag, [x.get("id") for x in self.stack if x.get("id")]
        self.els.append(a)
        if tag not in self.VOID:
            self.stack.append(a)

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def body(self):
        return next(e for e in self.els if e["_tag"] == "body")

    def cls(self, c):
        return [e for e in self.els if c in (e.get("class") or "").split()]


def main(d, job, ranks, pages):
    for name in pages:
        b = Dom(f"{d}/{name}.html").body()
        assert b.get("data-ready") == name and "data-error" not in b, f"{name} page: {b}"
    assert any(e.get("data-job") == job for e in Dom(f"{d}/jobs.html").els), "the jobs page does not list the job"
    s = json.load(open(f"{d}/summary.json"))
    page = Dom(f"{d}/job.html")
    tot = {e["data-key"]: e["data-value"] for e in page.cls("total")}
    for k in ("bytes_read", "bytes_written", "io_time_ns", "calls", "activities"):
        assert int(tot[k]) == s["totals"][k], f"job page {k} {tot[k]}, siox summary {s['totals'][k]}"
    assert int(tot["processes"]) == s["processes"] and int(tot["ranks"]) == s["ranks"]
    rows = [e for e in page.cls("heat-row") if "heatmap-bytes" in e["_in"]]
    assert len(rows) == s["ranks"] == ranks, f"heatmap has {len(rows)} rows, the job {s['ranks']} ranks, want {ranks}"
    assert sorted(int(e["data-rank"]) for e in rows) == list(range(ranks))
    bl = json.load(open(f"{d}/blame.json"))
    # Named by peers ("culprit") or by the kind's model ("no-peers"): either way
    # the page must highlight it.
    assert bl.get("culprit"), f"siox blame names no culprit: {bl['verdict']}"
    call = Dom(f"{d}/call.html")
    hi = [e for e in call.cls("culprit") if e["_tag"] == "g"]
    assert len(hi) == 1 and int(hi[0]["data-aid"]) == bl["culprit"]["aid"], \
        f"highlighted {[e.get('data-aid') for e in hi]}, siox blame says {bl['culprit']['aid']}"
    path = {p["aid"] for p in bl["path"]}
    shown = {int(e["data-aid"]) for e in call.cls("on-path") if e["_tag"] == "g"}
    assert shown == path, f"path shown {shown}, blame's {path}"
    assert any(e.get("id") == "evidence" for e in call.els), "no evidence"
    print(f"ok: job totals and {len(rows)} heatmap rows match; culprit {bl['culprit']['aid']} highlighted")


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and sys.argv[4] != "component"):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), ["jobs", "job", "call"] + sys.argv[4:])
