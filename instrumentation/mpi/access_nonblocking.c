/*
 * Nonblocking data access on node (host, MPI-IO): MPI_File_i*. The
 * operation is a detached activity from the call until MPI_Wait/Test finds
 * its request complete (requests.c); the call itself is a stacked "post"
 * child, so the POSIX calls made inside it are linked to the operation.
 */
#include "mpi_layer.h"

/* Ends the post and hands the operation to the request table, or ends it
 * at once when the call failed and no request exists. */
static void posted(siox_detached *d, siox_aid post, int rc, MPI_Request *req) {
  siox__mpi_detached_posted(d);
  if (rc == MPI_SUCCESS) {
    siox__mpi_request_add(*req, d);
  } else {
    siox_detached_error(d, rc);
    siox_detached_stop(d);
  }
  siox__mpi_stop(post, rc);
}

int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  struct siox_mpi_access a = {CALL_IREAD, POS_INDIVIDUAL, 0, fh, 0, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_iread(fh, buf, count, type, req);
  if (d) posted(d, post, rc, req);
  return rc;
}

int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  struct siox_mpi_access a = {CALL_IREAD_ALL, POS_INDIVIDUAL, 1, fh, 0, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_iread_all(fh, buf, count, type, req);
  if (d) posted(d, post, rc, req);
  return rc;
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  struct siox_mpi_access a = {CALL_IREAD_AT, POS_EXPLICIT, 0, fh, offset, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_iread_at(fh, offset, buf, count, type, req);
  if (d) posted(d, post, rc, req);
  return rc;
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  struct siox_mpi_access a = {CALL_IREAD_AT_ALL, POS_EXPLICIT, 1, fh, offset, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_iread_at_all(fh, offset, buf, count, type, req);
  if (d) posted(d, post, rc, req);
  return rc;
}

int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  struct siox_mpi_access a = {CALL_IREAD_SHARED, POS_SHARED, 0, fh, 0, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_iread_shared(fh, buf, count, type, req);
  if (d) posted(d, post, rc, req);
  return rc;
}

int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  struct siox_mpi_access a = {CALL_IWRITE, POS_INDIVIDUAL, 0, fh, 0, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_iwrite(fh, buf, count, type, req);
  if (d) posted(d, post, rc, req);
  return rc;
}

int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  struct siox_mpi_access a = {CALL_IWRITE_ALL, POS_INDIVIDUAL, 1, fh, 0, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_iwrite_all(fh, buf, count, type, req);
  if (d) posted(d, post, rc, req);
  return rc;
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  struct siox_mpi_access a = {CALL_IWRITE_AT, POS_EXPLICIT, 0, fh, offset, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_iwrite_at(fh, offset, buf, count, type, req);
  if (d) posted(d, post, rc, req);
  return rc;
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  struct siox_mpi_access a = {CALL_IWRITE_AT_ALL, POS_EXPLICIT, 1, fh, offset, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_iwrite_at_all(fh, offset, buf, count, type, req);
  if (d) posted(d, post, rc, req);
  return rc;
}

int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Request *req) {
  struct siox_mpi_access a = {CALL_IWRITE_SHARED, POS_SHARED, 0, fh, 0, count, type};
  siox_aid post;
  siox_detached *d = siox__mpi_detached_start(&a, &post);
  int rc = PMPI_File_iwrite_shared(fh, buf, count, type, req);
  if (d) posted(d, post, rc, req);
  return rc;
}
