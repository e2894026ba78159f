-- SIOX warehouse, schema version 15: indexes for `siox blame` on a large
-- warehouse (issue 10: <= 100 ms per call at 10M activities; before them a
-- call took 10-50 s there, bench/bench_blame_latency.sh).
--
-- activities_type_start: one kind of operation in a time window. Blame's
-- peers (same SWID and name: a list of type_ids, since a type belongs to one
-- node), the kind's latency history (per node, the latest samples before
-- the call) and the baseline's left-out window (one node and type) each
-- read a few thousand rows of one type by start time, instead of every
-- activity of every node in the window (or, for the history, every
-- activity before the call).
--
-- activities_node_span: what one resource (node) was doing during an
-- interval: its activities whose [start, end] overlaps the interval. A
-- btree on start_ns can bound only one side (start < to); the other
-- (end > from) then had to read the node's whole history. The GiST index
-- over (node, span) answers the overlap directly (btree_gist, as 010).
CREATE EXTENSION IF NOT EXISTS btree_gist;
CREATE INDEX activities_type_start ON activities (type_id, start_ns);
CREATE INDEX activities_node_span ON activities USING gist (node_id, int8range(start_ns, end_ns, '[]'));
