/*
 * The client node's cores for the capacity model's bound on a client's
 * servers (capacity/README.md, "Bounding a client's servers by its node's
 * cores"): declared with --client-cores, else assumed to be this machine's
 * online cores, which the output says (the warehouse records no node's
 * core count).
 */
#ifndef SIOX_CLI_CLIENT_CORES_H
#define SIOX_CLI_CLIENT_CORES_H

#include <stdio.h>

#include "siox_capacity.h"

#define SIOX_CLIENT_CORES_ASSUMED (-1L) /* no --client-cores given */

/* Sets m->client_cores from the option's value (SIOX_CLIENT_CORES_ASSUMED:
 * this machine's online cores; 0: no bound). */
void siox_client_cores_apply(siox_cap_model *m, long option);
/* One line saying the bound and where it comes from (nothing when there is none). */
void siox_client_cores_say(FILE *out, const siox_cap_model *m, long option);

#endif
