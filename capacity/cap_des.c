/*
 * The event core: a binary min-heap on (time, sequence) and FIFO
 * multi-server stations. Written here rather than taken from SIMGRID
 * (capacity/README.md says why): this is all the simulation needs.
 */
#include <errno.h>
#include <stdlib.h>

#include "cap_des.h"

static int before(const struct cap_event *a, const struct cap_event *b) {
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int cap_evq_push(struct cap_evq *q, double t, int kind, uint32_t who, uint32_t arg) {
  if (q->n == q->cap) {
    size_t nc = q->cap ? q->cap * 2 : 64;
    struct cap_event *h = realloc(q->h, nc * sizeof(*h));
    if (!h) return -ENOMEM;
    q->h = h;
    q->cap = nc;
  }
  struct cap_event e = {.t = t, .seq = q->seq++, .kind = kind, .who = who, .arg = arg};
  size_t i = q->n++;
  while (i > 0 && before(&e, &q->h[(i - 1) / 2])) {
    q->h[i] = q->h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  q->h[i] = e;
  return 0;
}

int cap_evq_pop(struct cap_evq *q, struct cap_event *out) {
  if (q->n == 0) return 0;
  *out = q->h[0];
  struct cap_event last = q->h[--q->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= q->n) break;
    if (c + 1 < q->n && before(&q->h[c + 1], &q->h[c])) c++;
    if (!before(&q->h[c], &last)) break;
    q->h[i] = q->h[c];
    i = c;
  }
  if (q->n) q->h[i] = last;
  q->now = out->t;
  q->popped++;
  return 1;
}

void cap_evq_free(struct cap_evq *q) {
  free(q->h);
  q->h = NULL;
  q->n = q->cap = 0;
}

static int serve(struct cap_evq *q, struct cap_station *s, uint32_t sid, uint32_t who, double svc) {
  s->busy++;
  s->requests++;
  s->busy_ns += svc;
  if (s->hold) return cap_evq_push(q, q->now, CAP_EV_SERVED, who, sid);
  return cap_evq_push(q, q->now + svc, CAP_EV_DEPART, who, sid);
}

int cap_station_arrive(struct cap_evq *q, struct cap_station *s, uint32_t sid, uint32_t who, double svc) {
  if (s->busy < s->servers) return serve(q, s, sid, who, svc);
  if (s->len == s->cap) {
    size_t nc = s->cap ? s->cap * 2 : 16;
    struct cap_waiting *n = malloc(nc * sizeof(*n));
    if (!n) return -ENOMEM;
    for (size_t i = 0; i < s->len; i++) n[i] = s->q[(s->head + i) % s->cap];
    free(s->q);
    s->q = n;
    s->cap = nc;
    s->head = 0;
  }
  s->q[(s->head + s->len++) % s->cap] = (struct cap_waiting){.who = who, .svc = svc, .arrived = q->now};
  return 0;
}

int cap_station_depart(struct cap_evq *q, struct cap_station *s, uint32_t sid) {
  s->busy--;
  if (!s->len) return 0;
  struct cap_waiting w = s->q[s->head];
  s->head = (s->head + 1) % s->cap;
  s->len--;
  s->wait_ns += q->now - w.arrived;
  return serve(q, s, sid, w.who, w.svc);
}

void cap_station_free(struct cap_station *s) {
  free(s->q);
  s->q = NULL;
}
