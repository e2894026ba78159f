/*
 * Opening the warehouse and loading a causal tree on behalf of a subcommand
 * (graph, blame, top), with the error wording the user sees.
 */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "siox/siox_wh.h"
#include "warehouse.h"

int siox_cli_open(const struct siox_cli *cli, PGconn **out) {
  char err[2048];
  *out = siox_wh_connect(cli, err, sizeof(err));
  if (*out) return SIOX_EXIT_OK;
  fprintf(stderr, "siox: %s\n", err);
  return SIOX_EXIT_FAIL;
}

int siox_cli_open_wh(const struct siox_cli *cli, struct siox_wh **out) {
  PGconn *c;
  int rc = siox_cli_open(cli, &c);
  if (rc != SIOX_EXIT_OK) return rc;
  if (siox_wh_adopt(c, out) == 0) return SIOX_EXIT_OK;
  PQfinish(c);
  fprintf(stderr, "siox: out of memory\n");
  return SIOX_EXIT_FAIL;
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
