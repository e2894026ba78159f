/* siox-replay internals: the plan (what every rank needs before the first
 * operation, replay_plan.c) and the execution of one rank's stream
 * (replay_run.c). */
#ifndef SIOX_REPLAY_H
#define SIOX_REPLAY_H

#include <mpi.h>

#include "siox_workload.h"

struct replay_plan {
  const siox_workload *w;
  size_t nfiles;
  char **path;           /* where file fid is replayed: DIR/f<fid>-<base name> */
  uint64_t *read_extent; /* bytes the file must hold for its reads to be whole */
  uint64_t *write_extent; /* the end of the furthest write (under a view, of its last block) */
  MPI_Comm *comm;        /* ranks that MPI-open the file; MPI_COMM_NULL elsewhere */
  size_t *mine;          /* this rank's record indices, in stream order */
  size_t nmine;
  uint64_t max_bytes;    /* largest single access: the buffer size */
};

/* Builds the plan for rank `rank` (collective: splits one communicator per
 * MPI-opened file). 0, -EINVAL (an access larger than MPI's int count; err),
 * -ENOMEM. */
int replay_plan_build(struct replay_plan *p, const siox_workload *w, const char *dir, int rank, char *err,
                      size_t errlen);
void replay_plan_free(struct replay_plan *p);
/* Rank 0 creates each file, and extends one whose reads reach past its
 * writes to its read extent (not timed; README.md, "siox-replay"). */
int replay_prepare_files(const struct replay_plan *p, char *err, size_t errlen);

/* MPI_File_set_view to the view of mpi_view record v (NULL: the byte
 * view), collective over the file's communicator (replay_view.c). 0, -EIO,
 * -EINVAL. */
int replay_view_set(MPI_File fh, const struct siox_wl_rec *v);
/* Every rank's current view per file, as a pass over all records meets
 * their mpi_view records (which must outlive the table). set: 0 or -ENOMEM;
 * get: NULL (the byte view) when none. */
struct replay_views *replay_views_new(size_t nfiles);
int replay_views_set(struct replay_views *t, const struct siox_wl_rec *mpi_view);
const struct siox_wl_rec *replay_views_get(const struct replay_views *t, const struct siox_wl_rec *r);
void replay_views_free(struct replay_views *t);

struct replay_result {
  uint64_t *bytes_read, *bytes_written; /* per fid */
  uint64_t ops;
  int64_t io_ns, recorded_io_ns, wall_ns;
};
/* Executes this rank's stream. 0, or -errno of the first failed operation
 * with the operation named in err (the replay stops there: a replay that
 * did less than the job is not a replay). */
int replay_run(const struct replay_plan *p, int gaps, struct replay_result *res, char *err, size_t errlen);

#endif
