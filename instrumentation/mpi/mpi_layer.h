/*
 * Internals shared by the files of libsiox-mpi (the PMPI layer): the layer's
 * registered node and activity types, the open-file table and the helpers
 * that turn one MPI-IO call into one SIOX activity. Nothing here is public.
 */
#ifndef SIOX_MPI_LAYER_H
#define SIOX_MPI_LAYER_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

#include <siox/siox.h>

#include "siox_posix_hooks.h"

#define SIOX_MPI_HIDDEN __attribute__((visibility("hidden")))
#define SIOX_MPI_TLS __thread __attribute__((tls_model("initial-exec")))
#define SIOX_MPI_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Every call this layer records, in the order of the name table in layer.c. */
enum siox_mpi_call {
  /* node MPI */
  CALL_INIT, CALL_INIT_THREAD, CALL_FINALIZE,
  /* node MPI: collectives on MPI_COMM_WORLD, the synchronization points of a
   * workload (collectives.c) */
  CALL_BARRIER, CALL_BCAST, CALL_REDUCE, CALL_ALLREDUCE, CALL_GATHER, CALL_ALLGATHER, CALL_ALLGATHERV,
  CALL_SCATTER, CALL_ALLTOALL, CALL_ALLTOALLV,
  /* node MPI-IO: file management */
  CALL_OPEN, CALL_CLOSE, CALL_SET_VIEW, CALL_SET_INFO, CALL_SYNC,
  /* blocking data access */
  CALL_READ, CALL_READ_ALL, CALL_READ_AT, CALL_READ_AT_ALL, CALL_READ_SHARED, CALL_READ_ORDERED,
  CALL_WRITE, CALL_WRITE_ALL, CALL_WRITE_AT, CALL_WRITE_AT_ALL, CALL_WRITE_SHARED, CALL_WRITE_ORDERED,
  /* nonblocking data access */
  CALL_IREAD, CALL_IREAD_ALL, CALL_IREAD_AT, CALL_IREAD_AT_ALL, CALL_IREAD_SHARED,
  CALL_IWRITE, CALL_IWRITE_ALL, CALL_IWRITE_AT, CALL_IWRITE_AT_ALL, CALL_IWRITE_SHARED,
  /* split collectives: one activity from _begin to _end */
  CALL_READ_ALL_SPLIT, CALL_READ_AT_ALL_SPLIT, CALL_READ_ORDERED_SPLIT,
  CALL_WRITE_ALL_SPLIT, CALL_WRITE_AT_ALL_SPLIT, CALL_WRITE_ORDERED_SPLIT,
  /* the part of a nonblocking/split operation spent inside a call */
  CALL_POST, CALL_COMPLETE,
  CALL_COUNT
};

/* How a data access finds its file position. */
enum siox_mpi_pos {
  POS_INDIVIDUAL, /* individual file pointer */
  POS_EXPLICIT,   /* _at: offset argument, in etypes after the view */
  POS_SHARED,     /* shared file pointer, noncollective */
  POS_ORDERED     /* shared file pointer, collective in rank order */
};

/* The layer's registrations, made once (siox__mpi_layer_ready). */
struct siox_mpi_layer {
  siox_unid node_mpi, node_mpiio;
  siox_target_id posix;           /* target(*, "POSIX") of the sends */
  siox_type_id type[CALL_COUNT];
  int ok;                         /* 1 once everything registered */
};
extern struct siox_mpi_layer siox__mpi SIOX_MPI_HIDDEN;

/* Registers nodes and types on first use; returns 1 when recording is on.
 * Inline: after the first call one acquire load (it was a call of its own
 * on every recorded MPI call). */
extern atomic_int siox__mpi_ready SIOX_MPI_HIDDEN;
SIOX_MPI_HIDDEN int siox__mpi_layer_init(void) __attribute__((cold));
static inline int siox__mpi_layer_ready(void) {
  if (SIOX_MPI_UNLIKELY(!atomic_load_explicit(&siox__mpi_ready, memory_order_acquire))) return siox__mpi_layer_init();
  return siox__mpi.ok;
}

/* Depth of MPI-IO wrappers on this thread: inner MPI-IO calls (an
 * implementation calling MPI_File_* itself) pass straight through, and the
 * POSIX layer records receives while it is non-zero. */
extern SIOX_MPI_TLS int siox__mpi_depth SIOX_MPI_HIDDEN;

/* Bit d set: the access at depth d asked the POSIX layer for receives. */
extern SIOX_MPI_TLS unsigned siox__mpi_linked SIOX_MPI_HIDDEN;

/* Enters / leaves a data access. Only a collective access (or the
 * completion of an operation) needs the POSIX layer to record receives for
 * the reads and writes this thread makes in between
 * (instrumentation/posix/siox_posix_hooks.h, link 3 of the README): an
 * independent access is carried out by the calling thread itself, whose
 * POSIX calls are already its children on the stack, so the cross-process
 * records would only cost bytes. */
static inline void siox__mpi_io_enter_as(int collective) {
  if (collective) {
    siox__mpi_linked |= 1u << (siox__mpi_depth & 31);
    siox_posix_hook_mpiio_enter();
  }
  siox__mpi_depth++;
}
static inline void siox__mpi_io_enter(void) {
  siox__mpi_io_enter_as(1);
}
static inline void siox__mpi_io_leave(void) {
  siox__mpi_depth--;
  unsigned bit = 1u << (siox__mpi_depth & 31);
  if (siox__mpi_linked & bit) {
    siox__mpi_linked &= ~bit;
    siox_posix_hook_mpiio_leave();
  }
}

/* ---- open-file table (file_table.c) ---- */
struct siox_mpi_file {
  MPI_File fh;
  char *path;                /* absolute, normalised; owned by the entry */
  uint32_t path_len;
  int view_contig;           /* 1: the view maps data to contiguous bytes */
  int etype_size;            /* bytes per etype of the current view */
  MPI_Offset disp;           /* displacement of the current view */
  MPI_Comm order_comm;       /* the file's group, made at the first ordered call */
  siox_detached *split;      /* the open split collective, or NULL */
};
/* Adds fh with a copy of path; returns the entry or NULL (out of memory or
 * table full: the file is then simply not linked to POSIX). */
SIOX_MPI_HIDDEN struct siox_mpi_file *siox__mpi_file_add(MPI_File fh, const char *path);
/* The entry of fh, or NULL. Lock-free: MPI forbids closing a handle that
 * another thread is using, so an entry found stays valid for the call. */
SIOX_MPI_HIDDEN struct siox_mpi_file *siox__mpi_file_find(MPI_File fh);
/* Removes fh and frees its entry (and its order communicator). */
SIOX_MPI_HIDDEN void siox__mpi_file_remove(MPI_File fh);

/* ---- data access recording (access.c) ---- */
struct siox_mpi_access {
  enum siox_mpi_call call;
  enum siox_mpi_pos pos;
  int collective;
  MPI_File fh;
  MPI_Offset offset;         /* POS_EXPLICIT only, in etypes */
  int count;
  MPI_Datatype type;
};
/* Where an access lands: first byte after the view, data bytes, and the
 * bytes of file it spans (more than bytes through a view with holes). */
struct siox_mpi_range { uint64_t offset, bytes, span; int known; /* 0: offset unknown */ };
/* Fills r for access a (f may be NULL: offset then from MPI calls only). */
SIOX_MPI_HIDDEN void siox__mpi_range(const struct siox_mpi_access *a, struct siox_mpi_file *f,
                                     struct siox_mpi_range *r);
/* Records attributes and the POSIX send of an access on a detached
 * activity (nonblocking and split collectives). */
SIOX_MPI_HIDDEN void siox__mpi_describe_detached(siox_detached *d, const struct siox_mpi_access *a,
                                                 const struct siox_mpi_file *f,
                                                 const struct siox_mpi_range *r);

/* Starts the activity of a call that is not a data access (call.c), or
 * returns 0: inside a recorded MPI-IO call, before the layer is ready, or
 * (world_only not NULL) when *world_only does not span MPI_COMM_WORLD. */
SIOX_MPI_HIDDEN siox_aid siox__mpi_call_start(enum siox_mpi_call call, const MPI_Comm *world_only);
/* Ends it, recording a failing MPI code; aid may be 0. Returns rc. */
SIOX_MPI_HIDDEN int siox__mpi_call_stop(siox_aid aid, int rc);

/* Starts the activity of a blocking access; returns 0 when not recording
 * (then the caller just calls PMPI and must not call siox__mpi_stop). */
SIOX_MPI_HIDDEN siox_aid siox__mpi_access_start(const struct siox_mpi_access *a);
/* Ends a data-access activity (leaving the access), recording a failing
 * MPI code; aid may be 0. */
SIOX_MPI_HIDDEN void siox__mpi_stop(siox_aid aid, int rc);

/* Starts a detached activity for a nonblocking or split access, plus the
 * stacked CALL_POST activity (its child) for the time spent in the call
 * itself; *post gets the post aid. Returns NULL when not recording. */
SIOX_MPI_HIDDEN siox_detached *siox__mpi_detached_start(const struct siox_mpi_access *a, siox_aid *post);
/* Call when the nonblocking call returns, before d can complete: a
 * shared-pointer access writes the offset its POSIX operations showed. */
SIOX_MPI_HIDDEN void siox__mpi_detached_posted(siox_detached *d);

/* ---- nonblocking requests (requests.c) ---- */
/* Remembers that request r completes detached activity d. */
SIOX_MPI_HIDDEN void siox__mpi_request_add(MPI_Request r, siox_detached *d);

/* ---- hint application at open (hints.c) ---- */
struct siox_mpi_hints {
  int asked;       /* 0: hint application is off (SIOX_HINTS unset) */
  int status;      /* enum siox_hint_status (siox/siox_internal.h) */
  int64_t set_id;  /* hint set applied, when status is found */
  MPI_Info info;   /* what to open with: the user's, or a dup with hints */
  int owned;       /* info is the dup: siox__mpi_hints_release frees it */
  char applied[2048]; /* the keys SIOX added, key=value;... */
};
/* Collective over comm when SIOX_HINTS=1 (every rank must call it): asks
 * the daemon on rank 0 and broadcasts the answer. Fills *h; never fails the
 * open (a failed query just leaves the user's info). */
/* The MPI-IO component OpenMPI opens files with: "romio321" or "ompio". */
SIOX_MPI_HIDDEN const char *siox__mpi_io_component(void);
SIOX_MPI_HIDDEN void siox__mpi_hints_prepare(MPI_Comm comm, const char *path, MPI_Info user,
                                             struct siox_mpi_hints *h);
/* Records mpi/hints_status, mpi/hints_applied and mpi/hint_set on aid. */
SIOX_MPI_HIDDEN void siox__mpi_hints_record(siox_aid aid, const struct siox_mpi_hints *h);
SIOX_MPI_HIDDEN void siox__mpi_hints_release(struct siox_mpi_hints *h);

/* ---- helpers ---- */
/* Writes the absolute, normalised form of an MPI-IO file name (ROMIO
 * "ufs:" style prefixes removed) into out; returns its length or -1. */
SIOX_MPI_HIDDEN int siox__mpi_path_normalise(const char *name, char *out, size_t size);
/* Formats info as key=value;... into out (always terminated). */
SIOX_MPI_HIDDEN void siox__mpi_info_format(MPI_Info info, char *out, size_t size);

#endif
