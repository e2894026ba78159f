/*
 * Where the data of an MPI-IO access lie under an mpi_view record's view
 * (README.md, "Views"): a block of `bytes` data bytes every `extent` bytes
 * from the file byte `offset`. The replay turns a recorded file offset into
 * the view position it asks MPI for; the replay's plan and the capacity
 * model need the file byte after an access's last block (what ROMIO's data
 * sieving reads and writes back).
 */
#include <errno.h>

#include "siox_workload.h"

int siox_wl_view_strided(const struct siox_wl_rec *v) {
  return v && v->op == SIOX_WL_MPI_VIEW && v->bytes > 0 && v->bytes < v->extent;
}

int siox_wl_view_pos(const struct siox_wl_rec *v, uint64_t off, uint64_t *pos) {
  if (!siox_wl_view_strided(v)) return *pos = off, 0;
  if (off < v->offset) return -EINVAL;
  uint64_t rel = off - v->offset, in = rel % v->extent;
  if (in >= v->bytes) return -EINVAL; /* a byte in a hole: no access of the view starts there */
  *pos = rel / v->extent * v->bytes + in;
  return 0;
}

uint64_t siox_wl_view_end(const struct siox_wl_rec *v, uint64_t off, uint64_t bytes) {
  uint64_t pos;
  if (!siox_wl_view_strided(v) || bytes == 0 || siox_wl_view_pos(v, off, &pos)) return off + bytes;
  uint64_t last = pos + bytes - 1;
  return v->offset + last / v->bytes * v->extent + last % v->bytes + 1;
}
