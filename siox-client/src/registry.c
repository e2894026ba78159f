/*
 * Registrations: nodes, edges, node attributes, activity types and remote
 * targets. Not hot path, so a mutex guards them. Every registration record
 * goes into one process-wide, growable log that the flusher ships before the
 * activity rings, so no activity can reach the daemon ahead of the node or
 * type it names, and no registration is ever dropped.
 */
#include <stdlib.h>

#include "client.h"

#define PAD8(n) (((size_t)(n) + 7u) & ~(size_t)7u)

struct names { /* registered tuples, handle = index + 1 */
  char **keys; /* "a\0b\0c" joined, compared with memcmp over key_len */
  size_t *key_len;
  uint32_t n, cap;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct names nodes, types, targets, edges;
static uint8_t *log_buf; /* owned; grows, never shrinks */
static uint64_t log_len, log_cap;
_Atomic uint32_t siox__ntypes;
/* Published handle counts, so that descriptor calls validate without a lock. */
static _Atomic uint32_t nnodes, ntargets;

/* ---------------------------------------------------------------------------
 * Registration log
 * ------------------------------------------------------------------------- */
static int log_reserve(size_t n) {
  if (log_len + n <= log_cap) return 0;
  uint64_t cap = log_cap ? log_cap : 4096;
  while (cap < log_len + n) cap *= 2;
  uint8_t *p = realloc(log_buf, cap);
  if (!p) return -ENOMEM;
  log_buf = p;
  log_cap = cap;
  return 0;
}

/* Appends one record: header, fixed part, then the strings back to back,
 * zero-padded to 8 bytes. Called with reg_lock held. */
static int log_append(uint16_t type, uint32_t a, const void *fixed, size_t flen, const char *const *s,
                      const size_t *slen, int ns) {
  size_t body = flen;
  for (int i = 0; i < ns; i++) body += slen[i];
  size_t total = sizeof(struct siox_cw_rec_hdr) + PAD8(body);
  if (log_reserve(total) < 0) return -ENOMEM;
  uint8_t *p = log_buf + log_len;
  memset(p, 0, total);
  struct siox_cw_rec_hdr h = {type, (uint16_t)(total / 8), a};
  memcpy(p, &h, sizeof h);
  p += sizeof h;
  memcpy(p, fixed, flen);
  p += flen;
  for (int i = 0; i < ns; i++) {
    memcpy(p, s[i], slen[i]);
    p += slen[i];
  }
  log_len += total;
  return 0;
}

uint64_t siox__reglog_read(uint64_t from, uint8_t *dst, uint64_t max) {
  pthread_mutex_lock(&reg_lock);
  uint64_t end = log_len;
  if (dst && from < end) memcpy(dst, log_buf + from, end - from < max ? end - from : max);
  pthread_mutex_unlock(&reg_lock);
  return end;
}

/* ---------------------------------------------------------------------------
 * Handle tables
 * ------------------------------------------------------------------------- */

/* Returns the handle of key in t, or 0. */
static uint32_t names_find(const struct names *t, const char *key, size_t len) {
  for (uint32_t i = 0; i < t->n; i++)
    if (t->key_len[i] == len && memcmp(t->keys[i], key, len) == 0) return i + 1;
  return 0;
}

/* Adds a copy of key (the table owns it); returns its handle or -ENOMEM. */
static int64_t names_add(struct names *t, const char *key, size_t len) {
  if (t->n == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 16;
    char **k = realloc(t->keys, cap * sizeof *k);
    if (k) t->keys = k;
    size_t *l = realloc(t->key_len, cap * sizeof *l);
    if (l) t->key_len = l;
    if (!k || !l) return -ENOMEM;
    t->cap = cap;
  }
  char *copy = malloc(len ? len : 1);
  if (!copy) return -ENOMEM;
  memcpy(copy, key, len);
  t->keys[t->n] = copy;
  t->key_len[t->n] = len;
  return ++t->n;
}

/* Joins up to 3 strings with NULs into buf (caller sized it). */
static size_t key_join(char *buf, const char *const *s, const size_t *len, int n) {
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    memcpy(buf + off, s[i], len[i]);
    off += len[i];
    buf[off++] = '\0';
  }
  return off;
}

static int str_ok(const char *s, size_t max, size_t *len) {
  if (!s) return 0;
  *len = strnlen(s, max + 1);
  return *len > 0 && *len <= max;
}

int siox__node_valid(siox_unid node) {
  return node >= 1 && node <= atomic_load_explicit(&nnodes, memory_order_acquire);
}

int siox__target_valid(siox_target_id target) {
  return target <= atomic_load_explicit(&ntargets, memory_order_acquire);
}

/* Raises a published count to h (handles are dense, so this covers all). */
static void publish(_Atomic uint32_t *count, uint32_t h) {
  uint32_t cur = atomic_load(count);
  while (h > cur && !atomic_compare_exchange_weak(count, &cur, h)) {
  }
}

/* Looks key up in t; when new, adds it and logs its record. Returns the
 * handle (> 0) or a negative errno. Takes reg_lock. */
static int64_t intern(struct names *t, const char *key, size_t klen, uint16_t rtype, const void *fixed,
                      size_t flen, const char *const *s, const size_t *slen, int ns) {
  siox__in_lib++;
  pthread_mutex_lock(&reg_lock);
  int64_t h = names_find(t, key, klen);
  if (h == 0) {
    uint64_t mark = log_len;
    h = names_add(t, key, klen);
    if (h > 0 && rtype && log_append(rtype, (uint32_t)h, fixed, flen, s, slen, ns) < 0) {
      free(t->keys[--t->n]);
      log_len = mark;
      h = -ENOMEM;
    }
  }
  pthread_mutex_unlock(&reg_lock);
  siox__in_lib--;
  return h;
}

/* ---------------------------------------------------------------------------
 * Public registration API
 * ------------------------------------------------------------------------- */
int siox_node_register(const char *hwid, const char *swid, const char *iid, siox_unid *out) {
  size_t len[3] = {0, 0, 0};
  if (!out || !str_ok(hwid, SIOX_CW_MAX_STR, &len[0]) || !str_ok(swid, SIOX_CW_MAX_STR, &len[1]) ||
      (iid && !str_ok(iid, SIOX_CW_MAX_STR, &len[2])))
    return -EINVAL;
  if (!siox__ensure()) return (*out = 0, 0);
  const char *s[3] = {hwid, swid, iid ? iid : ""};
  char key[3 * (SIOX_CW_MAX_STR + 1)];
  size_t klen = key_join(key, s, len, 3);
  struct siox_cw_node f = {(uint16_t)len[0], (uint16_t)len[1], (uint16_t)len[2], 0};
  int64_t h = intern(&nodes, key, klen, SIOX_REC_NODE, &f, sizeof f, s, len, 3);
  if (h < 0) return (int)h;
  publish(&nnodes, (uint32_t)h);
  *out = (siox_unid)h;
  return 0;
}

int siox_edge_register(siox_unid from, siox_unid to) {
  if (!siox__ensure()) return 0;
  if (!siox__node_valid(from) || !siox__node_valid(to)) return -EINVAL;
  uint32_t key[2] = {from, to};
  struct names *t = &edges;
  /* The edge record's `a` is the from-node, not the table handle. */
  siox__in_lib++;
  pthread_mutex_lock(&reg_lock);
  int rc = 0;
  if (!names_find(t, (const char *)key, sizeof key)) {
    struct siox_cw_edge f = {to, 0};
    rc = log_append(SIOX_REC_EDGE, from, &f, sizeof f, NULL, NULL, 0);
    if (rc == 0 && names_add(t, (const char *)key, sizeof key) < 0) rc = -ENOMEM;
  }
  pthread_mutex_unlock(&reg_lock);
  siox__in_lib--;
  return rc;
}

int siox_activity_type_register(siox_unid node, const char *name, siox_type_id *out) {
  size_t len[2] = {sizeof node, 0};
  if (!out || !str_ok(name, SIOX_CW_MAX_STR, &len[1])) return -EINVAL;
  if (!siox__ensure()) return (*out = 0, 0);
  if (!siox__node_valid(node)) return -EINVAL;
  char key[sizeof node + SIOX_CW_MAX_STR];
  memcpy(key, &node, sizeof node);
  memcpy(key + sizeof node, name, len[1]);
  struct siox_cw_type f = {node, (uint32_t)len[1]};
  const char *s[1] = {name};
  int64_t h = intern(&types, key, sizeof node + len[1], SIOX_REC_TYPE, &f, sizeof f, s, &len[1], 1);
  if (h < 0) return (int)h;
  /* Publish after the record is logged: the hot path accepts ids below. */
  publish(&siox__ntypes, (uint32_t)h);
  *out = (siox_type_id)h;
  return 0;
}

static const char *any_or(const char *s) {
  return (s && strcmp(s, "*") != 0) ? s : "";
}

int siox_target_register(const char *hwid, const char *swid, siox_target_id *out) {
  const char *s[2] = {any_or(hwid), any_or(swid)};
  size_t len[2] = {strnlen(s[0], SIOX_CW_MAX_STR + 1), strnlen(s[1], SIOX_CW_MAX_STR + 1)};
  if (!out || len[0] > SIOX_CW_MAX_STR || len[1] > SIOX_CW_MAX_STR) return -EINVAL;
  if (!siox__ensure()) return (*out = 0, 0);
  char key[2 * (SIOX_CW_MAX_STR + 1)];
  size_t klen = key_join(key, s, len, 2);
  struct siox_cw_target f = {(uint16_t)len[0], (uint16_t)len[1], 0};
  int64_t h = intern(&targets, key, klen, SIOX_REC_TARGET, &f, sizeof f, s, len, 2);
  if (h < 0) return (int)h;
  publish(&ntargets, (uint32_t)h);
  *out = (siox_target_id)h;
  return 0;
}

/* Logs one node attribute after checking the ontology type. */
static int node_attr(siox_unid node, uint32_t attr, uint32_t vtype, uint64_t bits, const char *str) {
  const struct siox_attr_info *info = siox_attr_lookup(attr);
  size_t slen = 0;
  if (!info || (uint32_t)info->type != vtype) return -EINVAL;
  if (str && (slen = strnlen(str, SIOX_CW_MAX_VALUE + 1)) > SIOX_CW_MAX_VALUE) return -EINVAL;
  if (!siox__ensure()) return 0;
  if (!siox__node_valid(node)) return -EINVAL;
  struct siox_cw_attr f = {attr, vtype, {.u64 = str ? slen : bits}};
  const char *s[1] = {str};
  siox__in_lib++;
  pthread_mutex_lock(&reg_lock);
  int rc = log_append(SIOX_REC_NODE_ATTR, node, &f, sizeof f, s, &slen, str ? 1 : 0);
  pthread_mutex_unlock(&reg_lock);
  siox__in_lib--;
  return rc;
}

int siox_node_attr_u64(siox_unid node, uint32_t attr, uint64_t v) {
  return node_attr(node, attr, SIOX_VT_U64, v, NULL);
}

int siox_node_attr_f64(siox_unid node, uint32_t attr, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return node_attr(node, attr, SIOX_VT_F64, bits, NULL);
}

int siox_node_attr_str(siox_unid node, uint32_t attr, const char *v) {
  if (!v) return -EINVAL;
  return node_attr(node, attr, SIOX_VT_STR, 0, v);
}

/* ---------------------------------------------------------------------------
 * fork(): the child keeps its handles (its code still holds them) and must
 * ship the whole log again under its own process identity.
 * ------------------------------------------------------------------------- */
void siox__registry_fork_prepare(void) {
  pthread_mutex_lock(&reg_lock);
}

void siox__registry_fork_parent(void) {
  pthread_mutex_unlock(&reg_lock);
}

void siox__registry_after_fork_child(void) {
  pthread_mutex_init(&reg_lock, NULL);
}

