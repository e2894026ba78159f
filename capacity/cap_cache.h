/*
 * The client node's page cache in the simulation (capacity/README.md, "The
 * client's page cache"): which byte ranges of each file the kernel holds
 * because they were written or read through the client, bounded, least
 * recently used first out. Internal to libsiox-capacity.
 */
#ifndef SIOX_CAP_CACHE_H
#define SIOX_CAP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define CAP_CACHE_PAGE 4096u /* the kernel caches whole pages */

struct cap_cache_ext {
  uint32_t copy, fid; /* the file (of one copy of the workload) */
  uint64_t lo, hi;    /* [lo, hi), page-aligned */
  uint64_t stamp;     /* last use: inserted or read */
};

struct cap_cache {
  struct cap_cache_ext *e;
  size_t n, cap;
  uint64_t bytes; /* cached, summed over e */
  uint64_t limit; /* bound on bytes; 0: no cache */
  uint64_t clock;
};

/* A part of a read the cache does not hold: [lo, hi). */
struct cap_gap {
  uint64_t lo, hi;
};

/* The parts of [lo, hi) of (copy, fid) not in the cache, in offset order,
 * into *gaps (realloc'd; *capg its capacity), their count in *ngaps and
 * their bytes in *missing. A page in the cache serves every byte of it.
 * The extents the read touches become the most recently used. 0 or -ENOMEM. */
int cap_cache_lookup(struct cap_cache *c, uint32_t copy, uint32_t fid, uint64_t lo, uint64_t hi,
                     struct cap_gap **gaps, size_t *ngaps, size_t *capg, uint64_t *missing);
/* The client moved [lo, hi) of (copy, fid): a write leaves the pages it
 * fully covered in the cache (a partly written page is not up to date), a
 * read every page it touched. Evicts the least recently used extents beyond
 * the limit. 0 or -ENOMEM. */
int cap_cache_insert(struct cap_cache *c, uint32_t copy, uint32_t fid, uint64_t lo, uint64_t hi, int is_write);
void cap_cache_free(struct cap_cache *c);

#endif
