/* `siox capacity model | what-if` (cmd_capacity_model.c), entered from `siox capacity`. */
#ifndef SIOX_CLI_CMD_CAPACITY_MODEL_H
#define SIOX_CLI_CMD_CAPACITY_MODEL_H

#include "cli.h"

/* The model flags' help, shared by `siox capacity model | what-if` and
 * `siox capacity validate`; P pads the description column (model: "",
 * validate: " "). */
#define SIOX_CAPACITY_MODEL_FLAGS_HELP(P) \
  "  --with-delays    " P "add to each client request the mean delay the recording's\n" \
  "                   " P "requests met beyond their fitted time, and to each read and\n" \
  "                   " P "write call the kernel part's (capacity/README.md, \"Disturbed\n" \
  "                   " P "samples\", \"The kernel's part\"); by default the fitted time only\n" \
  "  --flat-concurrency  one concurrency for every class of the client (the model\n" \
  "                   " P "before it had classes' own: capacity/README.md,\n" \
  "                   " P "\"Concurrency per class\")\n" \
  "  --no-kernel      " P "requests do not pay the client node's kernel part (by\n" \
  "                   " P "default they do: capacity/README.md, \"The kernel's part\")\n" \
  "  --kernel-mean    " P "the kernel part per call is the plain mean over the window's\n" \
  "                   " P "calls (the estimate before); by default a robust one, the\n" \
  "                   " P "disturbed calls left out (their excess added with\n" \
  "                   " P "--with-delays: capacity/README.md, \"The kernel's part\")\n" \
  "  --kernel-pooled  " P "a read pays the kernel part of all the client's reads\n" \
  "                   " P "(the model before); by default that of the reads its brick\n" \
  "                   " P "served (capacity/README.md, \"The read-back's kernel part\")\n" \
  "  --read-all       " P "a client's read line fitted on all its reads (the rule\n" \
  "                   " P "before); by default on those that did not start while\n" \
  "                   " P "another request of the client to the same brick was in\n" \
  "                   " P "flight (capacity/README.md, \"Reads queued behind\n" \
  "                   " P "another\")\n" \
  "  --healthy-ls     " P "a healed or new brick's writes cost the lower-median\n" \
  "                   " P "brick's least-squares write line (the rule before); by\n" \
  "                   " P "default its robust one, a disturbed moment's writes left\n" \
  "                   " P "out (capacity/README.md, \"The healthy reference\")\n" \
  "  --no-node-cpu    " P "each component on the client node has its servers to\n" \
  "                   " P "itself (by default the client, the bricks on its node and\n" \
  "                   " P "the kernel's part share the node's --client-cores cores\n" \
  "                   " P "for their CPU work: capacity/README.md, \"The client\n" \
  "                   " P "node's CPU\")\n"

/* 1 when argv asks for the calibrated model: the action model or what-if,
 * or a --job / --workload to predict. */
int siox_capacity_model_wanted(int argc, char **argv);
/* Runs it; returns the exit status. */
int siox_capacity_model_run(struct siox_cli *cli, int argc, char **argv);

#endif
