/*
 * One MPI-IO data access -> one activity on node (host, MPI-IO): where it
 * lands in the file (io/offset in bytes after the view), how much it moves
 * (io/bytes), whether it is collective, and, for collective accesses, the
 * remote-call send of (posix/path, range) to POSIX that lets the server link
 * other processes' POSIX calls (collective buffering aggregators) to it.
 */
#include "mpi_layer.h"

/* The file group as a communicator, for the prefix sum of ordered
 * accesses. Made at the first ordered call, which is collective over the
 * same group, so every member creates it at the same point. */
static MPI_Comm order_comm(struct siox_mpi_file *f) {
  MPI_Group g;
  if (f->order_comm != MPI_COMM_NULL) return f->order_comm;
  if (PMPI_File_get_group(f->fh, &g) != MPI_SUCCESS) return MPI_COMM_NULL;
  if (PMPI_Comm_create_group(MPI_COMM_WORLD, g, 0x510, &f->order_comm) != MPI_SUCCESS)
    f->order_comm = MPI_COMM_NULL;
  PMPI_Group_free(&g);
  return f->order_comm;
}

/* The position (in etypes, relative to the view) where the access starts;
 * returns 0 or -1. Shared-pointer positions are read before the call and
 * can race with other ranks' noncollective shared accesses (README). */
static int etype_position(const struct siox_mpi_access *a, struct siox_mpi_file *f, uint64_t bytes,
                          MPI_Offset *pos) {
  switch (a->pos) {
  case POS_EXPLICIT: *pos = a->offset; return 0;
  case POS_INDIVIDUAL: return PMPI_File_get_position(a->fh, pos) == MPI_SUCCESS ? 0 : -1;
  case POS_SHARED: return PMPI_File_get_position_shared(a->fh, pos) == MPI_SUCCESS ? 0 : -1;
  case POS_ORDERED: break;
  }
  /* Ordered: rank r starts after the data of ranks 0..r-1. Only rank 0 reads
   * the shared pointer: ranks above it may already be moving it inside their
   * own ordered call, but none can pass rank 0 (ROMIO passes a token in rank
   * order, OMPIO gathers at the root). Rank 0 adds that base to its
   * contribution, so one exclusive scan yields every rank's start. */
  MPI_Comm c = f ? order_comm(f) : MPI_COMM_NULL;
  long long mine = (long long)(bytes / (uint64_t)(f && f->etype_size > 0 ? f->etype_size : 1)), start = 0;
  MPI_Offset base = 0;
  int rank = 0;
  if (c == MPI_COMM_NULL || PMPI_Comm_rank(c, &rank) != MPI_SUCCESS) return -1;
  int ok = rank != 0 || PMPI_File_get_position_shared(a->fh, &base) == MPI_SUCCESS;
  long long contrib = rank == 0 ? (long long)base + mine : mine;
  /* Every rank takes part in the scan even when its own read failed. */
  if (PMPI_Exscan(&contrib, &start, 1, MPI_LONG_LONG, MPI_SUM, c) != MPI_SUCCESS || !ok) return -1;
  *pos = rank == 0 ? base : (MPI_Offset)start; /* Exscan leaves rank 0's result undefined */
  return 0;
}

void siox__mpi_range(const struct siox_mpi_access *a, struct siox_mpi_file *f, struct siox_mpi_range *r) {
  /* The bulk of IOR-like I/O first: MPI_BYTE at an explicit offset in a
   * contiguous view, which the general steps below reach through a switch,
   * a type test and a field at a time. */
  if (a->pos == POS_EXPLICIT && a->type == MPI_BYTE && f && f->view_contig) {
    r->bytes = r->span = a->count > 0 ? (uint64_t)a->count : 0;
    r->offset = (uint64_t)(f->disp + a->offset * f->etype_size);
    r->known = 1;
    return;
  }
  /* MPI_BYTE, the usual type of bulk I/O, needs no call into the library. */
  MPI_Count tsize = a->type == MPI_BYTE ? 1 : 0;
  MPI_Offset pos, start, end;
  if (tsize == 0) PMPI_Type_size_x(a->type, &tsize);
  r->bytes = a->count > 0 && tsize > 0 ? (uint64_t)a->count * (uint64_t)tsize : 0;
  r->known = 0;
  r->offset = r->span = 0;
  if (etype_position(a, f, r->bytes, &pos) < 0) return;
  if (f && f->view_contig) {
    start = f->disp + pos * f->etype_size;
  } else if (PMPI_File_get_byte_offset(a->fh, pos, &start) != MPI_SUCCESS) {
    return;
  }
  r->offset = (uint64_t)start;
  r->span = r->bytes;
  r->known = 1;
  /* A non-contiguous view spreads the data: the span runs to the end of the
   * access's last etype. Not to the first etype after the data: with a hole
   * before each rank's block (HDF5's views) that one lies in the view's next
   * repetition, past other ranks' data, and the range would claim it. */
  MPI_Offset netypes = f && f->etype_size > 0 ? (MPI_Offset)(r->bytes / (uint64_t)f->etype_size) : 0;
  if (f && !f->view_contig && netypes > 0 && PMPI_File_get_byte_offset(a->fh, pos + netypes - 1, &end) == MPI_SUCCESS &&
      end + f->etype_size > start)
    r->span = (uint64_t)(end + f->etype_size - start);
}

/* Only collective accesses send: see siox__mpi_io_enter_as. */
static void send_range(siox_aid aid, const struct siox_mpi_access *a, const struct siox_mpi_file *f,
                       const struct siox_mpi_range *r) {
  if (!a->collective || !f || !r->known || r->span == 0) return;
  siox_desc d = {.type = SIOX_ATTR_POSIX_PATH, .len = f->path_len, .v.ptr = f->path};
  siox_descriptor_send(aid, siox__mpi.posix, &d, r->offset, r->span);
}

/* The numeric attributes of an access: where, how much, collective or not. */
static unsigned describe_attrs(const struct siox_mpi_access *a, const struct siox_mpi_range *r,
                               struct siox_attr out[3]) {
  unsigned n = 0;
  if (r->known) out[n++] = (struct siox_attr){SIOX_ATTR_IO_OFFSET, SIOX_VT_U64, {.u64 = r->offset}};
  out[n++] = (struct siox_attr){SIOX_ATTR_IO_BYTES, SIOX_VT_U64, {.u64 = r->bytes}};
  out[n++] = (struct siox_attr){SIOX_ATTR_MPI_COLLECTIVE, SIOX_VT_U64, {.u64 = (uint64_t)a->collective}};
  return n;
}

void siox__mpi_describe_detached(siox_detached *d, const struct siox_mpi_access *a,
                                 const struct siox_mpi_file *f, const struct siox_mpi_range *r) {
  struct siox_attr at[3];
  unsigned n = describe_attrs(a, r, at);
  for (unsigned i = 0; i < n; i++) siox_detached_attr_u64(d, at[i].attr, at[i].v.u64);
  send_range(siox_detached_aid(d), a, f, r);
}

/* An ordered access takes part in a collective (the prefix sum) on every
 * rank whose table knows the file, whether or not this rank records: the
 * table is filled on every rank (file_ops.c), so no rank can be left
 * waiting in the scan. */
static void match_collectives(const struct siox_mpi_access *a) {
  struct siox_mpi_file *f;
  struct siox_mpi_range r;
  if (a->pos == POS_ORDERED && (f = siox__mpi_file_find(a->fh)) != NULL) siox__mpi_range(a, f, &r);
}

/* ---- shared-pointer offsets ---------------------------------------------
 * The shared pointer read before a _shared call races with the other
 * ranks' _shared calls; the POSIX operations the call makes on the file
 * know where the data went. So the offset is written at the stop (for a
 * nonblocking call, when the call returns): the lowest offset the thread
 * read or wrote in the file during the call, else (no POSIX layer, pwritev,
 * or I/O the thread did not make itself: OMPIO's nonblocking calls use
 * POSIX aio) the pointer read before it. One recorded access per thread at
 * a time (inner MPI-IO calls are not recorded). */
#define SHARED_NONE UINT64_MAX
static SIOX_MPI_TLS int shared_pending;
static SIOX_MPI_TLS uint64_t shared_before; /* the pointer's byte offset before the call, or SHARED_NONE */

static void shared_watch(const struct siox_mpi_file *f, struct siox_mpi_range *r) {
  if (f) siox_posix_hook_mpiio_watch(f->path, f->path_len);
  shared_pending = 1;
  shared_before = r->known ? r->offset : SHARED_NONE;
  r->known = 0; /* not written at the start */
}

/* Ends the watch; 1 with *off set when the offset is known. */
static int shared_take(uint64_t *off) {
  *off = shared_before;
  shared_pending = 0;
  return siox_posix_hook_mpiio_lowest(off) || *off != SHARED_NONE;
}

static void shared_offset(siox_aid aid) {
  uint64_t off;
  if (shared_take(&off)) siox_activity_attr_u64(aid, SIOX_ATTR_IO_OFFSET, off);
}

void siox__mpi_detached_posted(siox_detached *d) {
  uint64_t off;
  if (shared_pending && shared_take(&off)) siox_detached_attr_u64(d, SIOX_ATTR_IO_OFFSET, off);
}

/* The numeric attributes of the blocking access this thread has open
 * (pend_aid), handed to siox_activity_stop_attrs with the stop: one call
 * into the client instead of three attribute calls and a stop (each call
 * crosses into another library and re-finds the open activity). Blocking
 * accesses do not nest (inner MPI-IO calls are not recorded). */
static SIOX_MPI_TLS siox_aid pend_aid;
static SIOX_MPI_TLS unsigned npend;
static SIOX_MPI_TLS struct siox_attr pend[3];

siox_aid siox__mpi_access_start(const struct siox_mpi_access *a) {
  if (siox__mpi_depth) return 0;
  siox_aid aid = siox__mpi_layer_ready() ? siox_activity_start(siox__mpi.type[a->call]) : 0;
  if (aid == 0) {
    match_collectives(a);
    return 0;
  }
  siox__mpi_io_enter_as(a->collective);
  struct siox_mpi_file *f = siox__mpi_file_find(a->fh);
  struct siox_mpi_range r;
  siox__mpi_range(a, f, &r);
  if (a->pos == POS_SHARED) shared_watch(f, &r); /* asks the POSIX layer where it really landed */
  npend = describe_attrs(a, &r, pend);
  pend_aid = aid;
  send_range(aid, a, f, &r);
  return aid;
}

void siox__mpi_stop(siox_aid aid, int rc) {
  int mine = pend_aid == aid;
  pend_aid = 0;
  if (shared_pending) shared_offset(aid);
  siox__mpi_io_leave();
  siox_activity_stop_attrs(aid, mine ? pend : NULL, mine ? npend : 0, rc != MPI_SUCCESS ? rc : 0);
}

siox_detached *siox__mpi_detached_start(const struct siox_mpi_access *a, siox_aid *post) {
  *post = 0;
  if (siox__mpi_depth) return NULL;
  siox_detached *d = siox__mpi_layer_ready()
                         ? siox_activity_start_detached(siox__mpi.type[a->call], siox_activity_current())
                         : NULL;
  if (d == NULL) {
    match_collectives(a);
    return NULL;
  }
  siox__mpi_io_enter_as(a->collective);
  /* The time spent inside the call itself is a stacked child of the
   * operation, so POSIX calls made here become its children. */
  *post = siox_activity_start_child(siox__mpi.type[CALL_POST], siox_detached_aid(d));
  struct siox_mpi_file *f = siox__mpi_file_find(a->fh);
  struct siox_mpi_range r;
  siox__mpi_range(a, f, &r);
  if (a->pos == POS_SHARED) shared_watch(f, &r); /* taken in siox__mpi_detached_posted */
  siox__mpi_describe_detached(d, a, f, &r);
  return d;
}
