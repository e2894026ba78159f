/*
 * Split collective data access on node (host, MPI-IO): one detached
 * activity from MPI_File_*_begin to the matching _end (at most one split
 * collective is open per file handle, so the file entry holds it). Time
 * inside _begin is a stacked "post" child, time inside _end a "complete"
 * child, so the POSIX calls made in either are linked to the operation.
 */
#include "mpi_layer.h"

static void begun(MPI_File fh, siox_detached *d, siox_aid post, int rc) {
  struct siox_mpi_file *f = siox__mpi_file_find(fh);
  if (rc == MPI_SUCCESS && f && !f->split) {
    f->split = d;
  } else {
    if (rc != MPI_SUCCESS) siox_detached_error(d, rc);
    siox_detached_stop(d);
  }
  siox__mpi_stop(post, rc);
}

/* Takes the open split collective of fh, if any, and starts the stacked
 * "complete" child for the time spent in _end; returns the complete aid. */
static siox_aid ending(MPI_File fh, siox_detached **d) {
  struct siox_mpi_file *f = siox__mpi_file_find(fh);
  *d = f ? f->split : NULL;
  if (!*d) return 0;
  f->split = NULL;
  siox__mpi_io_enter();
  return siox_activity_start_child(siox__mpi.type[CALL_COMPLETE], siox_detached_aid(*d));
}

static void ended(siox_detached *d, siox_aid complete, int rc) {
  if (!d) return;
  siox__mpi_stop(complete, rc);
  if (rc != MPI_SUCCESS) siox_detached_error(d, rc);
  siox_detached_stop(d);
}

int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype type) {
  struct siox_mpi_access a = {CALL_READ_ALL_SPLIT, POS_INDIVIDUAL, 1, fh, 0, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_read_all_begin(fh, buf, count, type);
  if (d) begun(fh, d, post, rc);
  return rc;
}

int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status) {
  siox_detached *d;
  siox_aid complete = ending(fh, &d);
  int rc = PMPI_File_read_all_end(fh, buf, status);
  ended(d, complete, rc);
  return rc;
}

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type) {
  struct siox_mpi_access a = {CALL_READ_AT_ALL_SPLIT, POS_EXPLICIT, 1, fh, offset, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_read_at_all_begin(fh, offset, buf, count, type);
  if (d) begun(fh, d, post, rc);
  return rc;
}

int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status) {
  siox_detached *d;
  siox_aid complete = ending(fh, &d);
  int rc = PMPI_File_read_at_all_end(fh, buf, status);
  ended(d, complete, rc);
  return rc;
}

int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype type) {
  struct siox_mpi_access a = {CALL_READ_ORDERED_SPLIT, POS_ORDERED, 1, fh, 0, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_read_ordered_begin(fh, buf, count, type);
  if (d) begun(fh, d, post, rc);
  return rc;
}

int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status) {
  siox_detached *d;
  siox_aid complete = ending(fh, &d);
  int rc = PMPI_File_read_ordered_end(fh, buf, status);
  ended(d, complete, rc);
  return rc;
}

int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype type) {
  struct siox_mpi_access a = {CALL_WRITE_ALL_SPLIT, POS_INDIVIDUAL, 1, fh, 0, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_write_all_begin(fh, buf, count, type);
  if (d) begun(fh, d, post, rc);
  return rc;
}

int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
  siox_detached *d;
  siox_aid complete = ending(fh, &d);
  int rc = PMPI_File_write_all_end(fh, buf, status);
  ended(d, complete, rc);
  return rc;
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type) {
  struct siox_mpi_access a = {CALL_WRITE_AT_ALL_SPLIT, POS_EXPLICIT, 1, fh, offset, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_write_at_all_begin(fh, offset, buf, count, type);
  if (d) begun(fh, d, post, rc);
  return rc;
}

int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
  siox_detached *d;
  siox_aid complete = ending(fh, &d);
  int rc = PMPI_File_write_at_all_end(fh, buf, status);
  ended(d, complete, rc);
  return rc;
}

int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype type) {
  struct siox_mpi_access a = {CALL_WRITE_ORDERED_SPLIT, POS_ORDERED, 1, fh, 0, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_write_ordered_begin(fh, buf, count, type);
  if (d) begun(fh, d, post, rc);
  return rc;
}

int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status) {
  siox_detached *d;
  siox_aid complete = ending(fh, &d);
  int rc = PMPI_File_write_ordered_end(fh, buf, status);
  ended(d, complete, rc);
  return rc;
}
