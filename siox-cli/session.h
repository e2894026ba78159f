/*
 * What the warehouse-reading subcommands share: open the warehouse and load
 * a causal tree, printing a clear message and returning the exit status on
 * failure.
 */
#ifndef SIOX_CLI_SESSION_H
#define SIOX_CLI_SESSION_H

#include <libpq-fe.h>
#include <stddef.h>

#include "cli.h"
#include "siox/siox_wh.h"

/* Opens the warehouse cli names (README.md "Finding the warehouse").
 * Returns the handle (the caller siox_wh_close-s it), or NULL with a
 * message in err that names where it looked and how to change it. */
struct siox_wh *siox_cli_connect(const struct siox_cli *cli, char *err, size_t errlen);

/* siox_cli_connect that prints "siox: cannot reach ..." on failure and
 * returns SIOX_EXIT_FAIL. The caller siox_wh_close-s *out. */
int siox_cli_open(const struct siox_cli *cli, struct siox_wh **out);

/* The conninfo siox_cli_connect would use (`siox web` opens its own
 * connections per request). 0 or -errno (err set). */
int siox_cli_conninfo(const struct siox_cli *cli, char *buf, size_t len, char *err, size_t errlen);

/* Loads aid's causal tree to `depth` levels; on failure prints why ("not in
 * the warehouse", the query error) and returns SIOX_EXIT_FAIL. The caller
 * destroys *out. */
int siox_cli_load(PGconn *c, int64_t aid, int depth, struct siox_tree **out);

#endif
