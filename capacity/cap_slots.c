/*
 * Slots of the simulation's event core (cap_des.h): at most `limit`
 * holders at once, the others wait in arrival order. A slot is held across
 * stations (a client's request on one file from its client stage to the end
 * of its brick stage), which a station's fixed service time cannot express.
 */
#include <errno.h>
#include <stdlib.h>

#include "cap_des.h"

int cap_slots_take(struct cap_slots *p, uint32_t who) {
  if (p->used < p->limit) {
    p->used++;
    return 1;
  }
  if (p->len == p->cap) { /* grow the ring, unrolled to the front */
    size_t nc = p->cap ? 2 * p->cap : 4;
    uint32_t *q = malloc(nc * sizeof(*q));
    if (!q) return -ENOMEM;
    for (size_t i = 0; i < p->len; i++) q[i] = p->q[(p->head + i) % p->cap];
    free(p->q);
    p->q = q;
    p->head = 0;
    p->cap = nc;
  }
  p->q[(p->head + p->len++) % p->cap] = who;
  return 0;
}

int cap_slots_give(struct cap_slots *p, uint32_t *next) {
  if (!p->len) {
    if (p->used) p->used--;
    return 0;
  }
  *next = p->q[p->head];
  p->head = (p->head + 1) % p->cap;
  p->len--;
  return 1; /* the slot passes to *next: used stays */
}

void cap_slots_free(struct cap_slots *p) {
  free(p->q);
  p->q = NULL;
  p->len = p->cap = p->head = 0;
}
