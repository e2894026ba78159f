/* The client node's cores for the capacity model (client_cores.h). */
#include "client_cores.h"

#include <unistd.h>

void siox_client_cores_apply(siox_cap_model *m, long option) {
  long n = option;
  if (n == SIOX_CLIENT_CORES_ASSUMED) n = sysconf(_SC_NPROCESSORS_ONLN);
  m->client_cores = n > 0 ? (uint32_t)n : 0; /* sysconf's -1: no bound rather than a guess */
}

void siox_client_cores_say(FILE *out, const siox_cap_model *m, long option) {
  if (!m->client_cores) return;
  fprintf(out, "client cores: a client serves at most %u requests at once, its node's cores%s (%s)\n", m->client_cores,
          m->node_cpu ? ", which it shares with the bricks on its node" : "",
          option == SIOX_CLIENT_CORES_ASSUMED
              ? "assumed: this machine's online cores; --client-cores N declares the client node's, 0 no bound"
              : "--client-cores");
}
