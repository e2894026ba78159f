/*
 * The causal links the database thread stored that no grant pass (roles.c)
 * has read yet. Every writer of causal_links is on this thread (the window's
 * batch transactions, match.c's passes), so it can hand the grant pass the
 * pairs themselves; the pass no longer finds them by an ordered id, and
 * causal_links needs no link_id column, sequence or btree (schema 037: a
 * quarter of a link row's cost, README "The grant pass learns the new links
 * in process").
 *
 * Pairs of a transaction that rolls back are dropped; they count only once
 * it commits. What the queue cannot know (a start: links of an earlier run;
 * a reconnect: did the last COMMIT land?; more pairs than QUEUE_MAX) sets
 * `all`: the next pass reads every link, as each start's first pass did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* 16 MB: 5 s of links at 200k a second, between passes 1 s apart. */
#define QUEUE_MAX ((size_t)1 << 20)

static void overflow(struct siox_grant_queue *q) {
  free(q->pairs);
  q->pairs = NULL;
  q->n = q->committed = q->cap = 0;
  q->all = 1;
}

void siox_grant_queue_add(struct siox_grant_queue *q, int64_t parent, int64_t child) {
  if (q->all) return; /* the next pass reads every link anyway */
  if (q->n == q->cap) {
    size_t ncap = q->cap ? q->cap * 2 : 4096;
    int64_t *np = ncap <= QUEUE_MAX ? realloc(q->pairs, ncap * 2 * sizeof *np) : NULL;
    if (!np) {
      siox_log("grant queue: more than %zu links since the last grant pass; the next one reads every link", q->cap);
      return overflow(q);
    }
    q->pairs = np, q->cap = ncap;
  }
  q->pairs[2 * q->n] = parent;
  q->pairs[2 * q->n + 1] = child;
  q->n++;
}

void siox_grant_queue_commit(struct siox_grant_queue *q) { q->committed = q->n; }

void siox_grant_queue_rollback(struct siox_grant_queue *q) { q->n = q->committed; }

int siox_grant_queue_arrays(const struct siox_grant_queue *q, char **parents, char **children, size_t *n) {
  *n = q->committed;
  *parents = siox_int_array(q->pairs, q->committed, 2 * sizeof *q->pairs);
  *children = siox_int_array(q->pairs ? q->pairs + 1 : NULL, q->committed, 2 * sizeof *q->pairs);
  if (*parents && *children) return 0;
  free(*parents), free(*children);
  *parents = *children = NULL;
  return -ENOMEM;
}

void siox_grant_queue_taken(struct siox_grant_queue *q, size_t n, int all) {
  if (all) q->all = 0, n = q->committed; /* every committed link was read */
  if (n > q->n) n = q->n;
  if (q->pairs) memmove(q->pairs, q->pairs + 2 * n, (q->n - n) * 2 * sizeof *q->pairs);
  q->n -= n;
  q->committed = q->committed > n ? q->committed - n : 0;
}

void siox_grant_queue_free(struct siox_grant_queue *q) {
  free(q->pairs);
  memset(q, 0, sizeof *q);
}
