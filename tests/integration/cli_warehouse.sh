#!/bin/bash
# Integration test of the `siox` CLI against a real, throwaway PostgreSQL:
# initdb + pg_ctl as user postgres (we run as root), unix socket in a temp
# dir, no TCP. Loads the warehouse schema, the ontology and a synthetic
# warehouse: 12 calls app write -> (implicit) fs-client writev -> (implicit)
# brick WRITE -> (explicit) device write, alternating dev0 (1 ms) and dev1
# (10 ms). Then drives the real binary. Everything started here is stopped
# by its pid in the EXIT trap.
# Env: SIOX_CLI, SIOX_SCHEMA, SIOX_ONTOLOGY_SQL, SIOX_FAKE_STATUS.
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
T=$(mktemp -d /tmp/siox-cli-it.XXXXXX)
chmod 755 "$T"
PGPID=""
FAKEPID=""

stop_pid() {
  local pid=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
  stop_pid "$FAKEPID"
  stop_pid "$PGPID"
  rm -rf "$T"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  [ -f "$T/out" ] && { echo "--- stdout"; cat "$T/out"; } >&2
  [ -f "$T/err" ] && { echo "--- stderr"; cat "$T/err"; } >&2
  exit 1
}
# run EXPECTED_STATUS siox-args...: stdout to $T/out, stderr to $T/err.
run() {
  local want=$1 rc=0
  shift
  "$SIOX_CLI" "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "siox $* exited $rc, expected $want"
}
has() { grep -qF -- "$1" "$T/$2" || fail "expected '$1' in $2 of the last command"; }
# pyjson EXPR: evaluates a Python boolean over the JSON in $T/out (bound to j).
pyjson() {
  python3 -c "import json,sys; j=json.load(open('$T/out')); sys.exit(0 if ($1) else 1)" ||
    fail "JSON check failed: $1"
}

# ---- the throwaway PostgreSQL ------------------------------------------------
install -d -o postgres -g postgres "$T/pg" "$T/run"
runuser -u postgres -- "$PGBIN/initdb" -D "$T/pg" -U postgres -A trust --no-sync >"$T/initdb.log" 2>&1 ||
  { cat "$T/initdb.log"; fail initdb; }
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$T/pg" -l "$T/run/pg.log" -w \
  -o "-k $T/run -c listen_addresses='' -c fsync=off" start >/dev/null || { cat "$T/run/pg.log"; fail pg_ctl; }
PGPID=$(head -n 1 "$T/pg/postmaster.pid")
PSQL=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$T/run" -U postgres)
"${PSQL[@]}" -d postgres -c "CREATE DATABASE siox" >/dev/null
"${PSQL[@]}" -d siox -f "$SIOX_SCHEMA" >/dev/null
"${PSQL[@]}" -d siox -f "$SIOX_ONTOLOGY_SQL" >/dev/null
CONN="host=$T/run dbname=siox user=postgres"

"${PSQL[@]}" -d siox >/dev/null <<'SQL'
INSERT INTO daemons (daemon_id, hostname) VALUES (1, 'host0'), (2, 'srv0'), (3, 'srv1');
INSERT INTO processes (proc_id, daemon_id, host, pid, uid, nonce, exe, job) VALUES
  (1, 1, 'host0', 1001, 1000, 1, '/usr/bin/app', 'job42'),
  (2, 1, 'host0', 1002, 0, 2, '/usr/sbin/glusterfs', ''),
  (3, 2, 'srv0', 2001, 0, 3, '/usr/sbin/glusterfsd', ''),
  (4, 3, 'srv1', 3001, 0, 4, '/usr/sbin/glusterfsd', '');
INSERT INTO nodes (node_id, hwid, swid) VALUES
  (1, 'host0', 'POSIX'), (2, 'host0', 'GlusterFS-client'), (3, 'srv0:/b0', 'GlusterFS-brick'),
  (4, 'srv1:/b1', 'GlusterFS-brick'), (5, 'dev0', 'device'), (6, 'dev1', 'device');
INSERT INTO activity_types (type_id, node_id, name) VALUES
  (1, 1, 'write'), (2, 2, 'writev'), (3, 3, 'WRITE'), (4, 4, 'WRITE'), (5, 5, 'write'), (6, 6, 'write');
CREATE TEMP TABLE calls AS
  SELECT i, i % 2 AS dev, 1700000000000000000::bigint + i * 20000000::bigint AS s,
         CASE WHEN i % 2 = 0 THEN 1000000 ELSE 10000000 END::bigint AS d,
         ARRAY[(SELECT id FROM ontology WHERE name = 'io/offset'),
               (SELECT id FROM ontology WHERE name = 'io/bytes')] AS ids,
         ARRAY[i * 1048576, 1048576]::bigint[] AS vals
    FROM generate_series(0, 11) i;
INSERT INTO activities (aid, proc_id, parent_aid, node_id, type_id, start_ns, end_ns, attr_ids, attr_vals)
  SELECT (1::bigint << 32) + i + 1, 1, NULL::bigint, 1, 1, s, s + d + 400000, ids, vals FROM calls
  UNION ALL
  SELECT (2::bigint << 32) + i + 1, 2, NULL, 2, 2, s + 50000, s + d + 350000, ids, vals FROM calls
  UNION ALL
  SELECT ((3 + dev)::bigint << 32) + 2 * i + 1, 3 + dev, NULL, 3 + dev, 3 + dev,
         s + 100000, s + d + 300000, ids, vals FROM calls
  UNION ALL
  SELECT ((3 + dev)::bigint << 32) + 2 * i + 2, 3 + dev, ((3 + dev)::bigint << 32) + 2 * i + 1, 5 + dev, 5 + dev,
         s + 150000, s + 150000 + d, ids, vals FROM calls;
INSERT INTO activity_text_attrs (aid, attr_id, value)
  SELECT (1::bigint << 32) + i + 1, (SELECT id FROM ontology WHERE name = 'posix/path'), '/mnt/gluster/out.dat'
    FROM calls;
INSERT INTO causal_links (parent_aid, child_aid, confidence, overlap_bytes)
  SELECT (1::bigint << 32) + i + 1, (2::bigint << 32) + i + 1, 1.0, 1048576 FROM calls
  UNION ALL
  SELECT (2::bigint << 32) + i + 1, ((3 + dev)::bigint << 32) + 2 * i + 1, 1.0, 1048576 FROM calls;
INSERT INTO client_stats (proc_id, activities, records, dropped) VALUES (1, 12, 40, 3), (2, 12, 30, 0);
SQL

SLOW=4294967298 # call 1: app write on host0, its data went to dev1
FAST=4294967297 # call 0: went to dev0

# ---- help ---------------------------------------------------------------------
run 0 --help
has "EXAMPLES" out
has "blame" out
run 0 help blame
cp "$T/out" "$T/help1"
run 0 blame --help
cmp -s "$T/out" "$T/help1" || fail "siox help blame and siox blame --help differ"
has "RULE" out
run 2 frobnicate
has "no command 'frobnicate'" err

# ---- graph --------------------------------------------------------------------
run 0 --db "$CONN" graph $SLOW
has "4 activities" out
has "dev1 device  write" out
has "[implicit 1.00]" out
has "[explicit]" out
has "io/bytes=1048576 B" out
has 'posix/path="/mnt/gluster/out.dat"' out
has "incl 10.400 ms  excl 100.000 us" out
[ "$(grep -c '^ *[`+|]*-\?\*' "$T/out")" -ge 4 ] || fail "critical path not marked on 4 lines"

run 0 --db "$CONN" graph $SLOW --format dot
has "digraph" out
has "style=dashed" out
dot -Tsvg "$T/out" >"$T/g.svg" || fail "dot rejected the DOT output"
grep -q "<svg" "$T/g.svg" || fail "no SVG from dot"

run 0 graph $SLOW --json --db "$CONN"
pyjson "j['aid'] == $SLOW and j['inclusive_ns'] == 10400000 and j['exclusive_ns'] == 100000"
pyjson "j['attributes']['io/bytes'] == 1048576 and j['link']['kind'] == 'root'"
pyjson "j['children'][0]['link']['kind'] == 'implicit' and j['children'][0]['link']['confidence'] == 1.0"
pyjson "j['children'][0]['children'][0]['children'][0]['hwid'] == 'dev1'"
pyjson "j['children'][0]['children'][0]['children'][0]['link']['kind'] == 'explicit'"
pyjson "j['children'][0]['children'][0]['children'][0]['critical'] is True"
run 0 --db "$CONN" graph $SLOW --depth 1 --format json
pyjson "len(j['children']) == 1 and j['children'][0]['children'] == []"

# ---- top ----------------------------------------------------------------------
run 0 --db "$CONN" top -n 3 --layer device
has "dev1 device" out
run 0 --db "$CONN" top -n 3 --layer device --json
pyjson "len(j['activities']) == 3 and all(a['hwid'] == 'dev1' for a in j['activities'])"
pyjson "j['activities'][0]['duration_ns'] == 10000000 and j['activities'][0]['bytes'] == 1048576"
run 0 --db "$CONN" top --roots --job job42 --json
pyjson "len(j['activities']) == 12 and all(a['swid'] == 'POSIX' for a in j['activities'])"
run 0 --db "$CONN" top --name nosuch
has "No activities match." out

# ---- blame --------------------------------------------------------------------
run 0 --db "$CONN" blame $SLOW --json
pyjson "j['verdict'] == 'culprit' and j['culprit']['hwid'] == 'dev1' and j['culprit']['swid'] == 'device'"
pyjson "abs(j['culprit']['exclusive_s'] - 0.010) < 1e-9"
pyjson "len(j['path']) == 4 and j['suspect_index'] == 3"
pyjson "j['evidence']['peer_samples'] == 6 and j['evidence']['own_samples'] == 5 and j['evidence']['ratio'] > 9.9"
pyjson "j['peers'][0]['hwid'] == 'dev0' and j['peers'][0]['samples'] == 6"
run 0 --db "$CONN" blame $SLOW
has "Culprit: dev1 device (write), activity" out
has "Rule:" out
run 0 --db "$CONN" blame $SLOW --dot
has "CULPRIT: fault" out
dot -Tsvg "$T/out" >"$T/blame.svg" || fail "blame --dot is not valid DOT"
run 0 --db "$CONN" blame $SLOW --json
pyjson "j['class'] == 'fault' and j['resource']['hwid'] == 'dev1' and j['breakdown']['own_service_s'] > 0"
run 0 --db "$CONN" blame $FAST --json
pyjson "j['culprit'] is None and j['verdict'] == 'normal' and j['suspect']['hwid'] == 'dev0'"
run 0 --db "$CONN" blame $FAST
has "Nothing stands out" out
run 0 --db "$CONN" blame $SLOW --margin 0 --json
pyjson "j['verdict'] == 'no-peers' and j['culprit'] is None"

# ---- finding the warehouse ----------------------------------------------------
mkdir -p "$T/data"
echo "$CONN" >"$T/data/conninfo"
run 0 --data-dir "$T/data" top -n 1
SIOX_DB="$CONN" run 0 top -n 1
run 1 --data-dir "$T/nowhere" top
has "cannot read the warehouse address from $T/nowhere/conninfo" err
run 1 --db "host=$T/nosock dbname=siox user=postgres" graph $SLOW
has "cannot reach the warehouse at host=$T/nosock dbname=siox user=postgres:" err
has "is siox-server running?" err

# ---- bad ids ------------------------------------------------------------------
run 2 --db "$CONN" graph abc
has "'abc' is not an activity id" err
run 2 --db "$CONN" blame -- -5
run 2 --db "$CONN" graph
has "which activity?" err
run 1 --db "$CONN" graph 999
has "activity 999 is not in the warehouse" err
run 1 --db "$CONN" blame 999
run 2 --db "$CONN" graph $SLOW --format svg
has "unknown format 'svg'" err

# ---- export -------------------------------------------------------------------
# job42 is the app's 12 writes; the export follows their implicit links to the
# fs client, the bricks and (explicit) their devices: 48 activities, 36 links.
HERE=$(cd "$(dirname "$0")" && pwd)
run 0 --db "$CONN" export --job job42 --format chrome-trace --output "$T/trace.json"
python3 "$HERE/check_chrome_trace.py" "$T/trace.json" "$HERE/chrome_trace.schema.json" \
  --slices 48 --flows 36 --implicit 24 || fail "the Chrome trace does not check"
run 0 --db "$CONN" export --job job42 --format chrome-trace
cmp -s "$T/out" "$T/trace.json" || fail "export to stdout differs from --output"
grep -q '"name":"implicit 1.00"' "$T/trace.json" || fail "no flow labelled with its confidence"
grep -q '"name":"thread_name","pid":3,"tid":3,"args":{"name":"GlusterFS-brick srv0:/b0"}' "$T/trace.json" ||
  fail "the brick's track is not named"
run 0 --db "$CONN" export --job job42 --format csv --output "$T/csv"
[ "$(wc -l <"$T/csv/activities.csv")" -eq 49 ] || fail "activities.csv: $(wc -l <"$T/csv/activities.csv") lines"
[ "$(wc -l <"$T/csv/links.csv")" -eq 37 ] || fail "links.csv: $(wc -l <"$T/csv/links.csv") lines"
python3 - "$T/csv" <<'PY' || fail "the CSV tables do not check"
import csv, sys
d = sys.argv[1]
acts = list(csv.DictReader(open(d + "/activities.csv", newline="")))
links = list(csv.DictReader(open(d + "/links.csv", newline="")))
attrs = list(csv.DictReader(open(d + "/attributes.csv", newline="")))
aids = {a["aid"] for a in acts}
assert len(aids) == 48, len(aids)
assert all(l["parent_aid"] in aids and l["child_aid"] in aids for l in links)
assert sum(l["kind"] == "implicit" for l in links) == 24
assert {a["swid"] for a in acts} == {"POSIX", "GlusterFS-client", "GlusterFS-brick", "device"}
paths = [x for x in attrs if x["name"] == "posix/path"]
assert len(paths) == 12 and paths[0]["value"] == "/mnt/gluster/out.dat", paths[:1]
assert sum(x["name"] == "io/bytes" and x["value"] == "1048576" for x in attrs) == 48
PY
run 1 --db "$CONN" export --job nosuchjob --format chrome-trace
has "job 'nosuchjob' has no activities" err
run 2 --db "$CONN" export --job job42 --format csv
has "needs --output DIR" err
run 2 --db "$CONN" export --job job42 --format xml
has "chrome-trace or csv" err

# ---- status -------------------------------------------------------------------
run 1 --db "$CONN" status --socket "$T/none.sock" --server 127.0.0.1:1
has "daemon     $T/none.sock: unreachable:" out
has "server     127.0.0.1:1: unreachable:" out
has "warehouse  ok: 48 activities, 4 processes, 6 nodes, 3 daemons, 24 implicit links; 3 activities dropped" out
run 1 --db "$CONN" status --socket "$T/none.sock" --server 127.0.0.1:1 --json
pyjson "j['ok'] is False and j['daemon']['ok'] is False and j['warehouse']['dropped'] == 3"
pyjson "j['warehouse']['activities'] == 48 and 'refused' in j['server']['error'].lower()"

"$SIOX_FAKE_STATUS" "$T/fake.sock" "$T/port" &
FAKEPID=$!
for _ in $(seq 100); do [ -s "$T/port" ] && [ -S "$T/fake.sock" ] && break; sleep 0.1; done
run 0 --db "$CONN" status --socket "$T/fake.sock" --server "127.0.0.1:$(cat "$T/port")" --json
pyjson "j['ok'] is True and j['daemon']['role'] == 'daemon' and j['daemon']['counters']['batches_acked'] == 42"
pyjson "j['server']['role'] == 'server' and j['server']['uptime_s'] == 3725"
wait "$FAKEPID" || fail "the fake status peer saw a bad request"
FAKEPID=""

echo "PASS: siox CLI integration"
