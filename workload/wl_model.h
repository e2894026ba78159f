/* The in-memory workload behind the opaque handle (shared by wl_*.c). */
#ifndef SIOX_WL_MODEL_H
#define SIOX_WL_MODEL_H

#include "siox_workload.h"

struct siox_workload {
  enum siox_wl_form form;
  char *job;
  uint32_t ranks;
  char **files;
  size_t nfiles, capfiles;
  struct siox_wl_rec *recs;
  size_t nrecs, caprecs;
  struct siox_wl_counters *ctr;
  size_t nctr, capctr;
  struct siox_wl_rank *rank_info; /* ranks entries; rank_set[r] says which are set */
  unsigned char *rank_set;
};

/* Grows *p (elements of size sz) to hold n+1; 0 or -ENOMEM. */
int siox_wl_grow(void **p, size_t *cap, size_t n, size_t sz);
/* Darshan's size bins (SIOX_WL_HIST_BINS). */
int siox_wl_hist_bin(uint64_t bytes);

#endif
