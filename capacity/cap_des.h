/*
 * The discrete-event core of the simulation (cap_des.c): a time-ordered
 * event queue and FIFO stations with c servers. Internal to
 * libsiox-capacity (and its unit test, which runs an M/D/1 queue on it).
 */
#ifndef SIOX_CAP_DES_H
#define SIOX_CAP_DES_H

#include <stddef.h>
#include <stdint.h>

struct cap_event {
  double t;      /* ns */
  uint64_t seq;  /* ties at equal t run in the order they were scheduled */
  int kind;
  uint32_t who;  /* the entity (a rank) */
  uint32_t arg;  /* e.g. the station */
};

struct cap_evq {
  struct cap_event *h;
  size_t n, cap;
  uint64_t seq;
  double now;
  uint64_t popped;
};

/* 0 or -ENOMEM. */
int cap_evq_push(struct cap_evq *q, double t, int kind, uint32_t who, uint32_t arg);
/* The earliest event into *e (now becomes its time); 0 when empty. */
int cap_evq_pop(struct cap_evq *q, struct cap_event *e);
void cap_evq_free(struct cap_evq *q);

/* A FIFO queue in front of `servers` identical servers. */
struct cap_waiting {
  uint32_t who;
  double svc, arrived;
};
struct cap_station {
  uint32_t servers, busy;
  /* 1: a request that gets a server is not timed here: a CAP_EV_SERVED is
   * scheduled at once and the caller schedules its CAP_EV_DEPART (the
   * simulation's node CPU: the request holds the server while it waits for
   * and uses a core; cap_sim.c). */
  int hold;
  struct cap_waiting *q; /* ring */
  size_t head, len, cap;
  uint64_t requests;
  double busy_ns, wait_ns;
};

#define CAP_EV_DEPART 1 /* who's service at station arg ended */
#define CAP_EV_SERVED 3 /* who got a server of station arg, which holds it (hold) */

/* who arrives at station s (index sid) needing svc ns: served at once when
 * a server is free (a CAP_EV_DEPART is scheduled, a CAP_EV_SERVED at once
 * when s->hold), else queued. 0/-ENOMEM. */
int cap_station_arrive(struct cap_evq *q, struct cap_station *s, uint32_t sid, uint32_t who, double svc);
/* A server of s finished (call on CAP_EV_DEPART): starts the next waiting
 * request, if any. 0/-ENOMEM. */
int cap_station_depart(struct cap_evq *q, struct cap_station *s, uint32_t sid);
void cap_station_free(struct cap_station *s);

/* Slots (cap_slots.c): at most limit holders, the rest wait FIFO. */
struct cap_slots {
  uint32_t limit, used;
  uint32_t *q; /* ring of waiting entities */
  size_t head, len, cap;
};
/* 1: who holds a slot now; 0: who waits (cap_slots_give hands it one); -ENOMEM. */
int cap_slots_take(struct cap_slots *p, uint32_t who);
/* A holder is done: 1 and *next = the waiter that holds the slot now, or 0 (freed). */
int cap_slots_give(struct cap_slots *p, uint32_t *next);
void cap_slots_free(struct cap_slots *p);

#endif
