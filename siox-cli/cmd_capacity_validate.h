/* `siox capacity validate` (cmd_capacity_validate.c), entered from `siox capacity`. */
#ifndef SIOX_CLI_CMD_CAPACITY_VALIDATE_H
#define SIOX_CLI_CMD_CAPACITY_VALIDATE_H

#include "cli.h"

/* argv[1] is "validate". Returns the exit status. */
int siox_capacity_validate_run(struct siox_cli *cli, int argc, char **argv);

#endif
