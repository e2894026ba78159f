/*
 * The block container: plain arrays that siox-daemon fills from client
 * records and siox_block_decode() fills on the server. Strings live in a
 * chunked arena, so filling a block costs no malloc per string and a reset
 * (between batches) is O(1) while keeping every chunk and array for reuse.
 */
#include "siox_block.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_MIN (64u << 10)

struct siox_block_chunk {
  struct siox_block_chunk *next;
  size_t size, used;
  char data[];
};

void siox_block_init(struct siox_block *b) {
  memset(b, 0, sizeof *b);
}

/* O(1): chunks after the head are marked empty lazily, when the arena
 * advances into them again. */
void siox_block_reset(struct siox_block *b) {
  b->n_processes = b->n_nodes = b->n_edges = b->n_types = b->n_targets = 0;
  b->n_node_attrs = b->n_string_attrs = b->n_descriptors = b->n_stats = 0;
  b->n_activities = b->n_attrs = 0;
  b->arena_cur = b->arena_head;
  if (b->arena_head) b->arena_head->used = 0;
}

void siox_block_free(struct siox_block *b) {
  for (struct siox_block_chunk *c = b->arena_head, *next; c; c = next) {
    next = c->next;
    free(c);
  }
  free(b->processes);
  free(b->nodes);
  free(b->edges);
  free(b->types);
  free(b->targets);
  free(b->node_attrs);
  free(b->string_attrs);
  free(b->descriptors);
  free(b->stats);
  free(b->activities);
  free(b->attrs);
  siox_block_init(b);
}

/* ---- arena -------------------------------------------------------------- */

static struct siox_block_chunk *chunk_new(size_t need) {
  size_t size = need > CHUNK_MIN ? need : CHUNK_MIN;
  struct siox_block_chunk *c = malloc(sizeof *c + size);
  if (!c) return NULL;
  c->next = NULL;
  c->size = size;
  c->used = 0;
  return c;
}

/* Walks forward from the current chunk to one with room (skipping the tail
 * of a full one) and appends a new chunk at the end of the list if none has. */
static char *arena_alloc(struct siox_block *b, size_t need) {
  struct siox_block_chunk *c = b->arena_cur, *last = NULL;
  while (c && c->size - c->used < need) {
    last = c;
    c = c->next;
    if (c) c->used = 0;
  }
  if (!c) {
    if (!(c = chunk_new(need))) return NULL;
    if (last) last->next = c;
    else b->arena_head = c;
  }
  b->arena_cur = c;
  char *p = c->data + c->used;
  c->used += need;
  return p;
}

size_t siox_block_arena_used(const struct siox_block *b) { return b->arena_cur ? b->arena_cur->used : 0; }

/* Back to a position siox_block_arena_used() and arena_cur gave: chunks
 * after it are marked empty when the arena advances into them again. */
void siox_block_arena_rewind(struct siox_block *b, struct siox_block_chunk *cur, size_t used) {
  if (!cur) { /* empty then: the chunks allocated since stay, empty */
    cur = b->arena_head;
    used = 0;
  }
  b->arena_cur = cur;
  if (cur) cur->used = used;
}

char *siox_block_strdup(struct siox_block *b, const char *s, size_t len) {
  if (len >= SIZE_MAX / 2) return NULL;
  char *p = arena_alloc(b, len + 1);
  if (!p) return NULL;
  if (len) memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

int siox_block_set_bytes(struct siox_block *b, struct siox_value *v, const void *p, size_t len) {
  if (len > UINT32_MAX) return -EINVAL;
  char *copy = siox_block_strdup(b, p, len);
  if (!copy) return -ENOMEM;
  v->bytes = copy;
  v->len = (uint32_t)len;
  return 0;
}

/* ---- arrays ------------------------------------------------------------- */

/* Returns arr grown to hold at least need elements (updating *cap), or NULL
 * on ENOMEM with arr untouched. */
static void *grow(void *arr, size_t *cap, size_t need, size_t elem) {
  size_t n = *cap ? *cap : 16;
  while (n < need) n *= 2;
  if (n > SIZE_MAX / elem) return NULL;
  void *p = realloc(arr, n * elem);
  if (p) *cap = n;
  return p;
}

/* Body of every siox_block_add_*: make room for one more, zero it, count it. */
#define BLOCK_ADD(b, name)                                                            \
  do {                                                                                \
    if ((b)->n_##name == (b)->cap_##name) {                                           \
      void *p_ = grow((b)->name, &(b)->cap_##name, (b)->n_##name + 1, sizeof *(b)->name); \
      if (!p_) return NULL;                                                           \
      (b)->name = p_;                                                                 \
    }                                                                                 \
    return memset(&(b)->name[(b)->n_##name++], 0, sizeof *(b)->name);                 \
  } while (0)

struct siox_block_process *siox_block_add_process(struct siox_block *b) { BLOCK_ADD(b, processes); }
struct siox_block_node *siox_block_add_node(struct siox_block *b) { BLOCK_ADD(b, nodes); }
struct siox_block_edge *siox_block_add_edge(struct siox_block *b) { BLOCK_ADD(b, edges); }
struct siox_block_type *siox_block_add_type(struct siox_block *b) { BLOCK_ADD(b, types); }
struct siox_block_target *siox_block_add_target(struct siox_block *b) { BLOCK_ADD(b, targets); }
struct siox_block_node_attr *siox_block_add_node_attr(struct siox_block *b) { BLOCK_ADD(b, node_attrs); }
struct siox_block_string_attr *siox_block_add_string_attr(struct siox_block *b) { BLOCK_ADD(b, string_attrs); }
struct siox_block_descriptor *siox_block_add_descriptor(struct siox_block *b) { BLOCK_ADD(b, descriptors); }
struct siox_block_stats *siox_block_add_stats(struct siox_block *b) { BLOCK_ADD(b, stats); }
struct siox_block_activity *siox_block_add_activity(struct siox_block *b) { BLOCK_ADD(b, activities); }

struct siox_value *siox_block_add_attrs(struct siox_block *b, struct siox_block_activity *a, uint32_t n) {
  size_t need = b->n_attrs + n + 1; /* +1: a valid pointer even for n == 0 */
  if (need > UINT32_MAX) return NULL; /* attr_first is 32-bit */
  if (need > b->cap_attrs) {
    void *p = grow(b->attrs, &b->cap_attrs, need, sizeof *b->attrs);
    if (!p) return NULL;
    b->attrs = p;
  }
  struct siox_value *first = &b->attrs[b->n_attrs];
  memset(first, 0, n * sizeof *first);
  a->attr_first = (uint32_t)b->n_attrs;
  a->nattr = n;
  b->n_attrs += n;
  return first;
}
