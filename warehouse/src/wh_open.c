/*
 * Opening and closing the warehouse: one libpq connection, in UTC so that
 * times print the same for every user.
 */
#include "siox/siox_wh.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct siox_wh {
  PGconn *pg;
};

/* libpq gives no SQLSTATE for a refused connection, so read its message. */
static int refused(const char *msg) {
  static const char *const says[] = {"Permission denied", "permission denied", "authentication failed",
                                     "no pg_hba.conf entry"};
  for (size_t i = 0; i < sizeof(says) / sizeof(says[0]); i++)
    if (strstr(msg, says[i])) return 1;
  return 0;
}

int siox_wh_open(const char *conninfo, struct siox_wh **out, char *err, size_t errlen) {
  struct siox_wh *wh = calloc(1, sizeof(*wh));
  if (!wh) return -ENOMEM;
  wh->pg = PQconnectdb(conninfo);
  if (!wh->pg || PQstatus(wh->pg) != CONNECTION_OK) {
    const char *msg = wh->pg ? PQerrorMessage(wh->pg) : "out of memory";
    int rc = refused(msg) ? -EACCES : -ECONNREFUSED;
    snprintf(err, errlen, "cannot open the warehouse: %s", msg);
    err[strcspn(err, "\n")] = '\0';
    siox_wh_close(wh);
    return rc;
  }
  PQclear(PQexec(wh->pg, "SET TIME ZONE 'UTC'"));
  *out = wh;
  return 0;
}

void siox_wh_close(struct siox_wh *wh) {
  if (!wh) return;
  if (wh->pg) PQfinish(wh->pg);
  free(wh);
}

PGconn *siox_wh_pg(struct siox_wh *wh) { return wh->pg; }

int siox_wh_adopt(PGconn *pg, struct siox_wh **out) {
  struct siox_wh *wh = calloc(1, sizeof(*wh));
  if (!wh) return -ENOMEM;
  wh->pg = pg;
  *out = wh;
  return 0;
}
