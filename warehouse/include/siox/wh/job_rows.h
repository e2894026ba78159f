/*
 * A job's I/O-layer activities as rows, for the libraries that rebuild a
 * job from them in their own structures: libsiox-workload's trace extractor
 * (siox_wh_job_trace_rows) and libsiox-kb's findings analysis
 * (siox_wh_job_analysis_rows). The SQL stays here (wh_job_rows.c); the
 * caller reads the rows one by one into what it needs, so a job of millions
 * of activities is held once, in the result.
 */
#ifndef SIOX_WH_JOB_ROWS_H
#define SIOX_WH_JOB_ROWS_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#define SIOX_WH_NONE INT64_MIN /* an attribute the activity does not carry */

/* One activity. Strings are borrowed from the rows (valid until
 * siox_wh_job_rows_free); each function says which fields it fills, the
 * others are SIOX_WH_NONE (numbers) or NULL (strings). */
struct siox_wh_job_row {
  int64_t aid, parent; /* parent 0: no explicit parent */
  int32_t proc, err;
  const char *swid, *name;
  int64_t start_ns, end_ns;
  int64_t offset, bytes, result, fd, coll, rank, stdio; /* io/offset, io/bytes, io/result, posix/fd,
                                                           mpi/collective, mpi/rank, stdio/file */
  const char *path;      /* its own posix/path attribute (opens) */
  const char *sent_path; /* the posix/path its remote call sent (collective MPI-IO accesses) */
  const char *call_path; /* the posix/path of any of its remote-call records (POSIX under MPI-IO) */
  const char *hints, *io_component; /* mpi/hints, mpi/io_component (MPI_File_open) */
  int64_t view_block, view_extent;  /* mpi/view_block, mpi/view_extent (MPI_File_set_view) */
};

/* One process of a job, strings borrowed as above. */
struct siox_wh_job_proc {
  int32_t proc_id;
  const char *host, *exe, *args;
};

struct siox_wh_job_rows;

/* The POSIX, stdio, MPI-IO and MPI activities of job's processes
 * (processes.job = job), ordered by process, start, aid: aid, parent, proc,
 * err, swid, name, start/end, offset, bytes, result, fd, coll, rank, stdio,
 * path, sent_path. *out is the caller's (siox_wh_job_rows_free). The row
 * count (0: none visible), -EINVAL (the id names several users' jobs: two
 * jobs share it; err), -EIO (err), -ENOMEM. */
long siox_wh_job_trace_rows(PGconn *c, const char *job, struct siox_wh_job_rows **out, char *err, size_t errlen);

/* The processes the findings analysis looks at: those of job (or of
 * "proc:ID", a process without a job); when some made MPI-IO calls, only
 * those (mpirun and shells are not the application). Ordered by proc_id.
 * The count, -EIO or -ENOMEM; *out as above. */
long siox_wh_job_analysis_procs(PGconn *c, const char *job, struct siox_wh_job_rows **out, char *err,
                                size_t errlen);

/* The MPI, MPI-IO, POSIX and stdio activities of those processes, ordered by
 * aid: aid, parent, proc, swid, name, start/end, bytes, offset, coll, path,
 * call_path, hints, io_component. The count, -EIO or -ENOMEM. */
long siox_wh_job_analysis_rows(PGconn *c, const char *job, struct siox_wh_job_rows **out, char *err,
                               size_t errlen);

/* Row i (below the count) of activity rows into *row. */
void siox_wh_job_row(const struct siox_wh_job_rows *r, size_t i, struct siox_wh_job_row *row);
/* Row i of process rows into *p. */
void siox_wh_job_proc(const struct siox_wh_job_rows *r, size_t i, struct siox_wh_job_proc *p);
void siox_wh_job_rows_free(struct siox_wh_job_rows *r);

#endif
