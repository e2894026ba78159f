/*
 * Collectives on node (host, MPI): MPI_Barrier, Bcast, Reduce, Allreduce,
 * Gather, Allgather(v), Scatter and Alltoall(v). They are the
 * synchronization points of a job between its I/O calls: a workload
 * extracted from the warehouse replays each as a barrier (workload/README.md),
 * so a replay keeps the job's waits where they were.
 *
 * Only collectives over all of MPI_COMM_WORLD's ranks are recorded: a
 * replay can only place a barrier on the ranks that all take part, and a
 * sub-communicator's collective replayed on the world would deadlock.
 * Collectives called inside a recorded MPI-IO call (ROMIO's own Allreduce
 * and Alltoall of two-phase I/O) are part of that call and pass through.
 */
#include "mpi_layer.h"

/* Recorded only over all of MPI_COMM_WORLD (see above); call.c. */
static siox_aid coll_start(enum siox_mpi_call call, MPI_Comm comm) {
  return siox__mpi_call_start(call, &comm);
}

int MPI_Barrier(MPI_Comm comm) {
  siox_aid aid = coll_start(CALL_BARRIER, comm);
  return siox__mpi_call_stop(aid, PMPI_Barrier(comm));
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  siox_aid aid = coll_start(CALL_BCAST, comm);
  return siox__mpi_call_stop(aid, PMPI_Bcast(buf, count, type, root, comm));
}

int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  siox_aid aid = coll_start(CALL_REDUCE, comm);
  return siox__mpi_call_stop(aid, PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm));
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  siox_aid aid = coll_start(CALL_ALLREDUCE, comm);
  return siox__mpi_call_stop(aid, PMPI_Allreduce(sbuf, rbuf, count, type, op, comm));
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  siox_aid aid = coll_start(CALL_GATHER, comm);
  return siox__mpi_call_stop(aid, PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
}

int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  siox_aid aid = coll_start(CALL_ALLGATHER, comm);
  return siox__mpi_call_stop(aid, PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}

int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  siox_aid aid = coll_start(CALL_ALLGATHERV, comm);
  return siox__mpi_call_stop(aid, PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));
}

int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  siox_aid aid = coll_start(CALL_SCATTER, comm);
  return siox__mpi_call_stop(aid, PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
}

int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  siox_aid aid = coll_start(CALL_ALLTOALL, comm);
  return siox__mpi_call_stop(aid, PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm));
}

int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  siox_aid aid = coll_start(CALL_ALLTOALLV, comm);
  return siox__mpi_call_stop(aid, PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm));
}
