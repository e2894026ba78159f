/*
 * SIOX explorer: a single page over siox web's JSON API (the CLI's --json
 * documents). Pages by the URL's hash: #/jobs, #/job/J, #/call/AID,
 * #/component/PATTERN. d3 (Debian libjs-d3, v3) draws the call and component
 * pages; it is loaded when one of them is first shown (needD3), not with the
 * page: the job page draws its heatmap itself, so its first render waits for
 * nothing but its one document. Everything large is aggregated by the
 * server (heatmap bins, the causal tree of one call).
 * When a page has drawn what it promises, body gets data-ready=PAGE and
 * data-render-ms (time since navigation start): the tests and the bench
 * read them.
 */
"use strict";

var main = document.getElementById("main");
var pollTimer = null;

function api(path) {
  return fetch("/api/" + path).then(function (r) {
    return r.json().then(function (j) {
      if (!r.ok) throw new Error(j.error || ("HTTP " + r.status));
      return j;
    });
  });
}

/* d3 (240 KB) is parsed only by the pages that draw with it: on the job
 * page its parse would stand between the page and its first render. */
var d3Loaded = null;
function needD3() {
  if (!d3Loaded) d3Loaded = new Promise(function (ok, ko) {
    var sc = document.createElement("script");
    sc.src = "/d3.min.js";
    sc.onload = function () { ok(window.d3); };
    sc.onerror = function () { d3Loaded = null; ko(new Error("cannot load /d3.min.js")); };
    document.head.appendChild(sc);
  });
  return d3Loaded;
}

var SVG = "http://www.w3.org/2000/svg";
function svgEl(tag, attrs, text) {
  var e = document.createElementNS(SVG, tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function el(tag, attrs, text) {
  var e = document.createElement(tag);
  for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function bytes(b) {
  if (b === null || b === undefined) return "-";
  var u = ["B", "KiB", "MiB", "GiB", "TiB"], i = 0;
  while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(1) : b) + " " + u[i];
}

function dur(ns) {
  if (ns === null || ns === undefined) return "-";
  if (ns >= 1e9) return (ns / 1e9).toFixed(3) + " s";
  if (ns >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
  if (ns >= 1e3) return (ns / 1e3).toFixed(1) + " us";
  return ns + " ns";
}

function pct(x) { return (100 * x).toFixed(0) + "%"; }

function ready(page) {
  var ms = Math.round(performance.now());
  document.body.setAttribute("data-ready", page);
  document.body.setAttribute("data-render-ms", ms);
  console.log("siox-ready " + page + " " + ms);
}

function fail(where, e) {
  where.appendChild(el("div", { "class": "err" }, e.message));
  document.body.setAttribute("data-error", e.message);
  console.log("siox-error " + e.message);
}

function table(cols, rows, cls) {
  var t = el("table", cls ? { "class": cls } : {}), h = el("tr");
  cols.forEach(function (c) { h.appendChild(el("th", { "class": c.l ? "l" : "" }, c.t)); });
  t.appendChild(h);
  rows.forEach(function (r) {
    var tr = el("tr");
    cols.forEach(function (c) {
      var td = el("td", { "class": c.l ? "l" : "" }), v = c.f(r);
      if (v instanceof Node) td.appendChild(v); else td.textContent = v;
      tr.appendChild(td);
    });
    t.appendChild(tr);
  });
  return t;
}

/* ---- jobs: triage, refreshed while jobs run ---------------------------- */

function jobsPage() {
  main.innerHTML = "";
  main.appendChild(el("h1", {}, "Jobs"));
  var sort = el("select", { id: "sort" });
  ["newest", "io_time", "bytes", "bandwidth"].forEach(function (s) { sort.appendChild(el("option", { value: s }, s)); });
  var bar = el("p", {}, "sort by ");
  bar.appendChild(sort);
  bar.appendChild(el("span", { "class": "muted" }, "  (refreshed every 2 s: new jobs appear while they run)"));
  main.appendChild(bar);
  var holder = el("div", { id: "jobs" });
  main.appendChild(holder);
  var known = null;
  function load() {
    var q = sort.value === "newest" ? "jobs" : "jobs?sort=" + sort.value;
    api(q).then(function (doc) {
      var seen = {};
      var t = table([
        { t: "job", l: 1, f: function (j) { return el("a", { href: "#/job/" + encodeURIComponent(j.job) }, j.job); } },
        { t: "uid", f: function (j) { return j.uid; } },
        { t: "procs", f: function (j) { return j.processes; } },
        { t: "read", f: function (j) { return bytes(j.bytes_read); } },
        { t: "written", f: function (j) { return bytes(j.bytes_written); } },
        { t: "I/O time", f: function (j) { return dur(j.io_time_ns); } },
        { t: "bandwidth", f: function (j) { return bytes(j.bandwidth_bps) + "/s"; } },
        { t: "findings", f: function (j) { return j.findings; } },
        { t: "worst component", l: 1, f: function (j) { return j.worst_component || "-"; } },
        { t: "small", f: function (j) { return pct(j.factors.small_requests_share); } },
        { t: "non-consec.", f: function (j) { return pct(j.factors.non_consecutive_share); } },
        { t: "collective", f: function (j) { return pct(j.factors.collective_share); } },
        { t: "bricks", f: function (j) { return j.factors.bricks; } },
        { t: "procs/brick", f: function (j) { return j.factors.processes_per_brick.toFixed(1); } }
      ], doc.jobs, "jobs");
      var trs = t.querySelectorAll("tr");
      doc.jobs.forEach(function (j, i) {
        var fresh = known && !known[j.job];
        trs[i + 1].setAttribute("data-job", j.job);
        trs[i + 1].className = "job" + (fresh ? " new" : "");
        if (fresh) console.log("siox-new-job " + j.job); /* for scripts that watch a live page */
        seen[j.job] = 1;
      });
      known = seen;
      holder.innerHTML = "";
      holder.appendChild(t);
      document.getElementById("status").textContent = doc.jobs.length + " jobs, " + new Date().toLocaleTimeString();
      ready("jobs");
    }).catch(function (e) { holder.innerHTML = ""; fail(holder, e); });
  }
  sort.onchange = load;
  load();
  pollTimer = setInterval(load, 2000);
}

/* ---- job: summary, heatmap, critical files, findings, blame ------------- */

/* A colour from light to "to" by sqrt(v / max), as d3.scale.sqrt would. */
function shade(to, v, max) {
  var from = [0xf4, 0xf6, 0xff], t = Math.sqrt(Math.max(0, v) / max), c = [];
  for (var i = 0; i < 3; i++) c.push(Math.round(from[i] + t * (parseInt(to.substr(1 + 2 * i, 2), 16) - from[i])));
  return "rgb(" + c.join(",") + ")";
}

/* One row per rank, one cell per time bin; plain SVG (no d3: see needD3). */
function heatmap(where, hm, key) {
  var rows = hm[key], cell = Math.max(4, Math.min(14, Math.floor(900 / hm.bins))), rh = 16, left = 60;
  var max = Math.max.apply(null, rows.map(function (r) { return Math.max.apply(null, r.concat([0])); }).concat([0])) || 1;
  var to = key === "bytes" ? "#1a4fa0" : "#b3261e";
  var svg = svgEl("svg", { id: "heatmap-" + key, width: left + hm.bins * cell + 10, height: rows.length * rh + 24 });
  rows.forEach(function (r, i) {
    var g = svgEl("g", { "class": "heat-row", "data-rank": i, transform: "translate(" + left + "," + i * rh + ")" });
    g.appendChild(svgEl("text", { x: -6, y: rh - 4, "text-anchor": "end" }, "rank " + i));
    r.forEach(function (d, b) {
      var rect = svgEl("rect", { x: b * cell, width: cell - 1, height: rh - 2, fill: shade(to, d, max) });
      rect.appendChild(svgEl("title", {}, "bin " + b + " (+" + dur(Math.round(b * hm.bin_ns)) + "): " +
                                           (key === "bytes" ? bytes(d) : dur(d))));
      g.appendChild(rect);
    });
    svg.appendChild(g);
  });
  svg.appendChild(svgEl("text", { x: left, y: rows.length * rh + 16, "class": "legend" },
    (key === "bytes" ? "bytes moved" : "I/O time") + " per " + dur(Math.round(hm.bin_ns)) + " bin; darkest " +
    (key === "bytes" ? bytes(max) : dur(max))));
  where.appendChild(svg);
}

function jobPage(job) {
  main.innerHTML = "";
  main.appendChild(el("h1", {}, "Job " + job));
  var top = el("div"), hm = el("div"), lay = el("div"), crit = el("div"), fnd = el("div"), blm = el("div"), calls = el("div");
  [top, el("h2", {}, "Rank × time"), hm, el("h2", {}, "Critical files (sweep line: exclusive time, idle gaps left out)"), crit,
   el("h2", {}, "Layers and files"), lay, el("h2", {}, "Findings and hints"), fnd,
   el("h2", {}, "Slowest calls"), calls, el("h2", {}, "Blame (the job's I/O time by component)"), blm]
    .forEach(function (x) { main.appendChild(x); });
  var q = "job=" + encodeURIComponent(job);
  /* summary and heatmap in one document: the server loads the job once
   * (80 bins: WEB_JOB_PAGE_BINS, the page siox web stores ahead of a view) */
  var page = api("job?" + q + "&bins=80");
  var s = page.then(function (pg) {
    var doc = pg.summary, t = doc.totals, box = el("div", { "class": "totals", id: "totals" });
    [["processes", doc.processes, doc.processes], ["ranks", doc.ranks, doc.ranks],
     ["bytes_read", t.bytes_read, bytes(t.bytes_read)], ["bytes_written", t.bytes_written, bytes(t.bytes_written)],
     ["io_time_ns", t.io_time_ns, dur(t.io_time_ns)], ["bandwidth_bps", t.bandwidth_bps, bytes(t.bandwidth_bps) + "/s"],
     ["calls", t.calls, t.calls], ["activities", t.activities, t.activities], ["busy_ns", doc.busy_ns, dur(doc.busy_ns)]]
      .forEach(function (x) {
        var d = el("div", { "class": "total", "data-key": x[0], "data-value": x[1] });
        d.appendChild(el("b", {}, x[2]));
        d.appendChild(document.createTextNode(x[0].replace(/_ns$|_bps$/, "").replace("_", " ")));
        box.appendChild(d);
      });
    top.appendChild(box);
    crit.appendChild(table([
      { t: "share", f: function (c) { return pct(c.share); } },
      { t: "exclusive", f: function (c) { return dur(c.exclusive_ns); } },
      { t: "busy", f: function (c) { return dur(c.busy_ns); } },
      { t: "file", l: 1, f: function (c) { return c.file; } }
    ], doc.critical_files.slice(0, 15), "critical"));
    var rows = [];
    doc.layers.forEach(function (L) {
      rows.push({ name: L.layer, s: L, layer: 1 });
      L.files.forEach(function (F) { rows.push({ name: "  " + (F.file || "(unknown)"), s: F }); });
    });
    lay.appendChild(table([
      { t: "layer / file", l: 1, f: function (r) { return r.layer ? el("b", {}, r.name) : r.name; } },
      { t: "ops", f: function (r) { return r.s.operations; } },
      { t: "reads", f: function (r) { return r.s.reads; } },
      { t: "writes", f: function (r) { return r.s.writes; } },
      { t: "read", f: function (r) { return bytes(r.s.bytes_read); } },
      { t: "written", f: function (r) { return bytes(r.s.bytes_written); } },
      { t: "seq.", f: function (r) { return pct(r.s.sequential_share); } },
      { t: "consec.", f: function (r) { return pct(r.s.consecutive_share); } },
      { t: "seeks", f: function (r) { return r.s.seeks; } },
      { t: "time", f: function (r) { return dur(r.s.cumulative_ns); } },
      { t: "slowest", f: function (r) { return el("a", { href: "#/call/" + r.s.slowest_aid }, dur(r.s.slowest_ns)); } },
      { t: "ranks", l: 1, f: function (r) { return r.s.ranks.length > 8 ? r.s.ranks.length + " ranks" : r.s.ranks.join(","); } }
    ], rows.slice(0, 200), "layers"));
  });
  var h = page.then(function (pg) {
    var doc = pg.heatmap;
    hm.setAttribute("id", "heatmap");
    hm.setAttribute("data-ranks", doc.ranks);
    heatmap(hm, doc, "bytes");
    heatmap(hm, doc, "time_ns");
  });
  /* The panels below wait for the first render: on a big job their
   * queries (the slowest calls: seconds at 1M activities) would share the
   * server and the database with the page's own document. */
  var drawn = Promise.all([s, h]).then(function () { ready("job"); });
  drawn.catch(function (e) { fail(top, e); });
  var after = drawn.catch(function () {});
  after.then(function () { return api("findings?" + q); }).then(function (doc) {
    if (!doc.findings.length) fnd.appendChild(el("p", { "class": "muted" }, "No findings for this job."));
    doc.findings.forEach(function (f) {
      var d = el("div", { "class": "finding " + f.severity });
      d.appendChild(el("b", {}, f.severity + " · " + f.kind + " "));
      d.appendChild(document.createTextNode(f.summary));
      if (f.hints) d.appendChild(el("div", { "class": "muted" }, "hints (" + f.component + "): " + JSON.stringify(f.hints)));
      fnd.appendChild(d);
    });
  }).catch(function (e) { fail(fnd, e); });
  after.then(function () { return api("top?" + q + "&n=10"); }).then(function (doc) {
    calls.appendChild(table([
      { t: "aid", l: 1, f: function (a) { return el("a", { href: "#/call/" + a.aid }, String(a.aid)); } },
      { t: "layer", l: 1, f: function (a) { return a.swid; } },
      { t: "name", l: 1, f: function (a) { return a.name; } },
      { t: "duration", f: function (a) { return dur(a.duration_ns); } },
      { t: "bytes", f: function (a) { return bytes(a.bytes); } }
    ], doc.activities, "calls"));
  }).catch(function (e) { fail(calls, e); });
  /* siox blame --job blames the job's slowest calls one by one: seconds to
   * minutes on a big job, so it runs when asked, not with every page view */
  var go = el("button", { id: "blame-job" }, "Blame the job's slowest calls (siox blame --job)");
  blm.appendChild(go);
  go.onclick = function () {
    blm.innerHTML = "";
    blm.appendChild(el("p", { "class": "muted", id: "blame-wait" }, "blaming the job's slowest calls…"));
    api("blame?" + q).then(function (doc) {
      blm.innerHTML = "";
      var list = doc.components || doc.entries || doc.blame || [];
      if (Array.isArray(list) && list.length) {
        blm.appendChild(table(Object.keys(list[0]).filter(function (k) { return typeof list[0][k] !== "object"; })
          .map(function (k) { return { t: k, l: 1, f: function (r) { return r[k]; } }; }), list, "blame-job"));
      } else {
        blm.appendChild(el("pre", { "class": "evidence" }, JSON.stringify(doc, null, 1).slice(0, 4000)));
      }
    }).catch(function (e) { blm.innerHTML = ""; fail(blm, e); });
  };
}

/* ---- call: causal graph, Gantt timeline, blame's evidence --------------- */

function walk(n, f, depth) {
  f(n, depth || 0);
  (n.children || []).forEach(function (c) { walk(c, f, (depth || 0) + 1); });
}

/* Big trees arrive folded below the path: a node with many children keeps
 * the ones on blame's path and folds the rest into _children. */
function foldBig(root, onPath) {
  walk(root, function (n, d) {
    if (n.children && n.children.length && (d >= 4 || n.children.length > 12) && !onPath[n.aid]) {
      n._children = n.children;
      n.children = null;
    }
  });
}

function graphView(where, root, blame) {
  var onPath = {}, culprit = blame && blame.culprit ? blame.culprit.aid : null;
  ((blame && blame.path) || []).forEach(function (p) { onPath[p.aid] = 1; });
  foldBig(root, onPath);
  var nodeW = 190, nodeH = 34;
  var svg = d3.select(where).append("svg").attr("id", "graph");
  var g = svg.append("g").attr("transform", "translate(20,20)");
  var tree = d3.layout.tree().nodeSize([nodeH + 14, nodeW + 60]);
  function draw() {
    var nodes = tree.nodes(root), links = tree.links(nodes);
    var minX = d3.min(nodes, function (n) { return n.x; }), maxX = d3.max(nodes, function (n) { return n.x; });
    var maxY = d3.max(nodes, function (n) { return n.y; });
    svg.attr("width", maxY + nodeW + 60).attr("height", maxX - minX + nodeH + 50);
    g.attr("transform", "translate(20," + (20 - minX) + ")");
    var l = g.selectAll("g.edge").data(links, function (d) { return d.target.aid; });
    var le = l.enter().append("g").attr("class", "edge");
    le.append("path");
    le.append("text").attr("class", "conf");
    l.exit().remove();
    l.select("path").attr("class", function (d) {
      return "link " + (d.target.link && d.target.link.kind === "implicit" ? "implicit" : "explicit") +
        (onPath[d.target.aid] && onPath[d.source.aid] ? " on-path" : "");
    }).attr("d", function (d) {
      var sx = d.source.y + nodeW, sy = d.source.x + nodeH / 2, tx = d.target.y, ty = d.target.x + nodeH / 2, m = (sx + tx) / 2;
      return "M" + sx + "," + sy + "C" + m + "," + sy + " " + m + "," + ty + " " + tx + "," + ty;
    });
    l.select("text").attr("x", function (d) { return d.target.y - 34; }).attr("y", function (d) { return d.target.x + nodeH / 2 - 3; })
      .attr("data-confidence", function (d) { return d.target.link ? d.target.link.confidence : 1; })
      .text(function (d) { return d.target.link && d.target.link.kind === "implicit" ? d.target.link.confidence.toFixed(2) : ""; });
    var n = g.selectAll("g.node").data(nodes, function (d) { return d.aid; });
    var ne = n.enter().append("g").on("click", function (d) {
      if (d.children) { d._children = d.children; d.children = null; }
      else if (d._children) { d.children = d._children; d._children = null; }
      draw();
    });
    ne.append("rect").attr("width", nodeW).attr("height", nodeH);
    ne.append("text").attr("class", "t1").attr("x", 5).attr("y", 13);
    ne.append("text").attr("class", "t2").attr("x", 5).attr("y", 27);
    n.exit().remove();
    n.attr("class", function (d) {
      return "node" + (onPath[d.aid] ? " on-path" : "") + (d.aid === culprit ? " culprit" : "") + (d._children ? " folded" : "");
    }).attr("data-aid", function (d) { return d.aid; })
      .attr("transform", function (d) { return "translate(" + d.y + "," + d.x + ")"; });
    n.select(".t1").text(function (d) {
      return (d.hwid + " " + d.swid + " " + d.name).slice(0, 34) + (d._children ? " [+" + d._children.length + "]" : "");
    });
    n.select(".t2").text(function (d) { return "incl " + dur(d.inclusive_ns) + " · excl " + dur(d.exclusive_ns); });
  }
  draw();
}

function gantt(where, root, blame) {
  var onPath = {}, culprit = blame && blame.culprit ? blame.culprit.aid : null, rows = [];
  ((blame && blame.path) || []).forEach(function (p) { onPath[p.aid] = 1; });
  walk(root, function (n, d) { if (rows.length < 400) rows.push({ n: n, d: d }); });
  var t0 = d3.min(rows, function (r) { return r.n.start_ns; }), t1 = d3.max(rows, function (r) { return r.n.end_ns; });
  var left = 260, w = 800, rh = 14;
  var x = d3.scale.linear().domain([0, Math.max(1, t1 - t0)]).range([0, w]);
  var svg = d3.select(where).append("svg").attr("id", "gantt").attr("width", left + w + 20).attr("height", rows.length * rh + 30);
  var g = svg.selectAll("g").data(rows).enter().append("g").attr("transform", function (r, i) { return "translate(0," + i * rh + ")"; });
  g.append("text").attr("x", function (r) { return 4 + 8 * Math.min(r.d, 12); }).attr("y", rh - 3)
    .text(function (r) { return (r.n.swid + " " + r.n.name).slice(0, 30); });
  g.append("rect").attr("class", function (r) {
    return "bar" + (onPath[r.n.aid] ? " on-path" : "") + (r.n.aid === culprit ? " culprit" : "");
  }).attr("data-aid", function (r) { return r.n.aid; })
    .attr("x", function (r) { return left + x(r.n.start_ns - t0); }).attr("y", 2)
    .attr("width", function (r) { return Math.max(1, x(r.n.end_ns - r.n.start_ns)); }).attr("height", rh - 3)
    .append("title").text(function (r) { return r.n.name + ": " + dur(r.n.end_ns - r.n.start_ns); });
  svg.append("text").attr("class", "legend").attr("x", left).attr("y", rows.length * rh + 20)
    .text("0 … " + dur(t1 - t0) + " from the call's start" + (rows.length >= 400 ? " (first 400 activities)" : ""));
}

function callPage(aid) {
  main.innerHTML = "";
  main.appendChild(el("h1", {}, "Call " + aid));
  var head = el("div", { id: "verdict" }), gv = el("div", { id: "graph-holder" }), gt = el("div"), ev = el("div");
  [head, el("h2", {}, "Causal graph (click a node to fold or expand; dashed: implicit link, with its confidence)"), gv,
   el("h2", {}, "Timeline"), gt, el("h2", {}, "Blame's evidence")].forEach(function (x) { main.appendChild(x); });
  main.appendChild(ev);
  var g = api("graph?aid=" + aid), b = api("blame?aid=" + aid).catch(function (e) { return { error: e.message }; });
  Promise.all([g, b, needD3()]).then(function (r) {
    var tree = r[0], blame = r[1].error ? null : r[1];
    if (blame) {
      var c = blame.culprit;
      head.setAttribute("data-verdict", blame.verdict);
      head.setAttribute("data-culprit", c ? c.aid : "");
      head.appendChild(el("p", {}, "Verdict: " + blame.verdict + (c ? " — culprit " + c.hwid + " " + c.swid +
        (c.iid ? "#" + c.iid : "") + " " + c.name + " (aid " + c.aid + "), exclusive " + (c.exclusive_s * 1e3).toFixed(1) + " ms" : "")));
      ev.appendChild(el("pre", { "class": "evidence", id: "evidence" }, blame.explanation || ""));
    } else {
      ev.appendChild(el("p", { "class": "muted" }, "blame: " + r[1].error));
    }
    graphView(gv, tree, blame);
    gantt(gt, tree, blame);
    ready("call");
  }).catch(function (e) { fail(head, e); });
}

/* ---- component: latency over time against its baseline, load, capacity - */

function componentPage(pattern) {
  main.innerHTML = "";
  main.appendChild(el("h1", {}, "Components: " + pattern));
  var form = el("p", {}, "component (role or label part) ");
  var inp = el("input", { value: pattern, size: 30 });
  form.appendChild(inp);
  inp.onchange = function () { location.hash = "#/component/" + encodeURIComponent(inp.value); };
  main.appendChild(form);
  var lat = el("div", { id: "latency" }), cap = el("div", { id: "capacity" });
  [el("h2", {}, "Latency over time against the baseline"), lat, el("h2", {}, "Load and capacity"), cap]
    .forEach(function (x) { main.appendChild(x); });
  var p1 = api("component?component=" + encodeURIComponent(pattern) + "&since=1d").then(function (doc) {
    var rows = doc.components || [];
    if (!rows.length) cap.appendChild(el("p", { "class": "muted" }, "No component with load in the last day matches."));
    else cap.appendChild(table([
      { t: "component", l: 1, f: function (c) { return c.label; } },
      { t: "role", l: 1, f: function (c) { return c.role; } },
      { t: "mean", f: function (c) { return c.metric === "bytes/s" ? bytes(c.rate) + "/s" : c.rate.toFixed(1) + " op/s"; } },
      { t: "peak", f: function (c) { return c.metric === "bytes/s" ? bytes(c.peak) + "/s" : c.peak.toFixed(1) + " op/s"; } },
      { t: "capacity", f: function (c) { return c.metric === "bytes/s" ? bytes(c.capacity) + "/s" : c.capacity.toFixed(1) + " op/s"; } },
      { t: "util.", f: function (c) { return pct(c.utilization); } },
      { t: "busy", f: function (c) { return c.busy.toFixed(2); } },
      { t: "latency quiet/busy", f: function (c) { return dur(Math.round(c.latency_low_s * 1e9)) + " / " + dur(Math.round(c.latency_high_s * 1e9)); } }
    ], rows, "capacity"));
  });
  var p2 = Promise.all([api("latency?component=" + encodeURIComponent(pattern)), needD3()]).then(function (r) {
    var doc = r[0];
    (doc.components || []).slice(0, 8).forEach(function (c) { latencyChart(lat, c); });
    if (!(doc.components || []).length) lat.appendChild(el("p", { "class": "muted" }, "No activity of a matching component."));
  }).catch(function (e) { fail(lat, e); });
  Promise.all([p1, p2]).then(function () { ready("component"); }).catch(function (e) { fail(cap, e); });
}

function latencyChart(where, c) {
  var w = 700, h = 140, left = 70;
  var box = el("div", { "class": "component", "data-label": c.label });
  box.appendChild(el("b", {}, c.label));
  where.appendChild(box);
  var pts = c.bins.filter(function (b) { return b.n > 0; });
  var x = d3.scale.linear().domain([c.first_ns, c.last_ns]).range([0, w]);
  var ymax = d3.max(pts.map(function (b) { return b.mean_ns; }).concat([c.baseline_ns || 0])) || 1;
  var y = d3.scale.linear().domain([0, ymax * 1.1]).range([h, 0]);
  var svg = d3.select(box).append("svg").attr("width", left + w + 20).attr("height", h + 30);
  var g = svg.append("g").attr("transform", "translate(" + left + ",5)");
  g.append("path").attr("class", "line").attr("d", d3.svg.line()
    .x(function (b) { return x(b.t_ns); }).y(function (b) { return y(b.mean_ns); })(pts));
  if (c.baseline_ns) g.append("line").attr("class", "baseline line").attr("x1", 0).attr("x2", w)
    .attr("y1", y(c.baseline_ns)).attr("y2", y(c.baseline_ns));
  g.append("g").attr("transform", "translate(0," + h + ")").call(d3.svg.axis().scale(x).ticks(5)
    .tickFormat(function (t) { return "+" + dur(Math.round(t - c.first_ns)); }));
  g.append("g").call(d3.svg.axis().scale(y).orient("left").ticks(4).tickFormat(function (t) { return dur(Math.round(t)); }));
  box.appendChild(el("div", { "class": "legend" }, "mean latency per bin (blue) against the baseline median" +
    (c.baseline_ns ? " " + dur(Math.round(c.baseline_ns)) + " (red, dashed)" : " (none yet)") + "; " + c.activities + " activities"));
}

/* ---- routing ------------------------------------------------------------ */

function route() {
  if (pollTimer) clearInterval(pollTimer), pollTimer = null;
  document.body.removeAttribute("data-ready");
  var h = location.hash.replace(/^#\/?/, "").split("/"), arg = decodeURIComponent(h.slice(1).join("/"));
  if (h[0] === "job" && arg) jobPage(arg);
  else if (h[0] === "call" && arg) callPage(arg);
  else if (h[0] === "component") componentPage(arg || "brick");
  else jobsPage();
}

window.addEventListener("hashchange", route);
route();
