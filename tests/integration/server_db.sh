#!/bin/bash
# Integration test of `siox-server --db CONNINFO` against a site PostgreSQL:
# a throwaway cluster (initdb + pg_ctl as user postgres, since we run as
# root; unix socket in a temp dir, no TCP) stands in for the site's server.
# server_test_db drives siox-server against it (migrate, ingest, restart);
# then a malformed and an unreachable --db must each fail with a clear error
# and a non-zero exit. The postmaster is stopped by its pid in the EXIT trap.
# Usage: server_db.sh SIOX_SERVER SERVER_TEST_DB
set -euo pipefail

SERVER=$1
DRIVER=$2
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
T=$(mktemp -d /tmp/siox-srv-db.XXXXXX)
chmod 0711 "$T"
PGPID=""

cleanup() {
  if [ -n "$PGPID" ] && kill -0 "$PGPID" 2>/dev/null; then
    kill -INT "$PGPID" 2>/dev/null || true # fast shutdown
    for _ in $(seq 100); do kill -0 "$PGPID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$PGPID" 2>/dev/null || true
  fi
  rm -rf "$T"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  [ -f "$T/err" ] && { echo "--- stderr"; cat "$T/err"; } >&2
  exit 1
}

# ---- the throwaway "site" PostgreSQL -----------------------------------------
install -d -o postgres -g postgres -m 0700 "$T/pg"
install -d -o postgres -g postgres -m 0711 "$T/run"
runuser -u postgres -- "$PGBIN/initdb" -D "$T/pg" -U postgres -A trust --no-sync >"$T/initdb.log" 2>&1 ||
  { cat "$T/initdb.log"; fail initdb; }
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$T/pg" -l "$T/run/pg.log" -w \
  -o "-k $T/run -c listen_addresses='' -c fsync=off" start >/dev/null || { cat "$T/run/pg.log"; fail pg_ctl; }
PGPID=$(head -n 1 "$T/pg/postmaster.pid")
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$T/run" -U postgres -d postgres -c "CREATE DATABASE site_siox" >/dev/null

# ---- migrate, ingest, restart ------------------------------------------------
"$DRIVER" "$SERVER" "host=$T/run dbname=site_siox user=postgres" || fail "server_test_db"

# ---- DIR/conninfo holds no secret ----------------------------------------------
# with_db NAME ARGS...: runs siox-server with ARGS until it wrote
# $T/NAME/conninfo, then stops it by its pid.
with_db() {
  local name=$1 pid
  shift
  "$SERVER" --listen 127.0.0.1:0 --data-dir "$T/$name" "$@" >"$T/$name.log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do [ -s "$T/$name/conninfo" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" || true
  [ -s "$T/$name/conninfo" ] || { cat "$T/$name.log"; fail "$name: no conninfo written"; }
  [ "$(stat -c %a "$T/$name/conninfo")" = 644 ] || fail "$name: conninfo mode $(stat -c %a "$T/$name/conninfo")"
}
with_db pw --db "postgresql://postgres:sekrit-pw@/site_siox?host=$T/run"
grep -q sekrit-pw "$T/pw/conninfo" && fail "the --db password was written to DIR/conninfo"
grep -q "password" "$T/pw/conninfo" && fail "DIR/conninfo names a password"
grep -q "dbname='site_siox'" "$T/pw/conninfo" || fail "DIR/conninfo lost the database: $(cat "$T/pw/conninfo")"
grep -q "holds a password; it is not written" "$T/pw.log" || fail "no warning about the password in --db"
printf '*:*:site_siox:postgres:sekrit-pw\n' >"$T/pgpass" && chmod 600 "$T/pgpass"
with_db passfile --db "host=$T/run dbname=site_siox user=postgres" --db-passfile "$T/pgpass"
grep -q pgpass "$T/passfile/conninfo" && fail "DIR/conninfo names the server's passfile"
echo "server_db: DIR/conninfo is 0644 and holds no password"

# ---- bad --db values ---------------------------------------------------------
# expect_fail WHAT MESSAGE CONNINFO: siox-server must exit non-zero, saying MESSAGE.
expect_fail() {
  local rc=0
  timeout 120 "$SERVER" --listen 127.0.0.1:0 --data-dir "$T/bad" --db "$3" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "$1: siox-server exited $rc"
  grep -qF -- "$2" "$T/err" || fail "$1: expected '$2' on stderr"
  grep -qF "startup failed" "$T/err" || fail "$1: expected 'startup failed' on stderr"
}
expect_fail malformed "--db: not a valid libpq conninfo" "host=$T/run dbname"
mkdir -m 0711 "$T/nothing-here"
expect_fail unreachable "--db: cannot connect to the database" "host=$T/nothing-here dbname=site_siox user=postgres"
grep -qF "$T/nothing-here" "$T/err" || fail "unreachable: libpq's reason (the socket path) not logged"
[ ! -e "$T/bad/conninfo" ] || fail "conninfo written although the database was never reached"
echo "server_db: ok"
