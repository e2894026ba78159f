/* `siox workload transform` (cmd_workload_transform.c), entered from `siox workload`. */
#ifndef SIOX_CLI_CMD_WORKLOAD_TRANSFORM_H
#define SIOX_CLI_CMD_WORKLOAD_TRANSFORM_H

#include "cli.h"

/* argv[0] is "transform". Returns the exit status. */
int siox_workload_transform_run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv);

#endif
