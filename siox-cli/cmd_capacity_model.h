/* `siox capacity model | what-if` (cmd_capacity_model.c), entered from `siox capacity`. */
#ifndef SIOX_CLI_CMD_CAPACITY_MODEL_H
#define SIOX_CLI_CMD_CAPACITY_MODEL_H

#include "cli.h"

/* 1 when argv asks for the calibrated model: the action model or what-if,
 * or a --job / --workload to predict. */
int siox_capacity_model_wanted(int argc, char **argv);
/* Runs it; returns the exit status. */
int siox_capacity_model_run(struct siox_cli *cli, int argc, char **argv);

#endif
