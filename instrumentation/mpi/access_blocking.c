/*
 * Blocking data access on node (host, MPI-IO): read and write with the
 * individual pointer, explicit offsets (_at), shared (_shared) and ordered
 * (_ordered) pointers, independent and collective (_all). Each call is one
 * activity on the calling thread's stack, so the POSIX calls ROMIO or OMPIO
 * make underneath in this thread become its children.
 */
#include "mpi_layer.h"

int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_READ, POS_INDIVIDUAL, 0, fh, 0, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_read(fh, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_READ_ALL, POS_INDIVIDUAL, 1, fh, 0, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_read_all(fh, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_READ_AT, POS_EXPLICIT, 0, fh, offset, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_read_at(fh, offset, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_READ_AT_ALL, POS_EXPLICIT, 1, fh, offset, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_read_at_all(fh, offset, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_READ_SHARED, POS_SHARED, 0, fh, 0, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_read_shared(fh, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_READ_ORDERED, POS_ORDERED, 1, fh, 0, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_read_ordered(fh, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_WRITE, POS_INDIVIDUAL, 0, fh, 0, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_write(fh, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_WRITE_ALL, POS_INDIVIDUAL, 1, fh, 0, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_write_all(fh, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_WRITE_AT, POS_EXPLICIT, 0, fh, offset, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_write_at(fh, offset, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_WRITE_AT_ALL, POS_EXPLICIT, 1, fh, offset, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_write_at_all(fh, offset, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_WRITE_SHARED, POS_SHARED, 0, fh, 0, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_write_shared(fh, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}

int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Status *status) {
  struct siox_mpi_access a = {CALL_WRITE_ORDERED, POS_ORDERED, 1, fh, 0, count, type};
  siox_aid aid = siox__mpi_access_start(&a);
  int rc = PMPI_File_write_ordered(fh, buf, count, type, status);
  if (aid) siox__mpi_stop(aid, rc);
  return rc;
}
