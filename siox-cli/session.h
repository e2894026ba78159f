/*
 * What the warehouse-reading subcommands share: open the warehouse and load
 * a causal tree, printing a clear message and returning the exit status on
 * failure.
 */
#ifndef SIOX_CLI_SESSION_H
#define SIOX_CLI_SESSION_H

#include <libpq-fe.h>

#include "cli.h"
#include "graph.h"

/* Connects; on failure prints "siox: cannot reach ..." and returns
 * SIOX_EXIT_FAIL. The caller PQfinish-es *out. */
int siox_cli_open(const struct siox_cli *cli, PGconn **out);

/* The same as a libsiox-warehouse handle; the caller siox_wh_close-s *out. */
struct siox_wh;
int siox_cli_open_wh(const struct siox_cli *cli, struct siox_wh **out);

/* Loads aid's causal tree to `depth` levels; on failure prints why ("not in
 * the warehouse", the query error) and returns SIOX_EXIT_FAIL. The caller
 * destroys *out. */
int siox_cli_load(PGconn *c, int64_t aid, int depth, struct siox_tree **out);

#endif
