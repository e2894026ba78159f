/*
 * MPI_Init, MPI_Init_thread and MPI_Finalize on node (host, MPI): the
 * activity of MPI_Init carries the rank, the size of MPI_COMM_WORLD and the
 * job id, which tie this process's activities to the job. Finalize flushes
 * the client so that nothing waits for an exit handler that _exit skips.
 */
#include <stdlib.h>

#include "mpi_layer.h"

/* The job id the batch system or launcher gave this process, or NULL. */
static const char *job_id(void) {
  const char *vars[] = {SIOX_ENV_JOB, "SLURM_JOB_ID", "PBS_JOBID", "OMPI_MCA_ess_base_jobid"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return v;
  }
  return NULL;
}

static void describe_world(siox_aid aid, int rc) {
  int rank = -1, size = -1;
  if (rc != MPI_SUCCESS) {
    siox_activity_error(aid, rc);
    return;
  }
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  siox_activity_attr_i64(aid, SIOX_ATTR_MPI_RANK, rank);
  siox_activity_attr_i64(aid, SIOX_ATTR_MPI_SIZE, size);
  const char *job = job_id();
  if (job) siox_activity_attr_str(aid, SIOX_ATTR_JOB_ID, job);
}

int MPI_Init(int *argc, char ***argv) {
  if (!siox__mpi_layer_ready()) return PMPI_Init(argc, argv);
  siox_aid aid = siox_activity_start(siox__mpi.type[CALL_INIT]);
  int rc = PMPI_Init(argc, argv);
  describe_world(aid, rc);
  siox_activity_stop(aid);
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  if (!siox__mpi_layer_ready()) return PMPI_Init_thread(argc, argv, required, provided);
  siox_aid aid = siox_activity_start(siox__mpi.type[CALL_INIT_THREAD]);
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  describe_world(aid, rc);
  siox_activity_stop(aid);
  return rc;
}

int MPI_Finalize(void) {
  if (!siox__mpi_layer_ready()) return PMPI_Finalize();
  siox_aid aid = siox_activity_start(siox__mpi.type[CALL_FINALIZE]);
  int rc = PMPI_Finalize();
  siox__mpi_stop(aid, rc);
  /* The default exit timeout bounds the wait; a missing daemon costs
   * nothing more (-ENOTCONN at once). */
  siox_flush(1000);
  return rc;
}
