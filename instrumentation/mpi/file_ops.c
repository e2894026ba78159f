/*
 * File management on node (host, MPI-IO): open, close, set_view, set_info,
 * sync. Open reports the mapping posix/path -> mpi/file and the hints in
 * effect (MPI_File_get_info right after open, which echoes the keys given;
 * whether ROMIO or OMPIO applied them shows in the POSIX layer below), and
 * adds the knowledge base's hints at open when asked to (hints.c).
 */
#include "mpi_layer.h"

static void record_hints(siox_aid aid, MPI_File fh) {
  MPI_Info info = MPI_INFO_NULL;
  char text[4096];
  if (PMPI_File_get_info(fh, &info) != MPI_SUCCESS) return;
  siox__mpi_info_format(info, text, sizeof text);
  PMPI_Info_free(&info);
  siox_activity_attr_str(aid, SIOX_ATTR_MPI_HINTS, text);
}

static void record_open(siox_aid aid, MPI_File fh, const char *path, int amode) {
  siox_desc p = siox_desc_str(SIOX_ATTR_POSIX_PATH, path);
  siox_desc m = siox_desc_int(SIOX_ATTR_MPI_FILE, (int64_t)(uintptr_t)fh);
  siox_activity_attr_u64(aid, SIOX_ATTR_IO_FLAGS, (uint64_t)amode);
  siox_activity_attr_str(aid, SIOX_ATTR_POSIX_PATH, path);
  /* Which component's hint keys apply: ompio ignores ROMIO's (README "Hints from the knowledge base at open"). */
  siox_activity_attr_str(aid, SIOX_ATTR_MPI_IO_COMPONENT, siox__mpi_io_component());
  siox_descriptor_map(siox__mpi.node_mpiio, aid, &p, &m);
  record_hints(aid, fh);
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
  char path[4096];
  int plen = siox__mpi_path_normalise(filename, path, sizeof path);
  siox_aid aid = siox__mpi_call_start(CALL_OPEN, NULL);
  /* Hints from the knowledge base (SIOX_HINTS=1): inside the activity, so
   * its time shows what the query cost the open. */
  struct siox_mpi_hints hints;
  siox__mpi_hints_prepare(comm, plen > 0 ? path : filename, info, &hints);
  int rc = PMPI_File_open(comm, filename, amode, hints.info, fh);
  siox__mpi_hints_release(&hints);
  /* Every rank fills its table, recording or not: ordered accesses rely on
   * it to keep their collectives matched (access.c). */
  if (rc == MPI_SUCCESS && plen > 0) siox__mpi_file_add(*fh, path);
  if (!aid) return rc;
  if (rc == MPI_SUCCESS) record_open(aid, *fh, plen > 0 ? path : filename, amode);
  siox__mpi_hints_record(aid, &hints);
  return siox__mpi_call_stop(aid, rc);
}

int MPI_File_close(MPI_File *fh) {
  MPI_File old = *fh;
  siox_aid aid = siox__mpi_call_start(CALL_CLOSE, NULL);
  int rc = PMPI_File_close(fh);
  if (rc == MPI_SUCCESS) siox__mpi_file_remove(old);
  if (!aid) return rc;
  if (rc == MPI_SUCCESS) {
    siox_desc m = siox_desc_int(SIOX_ATTR_MPI_FILE, (int64_t)(uintptr_t)old);
    siox_descriptor_release(siox__mpi.node_mpiio, aid, &m);
  }
  return siox__mpi_call_stop(aid, rc);
}

/* A view is contiguous when its filetype has no holes: then etype position
 * p is byte disp + p * etype size, and an access occupies
 * [offset, offset + bytes) (access.c computes that without a call). Both
 * extents must equal the size: the true extent spans the data, the extent
 * is the tiling step. A block resized to a larger extent (a strided tile:
 * siox-strided-writes' view, one block of B bytes every P x B) has a true
 * extent equal to its size, yet the next tile starts an extent later;
 * taken for contiguous, its collective accesses sent the wrong ranges and
 * the server could not link them to the aggregator's pwrite. */
/* What the set_view activity records of the view, for a replay to set an
 * equivalent one (workload/README.md, "mpi_view"): the file byte of its
 * first data byte (io/offset), and, when its data lie in blocks of equal
 * size at a fixed step, the block (mpi/view_block) and the step
 * (mpi/view_extent). That covers IOR's strided layout and
 * siox-strided-writes' view (a vector of N blocks of B every S, tiled at
 * N x S: B every S). A view of another shape records block 0; the replay
 * then places the bytes contiguously, as before views were recorded. */
struct view_shape {
  uint64_t first, block, extent;
};

static int byte_at(MPI_File fh, MPI_Offset pos, MPI_Offset *off) {
  return PMPI_File_get_byte_offset(fh, pos, off) == MPI_SUCCESS ? 0 : -1;
}

/* Whether etype position p lands where "b etypes every step bytes from
 * first" puts it. */
static int on_pattern(MPI_File fh, MPI_Offset p, MPI_Offset first, MPI_Offset b, MPI_Offset step, int esize) {
  MPI_Offset off;
  return p < 0 || (byte_at(fh, p, &off) == 0 && off == first + p / b * step + p % b * esize);
}

/* The shape, found by asking MPI where etype positions land
 * (MPI_File_get_byte_offset: local, no I/O; filetypes are monotone, so the
 * first position past a contiguous run is found by bisection), then checked
 * at positions around the block and tile edges of the first three tiles. */
static void view_shape(MPI_File fh, int esize, MPI_Count fsize, struct view_shape *v) {
  MPI_Offset n = (MPI_Offset)(fsize / esize), first, off;
  if (n <= 0 || byte_at(fh, 0, &first)) return;
  v->first = (uint64_t)first;
  if (byte_at(fh, n, &off)) return;
  if (off == first + n * esize) { /* tiles back to back: contiguous */
    v->block = v->extent = (uint64_t)(n * esize);
    return;
  }
  MPI_Offset lo = 1, hi = n; /* the first position off its contiguous run is in (lo - 1, hi] */
  while (lo < hi) {
    MPI_Offset mid = lo + (hi - lo) / 2;
    if (byte_at(fh, mid, &off)) return;
    if (off != first + mid * esize) hi = mid;
    else lo = mid + 1;
  }
  MPI_Offset b = lo;
  if (byte_at(fh, b, &off) || off - first <= b * esize) return;
  MPI_Offset step = off - first;
  const MPI_Offset probe[] = {b - 1, b + 1, 2 * b - 1, 2 * b, n - 1, n, n + b - 1, n + b, 2 * n - 1, 2 * n + n / 2, 3 * n - 1};
  for (size_t i = 0; i < sizeof(probe) / sizeof(probe[0]); i++)
    if (!on_pattern(fh, probe[i], first, b, step, esize)) return;
  v->block = (uint64_t)(b * esize);
  v->extent = (uint64_t)step;
}

static struct siox_mpi_file *remember_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                           struct view_shape *v) {
  struct siox_mpi_file *f = siox__mpi_file_find(fh);
  MPI_Count esize = 0, fsize = 0, lb = 0, extent = 0, tlb = 0, textent = 0;
  PMPI_Type_size_x(etype, &esize);
  PMPI_Type_size_x(filetype, &fsize);
  PMPI_Type_get_extent_x(filetype, &lb, &extent);
  PMPI_Type_get_true_extent_x(filetype, &tlb, &textent);
  view_shape(fh, esize > 0 ? (int)esize : 1, fsize, v);
  if (!f) return NULL;
  f->etype_size = esize > 0 ? (int)esize : 1;
  f->view_contig = fsize == textent && tlb == 0 && fsize == extent && lb == 0;
  f->disp = disp;
  return f;
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info) {
  siox_aid aid = siox__mpi_call_start(CALL_SET_VIEW, NULL);
  int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
  struct view_shape v = {(uint64_t)disp, 0, 0};
  struct siox_mpi_file *f = rc == MPI_SUCCESS ? remember_view(fh, disp, etype, filetype, &v) : NULL;
  if (!aid) return rc;
  siox_activity_attr_u64(aid, SIOX_ATTR_IO_OFFSET, v.first);
  /* Which file: a process may have several open, and a replay must set the
   * view on the same one on every rank (the call is collective). */
  if (f && f->path) siox_activity_attr_str(aid, SIOX_ATTR_POSIX_PATH, f->path);
  if (rc == MPI_SUCCESS) {
    siox_activity_attr_u64(aid, SIOX_ATTR_MPI_VIEW_BLOCK, v.block);
    siox_activity_attr_u64(aid, SIOX_ATTR_MPI_VIEW_EXTENT, v.extent);
    record_hints(aid, fh);
  }
  return siox__mpi_call_stop(aid, rc);
}

int MPI_File_set_info(MPI_File fh, MPI_Info info) {
  siox_aid aid = siox__mpi_call_start(CALL_SET_INFO, NULL);
  int rc = PMPI_File_set_info(fh, info);
  if (!aid) return rc;
  if (rc == MPI_SUCCESS) record_hints(aid, fh);
  return siox__mpi_call_stop(aid, rc);
}

int MPI_File_sync(MPI_File fh) {
  siox_aid aid = siox__mpi_call_start(CALL_SYNC, NULL);
  int rc = PMPI_File_sync(fh);
  if (!aid) return rc;
  siox_activity_attr_u64(aid, SIOX_ATTR_MPI_COLLECTIVE, 1);
  return siox__mpi_call_stop(aid, rc);
}
