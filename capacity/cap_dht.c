/*
 * Where GlusterFS's cluster/distribute (DHT) puts a new file, for bricks and
 * files the warehouse has not seen. Written from these facts of GlusterFS
 * 10 (xlators/cluster/dht/src/dht-hashfn.c, dht-selfheal.c,
 * libglusterfs/src/hashfn.c):
 *  - a file's hash is the Davies-Meyer hash (TEA rounds, delta 0x9E3779B9,
 *    h0 = 0x9464a485, h1 = 0x542e1a94, 6 rounds per full 16-byte block and
 *    10 for the last, padded with len | len << 8 | len << 16 | len << 24) of
 *    its base name; the result is h0 ^ h1;
 *  - a new directory's layout cuts 0..0xffffffff in equal ranges of
 *    floor(0xffffffff / n) (bricks of equal size), handed out in subvolume
 *    order starting at subvolume hash(directory path) % n, the last range
 *    ending at 0xffffffff;
 *  - a file lands on the subvolume whose range holds its hash.
 *  - names of rsync's temporaries, ".NAME.XXXXXX" (the default
 *    rsync-hash-regex ^\.(.+)\.[^.]+$), hash as NAME;
 * Not modelled: a user's extra-hash-regex, weighting by brick size
 * (bricks of unequal sizes), layouts changed by rebalance.
 */
#include <errno.h>
#include <string.h>

#include "siox_capacity.h"

#define DM_DELTA 0x9E3779B9u

static void dm_round(int rounds, const uint32_t in[4], uint32_t *h0, uint32_t *h1) {
  uint32_t sum = 0, b0 = *h0, b1 = *h1;
  for (int n = 0; n < rounds; n++) {
    sum += DM_DELTA;
    b0 += ((b1 << 4) + in[0]) ^ (b1 + sum) ^ ((b1 >> 5) + in[1]);
    b1 += ((b0 << 4) + in[2]) ^ (b0 + sum) ^ ((b0 >> 5) + in[3]);
  }
  *h0 += b0;
  *h1 += b1;
}

/* The little-endian 32-bit word at p. */
static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint32_t siox_cap_dm_hash(const char *s, size_t len) {
  const unsigned char *msg = (const unsigned char *)s;
  uint32_t h0 = 0x9464a485u, h1 = 0x542e1a94u, in[4];
  uint32_t pad = (uint32_t)len | (uint32_t)len << 8;
  pad |= pad << 16;
  size_t pos = 0;
  for (size_t q = 0; q < len / 16; q++, pos += 16) {
    for (int j = 0; j < 4; j++) in[j] = le32(msg + pos + 4 * j);
    dm_round(6, in, &h0, &h1);
  }
  /* The last block: whole words, then the pad with the remaining bytes
   * shifted in (most significant first), then pad words. */
  for (int j = 0; j < 4; j++) {
    if (len - pos >= 4) {
      in[j] = le32(msg + pos);
      pos += 4;
    } else {
      in[j] = pad;
      /* GlusterFS reads these bytes as (signed) char: bytes >= 0x80 set the high bits. */
      for (; pos < len; pos++) in[j] = in[j] << 8 | (uint32_t)(int32_t)(signed char)msg[pos];
    }
  }
  dm_round(10, in, &h0, &h1);
  return h0 ^ h1;
}

/* The part of a name DHT hashes: NAME of ".NAME.SUFFIX" (rsync's
 * temporaries land where the file they become will), else the name. */
static size_t hashed_part(const char *name, const char **start) {
  size_t len = strlen(name);
  const char *dot = strrchr(name, '.');
  *start = name;
  if (name[0] == '.' && dot && dot > name + 1 && dot[1]) {
    *start = name + 1;
    return (size_t)(dot - name - 1);
  }
  return len;
}

int siox_cap_dht_place(const char *dir, const char *base, uint32_t nbricks) {
  if (nbricks == 0) return -EINVAL;
  const char *hb;
  size_t hl = hashed_part(base, &hb);
  uint32_t start = siox_cap_dm_hash(dir, strlen(dir)) % nbricks;
  uint32_t h = siox_cap_dm_hash(hb, hl);
  uint32_t range = (uint32_t)(0xffffffffu / nbricks); /* GlusterFS: (double)0xffffffff / n, truncated */
  /* Range k (k = 0.. in hand-out order) is [k*range, (k+1)*range - 1]; the
   * last one runs to 0xffffffff. */
  uint32_t k = h / range;
  if (k >= nbricks) k = nbricks - 1;
  return (int)((start + k) % nbricks);
}

int siox_cap_dht_place_path(const char *path, const char *mount, uint32_t nbricks) {
  size_t ml = mount ? strlen(mount) : 0;
  while (ml > 0 && mount[ml - 1] == '/') ml--;
  if (ml && strncmp(path, mount, ml) == 0 && (path[ml] == '/' || path[ml] == 0)) path += ml;
  const char *slash = strrchr(path, '/');
  if (!slash) return siox_cap_dht_place("/", path, nbricks);
  char dir[4096];
  size_t dl = (size_t)(slash - path);
  if (dl >= sizeof dir) return -EINVAL;
  if (dl == 0) return siox_cap_dht_place("/", slash + 1, nbricks);
  memcpy(dir, path, dl);
  dir[dl] = 0;
  return siox_cap_dht_place(dir, slash + 1, nbricks);
}
