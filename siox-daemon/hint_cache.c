/*
 * Hint cache: the daemon's short-lived memory of the server's hint answers,
 * keyed by (uid, exe, args hash, path, component). All ranks of a job on a
 * node, and a job that opens many files of one name, ask the same question
 * within a moment; the cache answers them without a server round trip. The
 * TTL is short so that a hint set the server computes after a job is seen
 * by the next run (see hints.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* 64-bit FNV-1a, the knowledge base's application hash (siox_kb_args_hash). */
static uint64_t fnv1a(const char *s, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h;
}

int hint_cache_key(uint32_t uid, const char *job, const char *exe, const char *args, const char *path,
                   const char *component, char **key, size_t *len) {
  uint64_t args_hash = fnv1a(args, strlen(args), 0xcbf29ce484222325ull);
  /* NUL separators: no field can contain one, so distinct tuples give
   * distinct keys. */
  size_t n = strlen(job) + strlen(exe) + strlen(path) + strlen(component) + 64;
  char *k = malloc(n);
  if (!k) return -ENOMEM;
  int w = snprintf(k, n, "%" PRIu32 "%c%s%c%s%c%016" PRIx64 "%c%s%c%s", uid, 0, job, 0, exe, 0, args_hash, 0, path, 0,
                   component);
  if (w < 0 || (size_t)w >= n) {
    free(k);
    return -EINVAL;
  }
  *key = k;
  *len = (size_t)w;
  return 0;
}

void hint_cache_init(struct hint_cache *c, uint64_t ttl_ms, size_t max) {
  memset(c, 0, sizeof *c);
  c->ttl_ms = ttl_ms;
  c->max = max ? max : 1;
}

static void entry_free(struct hint_cache_entry *e) {
  free(e->key);
  free(e);
}

void hint_cache_destroy(struct hint_cache *c) {
  while (c->head) {
    struct hint_cache_entry *e = c->head;
    c->head = e->next;
    entry_free(e);
  }
  c->n = 0;
}

/* Unlinks and frees every expired entry. */
static void expire(struct hint_cache *c, int64_t now_ms) {
  for (struct hint_cache_entry **pp = &c->head; *pp;) {
    struct hint_cache_entry *e = *pp;
    if (e->expires_ms > now_ms) {
      pp = &e->next;
      continue;
    }
    *pp = e->next;
    entry_free(e);
    c->n--;
  }
}

const struct hint_answer *hint_cache_get(struct hint_cache *c, const char *key, size_t len, int64_t now_ms) {
  expire(c, now_ms);
  for (struct hint_cache_entry *e = c->head; e; e = e->next)
    if (e->key_len == len && memcmp(e->key, key, len) == 0) return &e->ans;
  return NULL;
}

/* Drops the oldest entry (the list's tail: new entries go to the head). */
static void evict_oldest(struct hint_cache *c) {
  struct hint_cache_entry **pp = &c->head;
  while (*pp && (*pp)->next) pp = &(*pp)->next;
  if (!*pp) return;
  entry_free(*pp);
  *pp = NULL;
  c->n--;
}

int hint_cache_put(struct hint_cache *c, const char *key, size_t len, const struct hint_answer *a, int64_t now_ms) {
  if (c->ttl_ms == 0) return 0; /* caching off */
  expire(c, now_ms);
  for (struct hint_cache_entry *e = c->head; e; e = e->next)
    if (e->key_len == len && memcmp(e->key, key, len) == 0) {
      e->ans = *a;
      e->expires_ms = now_ms + (int64_t)c->ttl_ms;
      return 0;
    }
  struct hint_cache_entry *e = calloc(1, sizeof *e);
  if (!e || !(e->key = malloc(len ? len : 1))) {
    free(e);
    return -ENOMEM;
  }
  memcpy(e->key, key, len);
  e->key_len = len;
  e->ans = *a;
  e->expires_ms = now_ms + (int64_t)c->ttl_ms;
  if (c->n >= c->max) evict_oldest(c);
  e->next = c->head;
  c->head = e;
  c->n++;
  return 0;
}
