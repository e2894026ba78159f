/*
 * The client node's CPU (capacity/README.md, "The client node's CPU"):
 * which components run on the client node, and what part of a request's
 * service there is CPU work. The simulation (cap_sim.c) makes that part
 * hold one of the node's client_cores cores, shared by every component on
 * the node, so a healthy run's client, bricks and kernel queue for them.
 */
#include <string.h>

#include "siox_capacity.h"

/* The host of c: where its processes were seen, else its name's host part
 * (a brick is named host:/dir, a client by its host). */
static void host_of(const struct siox_cap_comp *c, const char **h, size_t *n) {
  if (c->host[0]) {
    *h = c->host;
    *n = strlen(c->host);
    return;
  }
  const char *colon = strchr(c->name, ':');
  *h = c->name;
  *n = colon ? (size_t)(colon - c->name) : strlen(c->name);
}

static int same_host(const struct siox_cap_comp *a, const struct siox_cap_comp *b) {
  const char *ha, *hb;
  size_t na, nb;
  host_of(a, &ha, &na);
  host_of(b, &hb, &nb);
  return na == nb && strncmp(ha, hb, na) == 0;
}

void siox_cap_model_nodes(siox_cap_model *m) {
  int64_t client = siox_cap_model_main_client(m);
  for (size_t i = 0; i < m->ncomp; i++) m->comp[i].on_client_node = 0;
  if (client < 0) return;
  for (size_t i = 0; i < m->ncomp; i++)
    m->comp[i].on_client_node =
        (int64_t)i == client || (m->comp[i].kind == SIOX_CAP_BRICK && same_host(&m->comp[i], &m->comp[client]));
}

double siox_cap_comp_cpu_ns(const siox_cap_model *m, uint32_t comp, int cls, double bytes, double svc) {
  const struct siox_cap_comp *c = &m->comp[comp];
  if (svc <= 0) return 0;
  if (c->kind == SIOX_CAP_CLIENT) return svc;
  struct siox_cap_fit ref;
  siox_cap_model_healthy(m, cls, &ref);
  if (!ref.n) return 0; /* no measured brick served the class (device=all): a declared device's time is its wait */
  double cpu = siox_cap_fit_eval(&ref, bytes);
  return cpu < 0 ? 0 : cpu < svc ? cpu : svc;
}
