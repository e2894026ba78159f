/*
 * Finding and connecting to the warehouse (the PostgreSQL database
 * siox-server loads), and the counters `siox status` shows. The conninfo
 * comes from --db, DIR/conninfo (written by siox-server), or $SIOX_DB.
 */
#include "warehouse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads the first line of DIR/conninfo into buf. 0 or -errno (err set). */
static int read_conninfo(const char *dir, char *buf, size_t len, char *err, size_t errlen) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/conninfo", dir);
  FILE *f = fopen(path, "r");
  if (!f && errno == EACCES) {
    snprintf(err, errlen, "permission denied: cannot read %s (the warehouse address); ask the admin", path);
    return -EACCES;
  }
  if (!f) {
    int rc = -errno;
    snprintf(err, errlen,
             "cannot read the warehouse address from %s: %s; is siox-server running with --data-dir %s? "
             "(--data-dir, --db)",
             path, strerror(-rc), dir);
    return rc;
  }
  int rc = fgets(buf, (int)len, f) ? 0 : -ENODATA;
  fclose(f);
  buf[strcspn(buf, "\r\n")] = '\0';
  if (rc == 0 && buf[0] == '\0') rc = -ENODATA;
  if (rc) snprintf(err, errlen, "%s is empty; it should hold one libpq conninfo line (--data-dir, --db)", path);
  return rc;
}

/* The conninfo as it may be shown: the parameters that say where, never the
 * password. Falls back to the raw text if libpq cannot parse it. */
static void describe_conninfo(const char *info, char *out, size_t len) {
  static const char *const shown[] = {"host", "hostaddr", "port", "dbname", "user"};
  PQconninfoOption *opts = PQconninfoParse(info, NULL);
  size_t off = 0;
  out[0] = '\0';
  for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++) {
    for (PQconninfoOption *o = opts; o && o->keyword; o++) {
      if (o->val && *o->val && strcmp(o->keyword, shown[i]) == 0 && off < len)
        off += (size_t)snprintf(out + off, len - off, "%s%s=%s", off ? " " : "", o->keyword, o->val);
    }
  }
  if (!opts) snprintf(out, len, "'%.200s'", info);
  PQconninfoFree(opts);
}

/* Where to look, in the documented order. 0 or -errno (err set). */
static int pick_conninfo(const struct siox_cli *cli, char *buf, size_t len, char *err, size_t errlen) {
  const char *env = getenv("SIOX_DB");
  if (cli->db) {
    snprintf(buf, len, "%s", cli->db);
    return 0;
  }
  if (cli->data_dir) return read_conninfo(cli->data_dir, buf, len, err, errlen);
  if (env && *env) {
    snprintf(buf, len, "%s", env);
    return 0;
  }
  return read_conninfo(SIOX_DEFAULT_DATA_DIR, buf, len, err, errlen);
}

/* 1 when libpq's connection error says the server is up but refused this
 * user (libpq gives no SQLSTATE for connection failures): a socket the user
 * may not open, failed authentication, no role, no pg_hba.conf entry. */
static int refused(const char *msg) {
  static const char *const says[] = {"Permission denied", "permission denied", "authentication failed",
                                     "no pg_hba.conf entry"};
  for (size_t i = 0; i < sizeof(says) / sizeof(says[0]); i++)
    if (strstr(msg, says[i])) return 1;
  const char *role = strstr(msg, "role \"");
  return role && strstr(role, "\" does not exist");
}

int siox_cli_conninfo(const struct siox_cli *cli, char *buf, size_t len, char *err, size_t errlen) {
  return pick_conninfo(cli, buf, len, err, errlen);
}

PGconn *siox_wh_connect(const struct siox_cli *cli, char *err, size_t errlen) {
  char info[4096], where[1024];
  if (pick_conninfo(cli, info, sizeof(info), err, errlen)) return NULL;
  /* Ours first: values in the user's conninfo (expanded from dbname) win. */
  const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
  const char *const vals[] = {"10", "siox", info, NULL};
  PGconn *c = PQconnectdbParams(keys, vals, 1);
  if (c && PQstatus(c) == CONNECTION_OK) return c;
  describe_conninfo(info, where, sizeof(where));
  char msg[1024];
  snprintf(msg, sizeof(msg), "%s", c ? PQerrorMessage(c) : "out of memory");
  msg[strcspn(msg, "\n")] = '\0'; /* libpq's messages end in newlines */
  if (refused(msg))
    snprintf(err, errlen,
             "permission denied: the warehouse at %s refused you: %s (a user's role exists once siox-server has "
             "stored one of the user's processes; --db for another database)",
             where, msg);
  else
    snprintf(err, errlen, "cannot reach the warehouse at %s: %s; is siox-server running? (--data-dir, --db)", where,
             msg);
  PQfinish(c);
  return NULL;
}

int siox_wh_failed(PGresult *res, PGconn *c, const char *what, char *err, size_t errlen) {
  const char *m = res ? PQresultErrorMessage(res) : "";
  const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  if (!m || !*m) m = PQerrorMessage(c);
  /* 42501 insufficient_privilege: e.g. `siox hints --analyze` by a user */
  snprintf(err, errlen, "%s%s: %s", state && strcmp(state, "42501") == 0 ? "permission denied: " : "", what, m);
  err[strcspn(err, "\n")] = '\0';
  PQclear(res);
  return -EIO;
}

int64_t siox_wh_i64(const PGresult *res, int r, int col) {
  return PQgetisnull(res, r, col) ? 0 : strtoll(PQgetvalue(res, r, col), NULL, 10);
}

int siox_wh_counts(PGconn *c, struct siox_wh_counts *out, char *err, size_t errlen) {
  PGresult *res = PQexec(c,
                         "SELECT (SELECT count(*) FROM activities), (SELECT count(*) FROM processes),"
                         " (SELECT count(*) FROM nodes), (SELECT count(*) FROM daemons),"
                         " (SELECT count(*) FROM causal_links),"
                         " (SELECT coalesce(sum(dropped), 0) FROM client_stats)");
  if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
    return siox_wh_failed(res, c, "counting the warehouse", err, errlen);
  out->activities = siox_wh_i64(res, 0, 0);
  out->processes = siox_wh_i64(res, 0, 1);
  out->nodes = siox_wh_i64(res, 0, 2);
  out->daemons = siox_wh_i64(res, 0, 3);
  out->implicit_links = siox_wh_i64(res, 0, 4);
  out->dropped = siox_wh_i64(res, 0, 5);
  PQclear(res);
  /* Schemas 012/013's losses; a warehouse without them (older server) has none. */
  res = PQexec(c, "SELECT (SELECT coalesce(sum(daemon_dropped_invalid), 0) FROM client_stats),"
                  " (SELECT coalesce(sum(activities), 0) FROM quarantined_batches)");
  int ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
  out->dropped_validation = ok ? siox_wh_i64(res, 0, 0) : 0;
  out->quarantined = ok ? siox_wh_i64(res, 0, 1) : 0;
  PQclear(res);
  return 0;
}
