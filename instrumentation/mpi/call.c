/*
 * The activity of an MPI call that is not a data access: file management
 * (file_ops.c) and world-wide collectives (collectives.c). One start and
 * one stop for both, so that the depth rule (a call made inside a recorded
 * MPI-IO call passes through) is kept in one place.
 */
#include "mpi_layer.h"

/* 1 when comm spans every rank of MPI_COMM_WORLD. */
static int world_wide(MPI_Comm comm) {
  int n = 0, world = 0;
  if (comm == MPI_COMM_WORLD) return 1;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS) return 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &world);
  return n == world;
}

siox_aid siox__mpi_call_start(enum siox_mpi_call call, const MPI_Comm *world_only) {
  /* The depth first: inside a recorded call no PMPI_Comm_size is made. */
  if (siox__mpi_depth || !siox__mpi_layer_ready()) return 0;
  if (world_only && !world_wide(*world_only)) return 0;
  siox_aid aid = siox_activity_start(siox__mpi.type[call]);
  if (aid) siox__mpi_depth++;
  return aid;
}

int siox__mpi_call_stop(siox_aid aid, int rc) {
  if (!aid) return rc;
  siox__mpi_depth--;
  siox_activity_stop_attrs(aid, NULL, 0, rc != MPI_SUCCESS ? rc : 0); /* one call into the client */
  return rc;
}
