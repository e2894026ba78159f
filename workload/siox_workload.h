/*
 * libsiox-workload: workload models taken from the SIOX warehouse, in a
 * portable, versioned text file (format: workload/README.md), and what
 * replays or simulates them reads back.
 *
 * Ownership: a siox_workload is created by siox_wl_new, siox_wl_read,
 * siox_wl_extract or siox_wl_characterize and owned by the caller, who
 * destroys it with siox_wl_free. Strings passed in are copied; pointers
 * returned (names, records, counters) are borrowed and live as long as the
 * workload is not changed or freed.
 *
 * Errors: every call that can fail returns 0 or a negative errno and, where
 * it takes (err, errlen), writes a one-line message a user can act on
 * ("line 12: unknown operation 'wrte'"). Nothing here prints or exits.
 */
#ifndef SIOX_WORKLOAD_H
#define SIOX_WORKLOAD_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SIOX_WL_VERSION 3 /* the format version this library writes (and every one up to it, read) */

typedef struct siox_workload siox_workload;

enum siox_wl_form { SIOX_WL_TRACE = 0, SIOX_WL_CHARACTERIZATION = 1 };

/* One operation of a rank's stream. POSIX operations act on the rank's own
 * descriptor of the file; SIOX_WL_MPI_* act on the MPI file opened by every
 * rank that opens it (collectively); *_ALL are the collective data accesses
 * (two-phase I/O happens inside them on replay as it did in the job). */
enum siox_wl_op {
  SIOX_WL_OPEN, SIOX_WL_CLOSE, SIOX_WL_READ, SIOX_WL_WRITE, SIOX_WL_FSYNC, SIOX_WL_SEEK, SIOX_WL_STAT,
  SIOX_WL_MPI_OPEN, SIOX_WL_MPI_CLOSE, SIOX_WL_MPI_READ, SIOX_WL_MPI_WRITE, SIOX_WL_MPI_READ_ALL,
  SIOX_WL_MPI_WRITE_ALL, SIOX_WL_MPI_SYNC, SIOX_WL_BARRIER,
  SIOX_WL_MPI_VIEW, /* version 3: MPI_File_set_view, collective like mpi_open (README.md) */
  SIOX_WL_NOPS
};

/* The operation's name in the file ("write", "mpi_write_all", ...); NULL when
 * op is out of range. siox_wl_op_parse: the op, or -1. */
const char *siox_wl_op_name(int op);
int siox_wl_op_parse(const char *name);
/* 1 for the operations that move bytes (read/write, POSIX and MPI). */
int siox_wl_op_is_data(int op);
int siox_wl_op_is_read(int op);

#define SIOX_WL_NOFILE UINT32_MAX /* fid of operations on no file (barrier) */

struct siox_wl_rec {
  uint32_t rank;
  uint32_t op;     /* enum siox_wl_op */
  uint32_t fid;    /* index into the file table, or SIOX_WL_NOFILE */
  uint64_t offset; /* byte offset (data, seek); 0 otherwise */
  uint64_t bytes;  /* bytes asked (data); 0 otherwise */
  int64_t gap_ns;  /* compute time since the rank's previous operation ended */
  int64_t dur_ns;  /* how long the operation took in the recorded job */
  uint64_t extent; /* mpi_view: the tile step (offset: first data byte, bytes: the block; 0: contiguous) */
};

/* Views (README.md, "Views"; wl_view.c). v is an mpi_view record, or NULL
 * for the byte view. strided: 1 when v has holes (0 < block < extent).
 * pos: the view position of file byte off, 0 or -EINVAL when off is no data
 * byte of v. end: the file byte after the last one an access of bytes at off
 * reaches (off + bytes under the byte view). */
int siox_wl_view_strided(const struct siox_wl_rec *v);
int siox_wl_view_pos(const struct siox_wl_rec *v, uint64_t off, uint64_t *pos);
uint64_t siox_wl_view_end(const struct siox_wl_rec *v, uint64_t off, uint64_t bytes);

/* Darshan-like counters of one (rank, file) pair. */
#define SIOX_WL_HIST_BINS 10 /* access sizes: <100, <1K, <10K, <100K, <1M, <4M, <10M, <100M, <1G, >=1G */
#define SIOX_WL_COMMON 4     /* the most common access sizes kept per direction */
struct siox_wl_dir {          /* one direction: reads or writes */
  uint64_t count, bytes, coll; /* operations, bytes, of them collective (MPI *_ALL) */
  uint64_t seq, consec;        /* offset >= previous end / == previous end (same direction) */
  uint64_t hist[SIOX_WL_HIST_BINS];
  uint64_t common_size[SIOX_WL_COMMON], common_count[SIOX_WL_COMMON]; /* count 0: unused */
  uint64_t first_offset, max_end;
  int64_t time_ns; /* time spent in these operations */
};
struct siox_wl_counters {
  uint32_t rank, fid;
  int mpi;       /* 1 when the rank accessed the file through MPI-IO */
  int mpi_split; /* mpi_opens and mpi_closes are known (0: a version 1 file) */
  uint64_t opens, closes, seeks, stats, fsyncs;
  /* Of opens and closes, the MPI_File_open/close ones (version 2). Without
   * them a generator must guess which opens were MPI's. */
  uint64_t mpi_opens, mpi_closes;
  int64_t meta_ns; /* time in open, close, seek, stat, fsync */
  struct siox_wl_dir rd, wr;
};
/* Per rank: time outside I/O and the synchronization points. */
struct siox_wl_rank {
  uint32_t rank;
  uint64_t ops, barriers;
  int64_t compute_ns, io_ns;
};

/* ---- building and inspecting ------------------------------------------ */
siox_workload *siox_wl_new(enum siox_wl_form form, const char *job, uint32_t ranks);
void siox_wl_free(siox_workload *w);
enum siox_wl_form siox_wl_form(const siox_workload *w);
const char *siox_wl_job(const siox_workload *w);
uint32_t siox_wl_ranks(const siox_workload *w);
/* Files: fid = position in the table. add returns the new fid or -ENOMEM. */
int64_t siox_wl_add_file(siox_workload *w, const char *name);
size_t siox_wl_nfiles(const siox_workload *w);
const char *siox_wl_file_name(const siox_workload *w, uint32_t fid);
/* Trace records in order (the order of each rank's stream is kept). add:
 * 0, -EINVAL (rank/fid/op out of range), -ENOMEM. */
int siox_wl_add_rec(siox_workload *w, const struct siox_wl_rec *r);
size_t siox_wl_nrecs(const siox_workload *w);
const struct siox_wl_rec *siox_wl_rec(const siox_workload *w, size_t i);
/* Characterization rows. add: 0, -EINVAL, -ENOMEM. */
int siox_wl_add_counters(siox_workload *w, const struct siox_wl_counters *c);
size_t siox_wl_ncounters(const siox_workload *w);
const struct siox_wl_counters *siox_wl_counters_at(const siox_workload *w, size_t i);
int siox_wl_set_rank(siox_workload *w, const struct siox_wl_rank *r);
/* NULL when nothing was set for that rank. */
const struct siox_wl_rank *siox_wl_rank_info(const siox_workload *w, uint32_t rank);

/* ---- the file format (wl_write.c, wl_read.c) --------------------------- */
/* Writes w in the format of README.md. 0 or -EIO. */
int siox_wl_write(const siox_workload *w, FILE *f);
/* Reads a workload file; rejects (-EINVAL, with the line and the reason in
 * err) a foreign or newer file, a malformed line and a truncated file (no
 * or wrong `end` line). 0 with *out set, -EINVAL, -ENOMEM, -EIO. */
int siox_wl_read(FILE *f, siox_workload **out, char *err, size_t errlen);
int siox_wl_read_path(const char *path, siox_workload **out, char *err, size_t errlen);

/* ---- transformations --------------------------------------------------- */
/* The characterization of a trace (wl_characterize.c). 0, -EINVAL (not a
 * trace), -ENOMEM. */
int siox_wl_characterize(const siox_workload *trace, siox_workload **out);
/* A trace with the same counters as a characterization (wl_synth.c): see
 * README.md "Generators" for what is kept exactly. 0, -EINVAL, -ENOMEM. */
int siox_wl_synthesize(const siox_workload *charact, siox_workload **out, char *err, size_t errlen);
/* Replaces every file name by "fileN" plus the name's extension. */
int siox_wl_anonymize(siox_workload *w);
/* The same job at n ranks, weak scaling (wl_transform.c): new rank r runs
 * old rank r mod R's stream (R: the trace's ranks; fewer ranks: the first n
 * keep theirs). Replica k = r / R of a file only one rank uses (file per
 * process) is a file of its own, "NAME.rK"; a file several ranks share stays
 * shared and replica k's accesses move k x the file's extent further, so
 * replicas never overlap. Sizes, gaps and durations are kept. 0, -EINVAL
 * (not a trace, n out of 1..2^20; err), -ENOMEM. */
int siox_wl_scale_ranks(const siox_workload *w, uint32_t n, siox_workload **out, char *err, size_t errlen);
/* File per process: each rank's operations on a file several ranks share go
 * to a file of its own, "NAME.rR" (offsets kept: the same requests on a
 * sparse file; MPI-IO opens then involve that rank alone). Files of one
 * rank stay. 0, -EINVAL (not a trace; err), -ENOMEM. */
int siox_wl_file_per_process(const siox_workload *w, siox_workload **out, char *err, size_t errlen);

/* ---- from the warehouse (wl_extract.c) --------------------------------- */
struct siox_wl_extract_opts {
  const char *job;         /* required */
  const char *const *prefixes; /* NULL-terminated; keep only files under these; NULL: README's default filter */
};
struct siox_wl_extract_stats {
  uint64_t activities;      /* rows read for the job */
  uint64_t kept;            /* became records */
  uint64_t inner;           /* below a kept MPI-IO call (its implementation) */
  uint64_t unknown_file;    /* on a descriptor opened before tracing or not seen */
  uint64_t filtered;        /* on a file the path filter left out */
  uint64_t other;           /* calls the format has no operation for (ftruncate, unlink, ...) */
  uint64_t no_rank;         /* activities of processes without an MPI rank in an MPI job (mpirun) */
  uint32_t processes;
};
/* The job's trace, read from the warehouse over c. 0, -ENOENT (no process
 * of that job visible to this user), -EINVAL (the job id names processes of
 * several users, or two processes claim one rank; err), -EIO (query failed;
 * err), -ENOMEM. */
int siox_wl_extract(PGconn *c, const struct siox_wl_extract_opts *o, siox_workload **out,
                    struct siox_wl_extract_stats *st, char *err, size_t errlen);

#endif
