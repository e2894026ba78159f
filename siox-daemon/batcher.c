/*
 * Batcher: turns validated client records into entries of the one open
 * struct siox_block that all sessions share. Records arrive a thread buffer
 * (one BATCH frame) at a time and are appended whole, so activities stay
 * grouped by process and thread and the codec's deltas stay small. Nothing
 * here allocates per record: the block's arrays and string arena are reused.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <siox/siox_ontology.h>

#include "daemon.h"

void batcher_init(struct batcher *b) {
  siox_block_init(&b->block);
  b->generation = 1;
  b->activities = 0;
}

void batcher_destroy(struct batcher *b) { siox_block_free(&b->block); }

void batcher_reset(struct batcher *b) {
  siox_block_reset(&b->block);
  b->generation++;
  b->activities = 0;
}

static char *dup_str(struct siox_block *blk, const char *s) {
  return siox_block_strdup(blk, s, s ? strlen(s) : 0);
}

/* Finds or registers the process entry of `who` in the open block. */
static int proc_index(struct batcher *b, struct batcher_slot *slot, const struct client_ident *who,
                      uint32_t *proc) {
  if (slot->generation == b->generation) {
    *proc = slot->proc;
    return 0;
  }
  struct siox_block *blk = &b->block;
  struct siox_block_process *p = siox_block_add_process(blk);
  if (!p)
    return -ENOMEM;
  p->pid = who->pid;
  p->uid = who->uid;
  p->nonce = who->nonce;
  p->host = dup_str(blk, who->host);
  p->exe = dup_str(blk, who->exe);
  p->args = dup_str(blk, who->args);
  p->job = dup_str(blk, who->job);
  if (!p->host || !p->exe || !p->args || !p->job) {
    blk->n_processes--; /* strings stay in the arena until reset: harmless */
    return -ENOMEM;
  }
  slot->generation = b->generation;
  slot->proc = *proc = (uint32_t)(blk->n_processes - 1);
  return 0;
}

struct add_ctx {
  struct batcher *b;
  uint32_t proc;
  const struct clock_conv *cc;
  struct batcher_slot *slot;
  const struct client_ident *who;
  struct daemon_counters *ctr;
  uint64_t drop_records, drop_activities; /* counted once the frame is taken */
};

static void copy_numeric(struct siox_value *dst, const struct siox_cw_attr *src) {
  dst->attr = src->attr;
  dst->vtype = src->vtype;
  dst->v.u64 = src->v.u64;
}

static int add_activity(struct add_ctx *c, const struct cw_rec *r) {
  const struct siox_cw_activity *f = r->fixed;
  struct siox_block *blk = &c->b->block;
  struct siox_block_activity *a = siox_block_add_activity(blk);
  if (!a)
    return -ENOMEM;
  a->proc = c->proc;
  a->type_id = r->a;
  a->aid = f->aid;
  a->parent = f->parent;
  a->start_ns = clock_conv_ns(c->cc, f->t_start);
  a->end_ns = clock_conv_ns(c->cc, f->t_end);
  a->err = f->err;
  struct siox_value *v = siox_block_add_attrs(blk, a, r->nattr);
  if (!v) {
    blk->n_activities--;
    return -ENOMEM;
  }
  for (uint32_t i = 0; i < r->nattr; i++)
    copy_numeric(&v[i], &r->attrs[i]);
  c->b->activities++;
  return 0;
}

static int add_node(struct add_ctx *c, const struct cw_rec *r) {
  struct siox_block *blk = &c->b->block;
  struct siox_block_node *n = siox_block_add_node(blk);
  if (!n)
    return -ENOMEM;
  n->proc = c->proc;
  n->unid = r->a;
  n->hwid = siox_block_strdup(blk, r->str[0], r->len[0]);
  n->swid = siox_block_strdup(blk, r->str[1], r->len[1]);
  n->iid = siox_block_strdup(blk, r->str[2], r->len[2]);
  return n->hwid && n->swid && n->iid ? 0 : -ENOMEM;
}

static int add_edge(struct add_ctx *c, const struct cw_rec *r) {
  const struct siox_cw_edge *f = r->fixed;
  struct siox_block_edge *e = siox_block_add_edge(&c->b->block);
  if (!e)
    return -ENOMEM;
  e->proc = c->proc;
  e->from = r->a;
  e->to = f->to;
  return 0;
}

static int add_type(struct add_ctx *c, const struct cw_rec *r) {
  const struct siox_cw_type *f = r->fixed;
  struct siox_block *blk = &c->b->block;
  struct siox_block_type *t = siox_block_add_type(blk);
  if (!t)
    return -ENOMEM;
  t->proc = c->proc;
  t->type_id = r->a;
  t->unid = f->unid;
  t->name = siox_block_strdup(blk, r->str[0], r->len[0]);
  return t->name ? 0 : -ENOMEM;
}

static int add_target(struct add_ctx *c, const struct cw_rec *r) {
  struct siox_block *blk = &c->b->block;
  struct siox_block_target *t = siox_block_add_target(blk);
  if (!t)
    return -ENOMEM;
  t->proc = c->proc;
  t->target_id = r->a;
  t->hwid = siox_block_strdup(blk, r->str[0], r->len[0]);
  t->swid = siox_block_strdup(blk, r->str[1], r->len[1]);
  return t->hwid && t->swid ? 0 : -ENOMEM;
}

static int add_node_attr(struct add_ctx *c, const struct cw_rec *r) {
  const struct siox_cw_attr *f = r->fixed;
  struct siox_block *blk = &c->b->block;
  struct siox_block_node_attr *na = siox_block_add_node_attr(blk);
  if (!na)
    return -ENOMEM;
  na->proc = c->proc;
  na->unid = r->a;
  na->value.attr = f->attr;
  na->value.vtype = f->vtype;
  if (f->vtype == SIOX_VT_STR || f->vtype == SIOX_VT_BYTES)
    return siox_block_set_bytes(blk, &na->value, r->str[0], r->len[0]);
  na->value.v.u64 = f->v.u64;
  return 0;
}

static int add_attr_str(struct add_ctx *c, const struct cw_rec *r) {
  const struct siox_cw_attr_str *f = r->fixed;
  struct siox_block *blk = &c->b->block;
  struct siox_block_string_attr *sa = siox_block_add_string_attr(blk);
  if (!sa)
    return -ENOMEM;
  sa->proc = c->proc;
  sa->aid = f->aid;
  sa->value.attr = r->a;
  sa->value.vtype = SIOX_VT_STR;
  return siox_block_set_bytes(blk, &sa->value, r->str[0], r->len[0]);
}

/* The wire has no vtype for descriptor values: the ontology names it; for an
 * unknown id a length means bytes and none an integer. */
static uint32_t desc_vtype(const struct siox_cw_desc_value *dv) {
  const struct siox_attr_info *info = siox_attr_lookup(dv->type);
  if (dv->len)
    return info && info->type == SIOX_VT_STR ? SIOX_VT_STR : SIOX_VT_BYTES;
  if (info && info->type != SIOX_VT_STR && info->type != SIOX_VT_BYTES)
    return info->type;
  return info ? info->type : SIOX_VT_U64;
}

static int add_desc(struct add_ctx *c, const struct cw_rec *r) {
  const struct siox_cw_desc *f = r->fixed;
  struct siox_block *blk = &c->b->block;
  struct siox_block_descriptor *d = siox_block_add_descriptor(blk);
  if (!d)
    return -ENOMEM;
  d->proc = c->proc;
  d->kind = r->a;
  d->aid = f->aid;
  d->node = f->node;
  d->offset = f->offset;
  d->length = f->length;
  d->nvalues = f->ndesc;
  for (uint32_t i = 0; i < f->ndesc; i++) {
    struct siox_value *v = &d->values[i];
    v->attr = r->dv[i]->type;
    v->vtype = desc_vtype(r->dv[i]);
    v->v.u64 = r->dv[i]->value;
    bool bytes = v->vtype == SIOX_VT_STR || v->vtype == SIOX_VT_BYTES;
    if (bytes && siox_block_set_bytes(blk, v, r->dv_bytes[i], r->dv[i]->len) < 0)
      return -ENOMEM;
  }
  return 0;
}

/* Counts and logs a record validate_record refused; the log line is written
 * for the 1st, 2nd, 4th, 8th ... drop of a client, so a client that sends
 * nothing but bad records cannot flood the log. */
static void dropped(struct add_ctx *c, const struct cw_rec *r, const char *why) {
  uint64_t n = c->slot->dropped_records + ++c->drop_records;
  c->drop_activities += r->type == SIOX_REC_ACTIVITY;
  if ((n & (n - 1)) == 0)
    fprintf(stderr,
            "siox-daemon: client pid %u uid %u: record type %u dropped (daemon_validation): %s; %" PRIu64
            " of its records dropped so far\n",
            c->who->pid, c->who->uid, r->type, why, n);
}

static int add_record(void *ctx, const struct cw_rec *r) {
  struct add_ctx *c = ctx;
  const char *why = validate_record(c->slot, r);
  if (why) {
    dropped(c, r, why);
    return 0;
  }
  switch (r->type) {
  case SIOX_REC_ACTIVITY:
    return add_activity(c, r);
  case SIOX_REC_NODE:
    return add_node(c, r);
  case SIOX_REC_EDGE:
    return add_edge(c, r);
  case SIOX_REC_TYPE:
    return add_type(c, r);
  case SIOX_REC_TARGET:
    return add_target(c, r);
  case SIOX_REC_NODE_ATTR:
    return add_node_attr(c, r);
  case SIOX_REC_ATTR_STR:
    return add_attr_str(c, r);
  case SIOX_REC_DESC:
    return add_desc(c, r);
  }
  return -EBADMSG; /* the walker let an unknown type through: a bug */
}

/* What the open block held before a frame: a frame that fails its walk
 * half way (a malformed record, no memory) is taken back whole. The walk
 * checks each record before the batcher sees it, so one pass both checks
 * and adds (a first pass that only checked cost about 60 instructions an
 * activity). */
struct block_mark {
  size_t n_processes, n_nodes, n_edges, n_types, n_targets, n_node_attrs, n_string_attrs, n_descriptors;
  size_t n_activities, n_attrs, arena_used;
  struct siox_block_chunk *arena_cur;
  uint64_t activities, slot_generation;
  uint32_t slot_proc;
};

static void mark(const struct batcher *b, const struct batcher_slot *slot, struct block_mark *m) {
  const struct siox_block *k = &b->block;
  *m = (struct block_mark){k->n_processes, k->n_nodes, k->n_edges, k->n_types, k->n_targets, k->n_node_attrs,
                           k->n_string_attrs, k->n_descriptors, k->n_activities, k->n_attrs,
                           siox_block_arena_used(k), k->arena_cur, b->activities, slot->generation, slot->proc};
}

static void rollback(struct batcher *b, struct batcher_slot *slot, const struct block_mark *m) {
  struct siox_block *k = &b->block;
  k->n_processes = m->n_processes, k->n_nodes = m->n_nodes, k->n_edges = m->n_edges, k->n_types = m->n_types;
  k->n_targets = m->n_targets, k->n_node_attrs = m->n_node_attrs, k->n_string_attrs = m->n_string_attrs;
  k->n_descriptors = m->n_descriptors, k->n_activities = m->n_activities, k->n_attrs = m->n_attrs;
  siox_block_arena_rewind(k, m->arena_cur, m->arena_used);
  b->activities = m->activities;
  slot->generation = m->slot_generation, slot->proc = m->slot_proc;
}

int batcher_add_records(struct batcher *b, struct batcher_slot *slot, const struct client_ident *who,
                        const struct clock_conv *cc, const uint8_t *recs, size_t len, struct daemon_counters *ctr) {
  struct add_ctx c = {.b = b, .cc = cc, .slot = slot, .who = who, .ctr = ctr};
  struct block_mark m;
  mark(b, slot, &m);
  int rc = proc_index(b, slot, who, &c.proc);
  b->why = "malformed record in BATCH";
  if (rc == 0)
    rc = cw_walk(recs, len, add_record, &c, &b->why);
  if (rc < 0) {
    rollback(b, slot, &m);
    return rc;
  }
  slot->dropped_records += c.drop_records;
  slot->dropped_validation += c.drop_activities;
  ctr->records_dropped_validation += c.drop_records;
  ctr->activities_dropped_validation += c.drop_activities;
  return 0;
}

int batcher_add_stats(struct batcher *b, struct batcher_slot *slot, const struct client_ident *who,
                      const struct siox_cw_stats *st) {
  uint32_t proc;
  int rc = proc_index(b, slot, who, &proc);
  if (rc < 0)
    return rc;
  struct siox_block_stats *s = siox_block_add_stats(&b->block);
  if (!s)
    return -ENOMEM;
  s->proc = proc;
  s->activities = st->activities;
  s->records = st->records;
  s->dropped = st->dropped;
  s->dropped_exit = st->dropped_exit;
  return 0;
}

int batcher_put_stats(struct batcher *b, struct batcher_slot *slot, const struct client_ident *who,
                      const struct siox_block_stats *vals, uint64_t *gen, uint32_t *idx) {
  uint32_t proc;
  int rc = proc_index(b, slot, who, &proc);
  if (rc < 0)
    return rc;
  struct siox_block_stats *s;
  if (*gen == b->generation) {
    s = &b->block.stats[*idx];
  } else {
    if (!(s = siox_block_add_stats(&b->block)))
      return -ENOMEM;
    *gen = b->generation;
    *idx = (uint32_t)(b->block.n_stats - 1);
  }
  *s = *vals;
  s->proc = proc;
  return 0;
}
