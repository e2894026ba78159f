/*
 * Validation of client records before they enter a batch. siox-server
 * refuses a whole batch when one record breaks its rules, and a batch holds
 * the records of every client of the node: one bad record (an aid >= 2^32,
 * an unknown attribute, a type the process never registered) would take
 * everyone's records with it. So the daemon applies the same rules to each
 * record — the content rules are the server's own code (protocol/
 * record_rules.c); the registry rules are checked against what this client
 * registered on its connection (the client re-sends its whole registration
 * log on every new connection, ahead of any activity) — and drops a bad
 * record alone. The caller counts and logs it.
 */
#include <errno.h>
#include <stdlib.h>

#include "daemon.h"
#include "siox_record_rules.h"

/* A set of (kind, id) keys: open addressing, linear probing. Key 0 marks
 * an empty slot, so stored keys have a kind >= 1 in their upper half. */
struct validate_state {
  uint64_t *keys;
  size_t n, cap;
  /* The last activity type found registered (registrations are never
   * taken back): consecutive activities mostly share their type, and the
   * hash probe was about 20 instructions an activity. 0: none yet. */
  uint64_t last_type_key;
};

enum reg_kind { REG_NODE = 1, REG_TYPE = 2, REG_TARGET = 3 };

static uint64_t key_of(enum reg_kind k, uint32_t id) { return (uint64_t)k << 32 | id; }

static size_t slot_of(uint64_t key, size_t cap) {
  key *= 0x9e3779b97f4a7c15ull; /* Fibonacci hashing spreads consecutive ids */
  return (size_t)(key >> 32) & (cap - 1);
}

static bool has(const struct validate_state *v, enum reg_kind k, uint32_t id) {
  if (!v || !v->cap)
    return false;
  uint64_t key = key_of(k, id);
  for (size_t i = slot_of(key, v->cap);; i = (i + 1) & (v->cap - 1)) {
    if (v->keys[i] == key)
      return true;
    if (v->keys[i] == 0)
      return false;
  }
}

static void put_key(uint64_t *keys, size_t cap, uint64_t key) {
  size_t i = slot_of(key, cap);
  while (keys[i] && keys[i] != key)
    i = (i + 1) & (cap - 1);
  keys[i] = key;
}

/* Returns 0 or -ENOMEM (the record is then refused: nothing it names could
 * be checked later). */
static int add(struct validate_state *v, enum reg_kind k, uint32_t id) {
  if (has(v, k, id))
    return 0;
  if ((v->n + 1) * 2 > v->cap) {
    size_t cap = v->cap ? v->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    if (!keys)
      return -1;
    for (size_t i = 0; i < v->cap; i++)
      if (v->keys[i])
        put_key(keys, cap, v->keys[i]);
    free(v->keys);
    v->keys = keys;
    v->cap = cap;
  }
  put_key(v->keys, v->cap, key_of(k, id));
  v->n++;
  return 0;
}

static const char *registered(struct validate_state *v, enum reg_kind k, uint32_t id) {
  return add(v, k, id) == 0 ? NULL : "out of memory recording a registration";
}

static const char *check_activity(struct validate_state *v, const struct cw_rec *r) {
  const struct siox_cw_activity *f = r->fixed;
  const char *why = siox_rule_aid(f->aid, f->parent);
  for (uint32_t i = 0; !why && i < r->nattr; i++)
    why = siox_rule_numeric_attr(r->attrs[i].attr, r->attrs[i].vtype);
  if (why || key_of(REG_TYPE, r->a) == v->last_type_key)
    return why;
  if (!has(v, REG_TYPE, r->a))
    return SIOX_RULE_UNKNOWN_TYPE;
  v->last_type_key = key_of(REG_TYPE, r->a);
  return NULL;
}

static const char *check_desc(const struct validate_state *v, const struct cw_rec *r) {
  const struct siox_cw_desc *f = r->fixed;
  const char *why = siox_rule_desc_record(r->a, f->ndesc, f->aid);
  for (uint32_t i = 0; !why && i < f->ndesc && i < 2; i++)
    why = siox_rule_desc_value(r->dv[i]->type);
  /* Target 0 means "any receiver"; others must be registered. */
  if (!why && r->a == SIOX_DESC_SEND && f->node && !has(v, REG_TARGET, f->node))
    why = SIOX_RULE_UNKNOWN_TARGET;
  return why;
}

static const char *check(struct validate_state *v, const struct cw_rec *r) {
  switch (r->type) {
  case SIOX_REC_NODE:
    return registered(v, REG_NODE, r->a);
  case SIOX_REC_TYPE: {
    const struct siox_cw_type *f = r->fixed;
    if (!has(v, REG_NODE, f->unid))
      return "activity type " SIOX_RULE_UNKNOWN_NODE;
    return registered(v, REG_TYPE, r->a);
  }
  case SIOX_REC_TARGET:
    return registered(v, REG_TARGET, r->a);
  case SIOX_REC_EDGE: {
    const struct siox_cw_edge *f = r->fixed;
    return has(v, REG_NODE, r->a) && has(v, REG_NODE, f->to) ? NULL : "edge " SIOX_RULE_UNKNOWN_NODE;
  }
  case SIOX_REC_NODE_ATTR: {
    const struct siox_cw_attr *f = r->fixed;
    const char *why = siox_rule_attr(f->attr);
    return why ? why : has(v, REG_NODE, r->a) ? NULL : "node attribute " SIOX_RULE_UNKNOWN_NODE;
  }
  case SIOX_REC_ATTR_STR:
    return siox_rule_attr(r->a);
  case SIOX_REC_ACTIVITY:
    return check_activity(v, r);
  case SIOX_REC_DESC:
    return check_desc(v, r);
  }
  return "unknown record type";
}

const char *validate_record(struct batcher_slot *slot, const struct cw_rec *r) {
  if (!slot->vs && !(slot->vs = calloc(1, sizeof *slot->vs)))
    return "out of memory for validation state";
  return check(slot->vs, r);
}

void validate_free(struct batcher_slot *slot) {
  if (slot->vs)
    free(slot->vs->keys);
  free(slot->vs);
  slot->vs = NULL;
}

/* The registrations recorded for a client, as opaque keys, so that the
 * open-batch journal can carry them: a replayed batch is then validated
 * against what the client had registered when its records were journaled,
 * and keeps or drops exactly what the live daemon kept or dropped. */
size_t validate_export(const struct batcher_slot *slot, uint64_t **keys) {
  const struct validate_state *v = slot->vs;
  *keys = NULL;
  if (!v || !v->n || !(*keys = malloc(v->n * sizeof **keys)))
    return 0;
  size_t k = 0;
  for (size_t i = 0; i < v->cap; i++)
    if (v->keys[i])
      (*keys)[k++] = v->keys[i];
  return k;
}

int validate_import(struct batcher_slot *slot, const uint64_t *keys, size_t n) {
  if (!slot->vs && !(slot->vs = calloc(1, sizeof *slot->vs)))
    return -ENOMEM;
  for (size_t i = 0; i < n; i++) {
    enum reg_kind k = (enum reg_kind)(keys[i] >> 32);
    if (k < REG_NODE || k > REG_TARGET)
      return -EBADMSG;
    if (add(slot->vs, k, (uint32_t)keys[i]) < 0)
      return -ENOMEM;
  }
  return 0;
}
