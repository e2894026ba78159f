/*
 * Finding and opening the warehouse on behalf of a subcommand (graph, blame,
 * top, ...), and loading a causal tree, with the error wording the user
 * sees. The conninfo comes from --db, DIR/conninfo (written by siox-server)
 * or $SIOX_DB (README.md "Finding the warehouse"); libsiox-warehouse
 * connects.
 */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox/siox_wh.h"

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

struct siox_wh *siox_cli_connect(const struct siox_cli *cli, char *err, size_t errlen) {
  char info[4096];
  if (pick_conninfo(cli, info, sizeof(info), err, errlen)) return NULL;
  struct siox_wh *wh;
  int rc = siox_wh_open(info, &wh, err, errlen);
  if (rc == 0) return wh;
  /* The library says where and why; the hint names this command's options. */
  size_t off = strlen(err);
  if (rc == -EACCES)
    snprintf(err + off, errlen - off,
             " (a user's role exists once siox-server has stored one of the user's processes; --db for another "
             "database)");
  else if (rc == -ECONNREFUSED)
    snprintf(err + off, errlen - off, "; is siox-server running? (--data-dir, --db)");
  return NULL;
}

int siox_cli_open(const struct siox_cli *cli, struct siox_wh **out) {
  char err[2048];
  *out = siox_cli_connect(cli, err, sizeof(err));
  if (*out) return SIOX_EXIT_OK;
  fprintf(stderr, "siox: %s\n", err);
  return SIOX_EXIT_FAIL;
}

int siox_cli_conninfo(const struct siox_cli *cli, char *buf, size_t len, char *err, size_t errlen) {
  return pick_conninfo(cli, buf, len, err, errlen);
}

int siox_cli_load(PGconn *c, int64_t aid, int depth, struct siox_tree **out) {
  char err[2048] = "";
  int rc = siox_wh_load_tree(c, aid, depth, out, err, sizeof(err));
  if (rc == 0) return SIOX_EXIT_OK;
  if (rc == -ENOENT)
    fprintf(stderr, "siox: activity %lld is not in the warehouse (see `siox top` for ids)\n", (long long)aid);
  else
    fprintf(stderr, "siox: %s\n", err[0] ? err : strerror(-rc));
  return SIOX_EXIT_FAIL;
}
