# Sourced by the benches that grow a warehouse from a template ingested
# through a real siox-server (bench_blame_latency.sh, bench_coordinator.sh).
#
# copy_in_time SQLFN COPIES SPAN_NS [TAG]: copies the warehouse's processes,
# activities, text attributes and causal links COPIES times, each copy a new
# set of processes (new proc_ids after the template's own range, so new
# aids: aid = proc_id << 32 | local number; jobs renamed JOB.TAGcK) shifted
# later in time by K * SPAN_NS, on the same nodes. SQLFN runs one SQL
# string on the warehouse (e.g. lib.sh's sql, or a shard's). Each copy is
# written in the template's order (ctid: the order ingest wrote it, batch by
# batch in time), so one time window sits in a few pages, as in a warehouse
# filled by ingest. The caller runs ANALYZE afterwards.
copy_in_time() {
  local sqlfn=$1 copies=$2 span_ns=$3 tag=${4:-} pmin pmax span
  IFS='|' read -r pmin pmax < <("$sqlfn" "SELECT min(proc_id), max(proc_id) FROM processes")
  span=$((pmax - pmin + 1))
  "$sqlfn" "INSERT INTO processes (proc_id, daemon_id, host, pid, uid, nonce, exe, args, job, first_seen)
       SELECT p.proc_id + k * $span, p.daemon_id, p.host, p.pid, p.uid, p.nonce + k * 100000, p.exe, p.args,
              CASE WHEN p.job = '' THEN '' ELSE p.job || '$tag.c' || k END, p.first_seen
         FROM processes p, generate_series(1, $copies) k WHERE p.proc_id <= $pmax;
       SELECT setval(pg_get_serial_sequence('processes', 'proc_id'), $pmax + $span * $copies)" >/dev/null
  local shift="(k::bigint * $span << 32)" k0 k1
  for k0 in $(seq 1 8 "$copies"); do
    k1=$((k0 + 7 > copies ? copies : k0 + 7))
    "$sqlfn" "INSERT INTO activities (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, err,
                                 attr_ids, attr_vals, real_ids, real_vals)
         SELECT a.aid + $shift, a.proc_id + k * $span, a.parent_aid + $shift, a.node_id, a.type_id,
                a.start_ns + k * $span_ns, a.end_ns + k * $span_ns, a.err, a.attr_ids, a.attr_vals, a.real_ids, a.real_vals
           FROM activities a, generate_series($k0, $k1) k WHERE a.proc_id <= $pmax ORDER BY k, a.ctid;
         INSERT INTO activity_text_attrs (aid, attr_id, value)
         SELECT t.aid + $shift, t.attr_id, t.value FROM activity_text_attrs t, generate_series($k0, $k1) k
          WHERE t.aid >> 32 <= $pmax;
         INSERT INTO causal_links (parent_aid, child_aid, confidence, overlap_bytes, flags)
         SELECT l.parent_aid + $shift, l.child_aid + $shift, l.confidence, l.overlap_bytes, l.flags
           FROM causal_links l, generate_series($k0, $k1) k WHERE l.child_aid >> 32 <= $pmax" >/dev/null
    echo "# copies $k0..$k1 done" >&2
  done
}
