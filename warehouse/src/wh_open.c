/*
 * Opening and closing the warehouse: one libpq connection, in UTC so that
 * times print the same for every user. The caller found the conninfo
 * (siox's --db / --data-dir / $SIOX_DB, the server's own); this file only
 * connects and says, without the password, where it tried.
 */
#include "siox/siox_wh.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct siox_wh {
  PGconn *pg;
};

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

int siox_wh_open(const char *conninfo, struct siox_wh **out, char *err, size_t errlen) {
  *out = NULL;
  struct siox_wh *wh = calloc(1, sizeof(*wh));
  if (!wh) return -ENOMEM;
  /* Ours first: values in the caller's conninfo (expanded from dbname) win. */
  const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
  const char *const vals[] = {"10", "siox", conninfo, NULL};
  wh->pg = PQconnectdbParams(keys, vals, 1);
  if (!wh->pg || PQstatus(wh->pg) != CONNECTION_OK) {
    char where[1024], msg[1024];
    describe_conninfo(conninfo, where, sizeof(where));
    snprintf(msg, sizeof(msg), "%s", wh->pg ? PQerrorMessage(wh->pg) : "out of memory");
    msg[strcspn(msg, "\n")] = '\0'; /* libpq's messages end in newlines */
    int rc = refused(msg) ? -EACCES : -ECONNREFUSED;
    if (rc == -EACCES) snprintf(err, errlen, "permission denied: the warehouse at %s refused you: %s", where, msg);
    else snprintf(err, errlen, "cannot reach the warehouse at %s: %s", where, msg);
    siox_wh_close(wh);
    return rc;
  }
  /* No JIT: the warehouse's big reads (a job's million activities for
   * `siox jobs` and a job view) have plans far above jit_above_cost, and
   * compiling, optimising and inlining their many expressions cost seconds
   * per query, more than JIT saves on a scan that reads the rows once
   * (README.md, "Job views"). A session is one CLI command or one server.
   * Both settings in one simple query: one round trip, not two (a CLI
   * command's session is short; blame's whole call is ~20 of them). */
  PQclear(PQexec(wh->pg, "SET TIME ZONE 'UTC'; SET jit = off"));
  *out = wh;
  return 0;
}

void siox_wh_close(struct siox_wh *wh) {
  if (!wh) return;
  if (wh->pg) PQfinish(wh->pg);
  free(wh);
}

PGconn *siox_wh_pg(struct siox_wh *wh) { return wh ? wh->pg : NULL; }
