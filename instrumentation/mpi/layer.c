/*
 * Registration of the PMPI layer with libsiox-client: the nodes (host, MPI)
 * and (host, MPI-IO), the edge MPI-IO -> POSIX, the POSIX target of the
 * remote-call sends and one activity type per wrapped call. Done once, on
 * the first wrapped call, so that loading the library costs nothing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "mpi_layer.h"

struct siox_mpi_layer siox__mpi;
SIOX_MPI_TLS int siox__mpi_depth;
SIOX_MPI_TLS unsigned siox__mpi_linked;

/* The MPI-IO names of the calls in enum siox_mpi_call, in order. */
static const char *const call_names[CALL_COUNT] = {
  "MPI_Init", "MPI_Init_thread", "MPI_Finalize",
  "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Allgather", "MPI_Allgatherv",
  "MPI_Scatter", "MPI_Alltoall", "MPI_Alltoallv",
  "MPI_File_open", "MPI_File_close", "MPI_File_set_view", "MPI_File_set_info", "MPI_File_sync",
  "MPI_File_read", "MPI_File_read_all", "MPI_File_read_at", "MPI_File_read_at_all",
  "MPI_File_read_shared", "MPI_File_read_ordered",
  "MPI_File_write", "MPI_File_write_all", "MPI_File_write_at", "MPI_File_write_at_all",
  "MPI_File_write_shared", "MPI_File_write_ordered",
  "MPI_File_iread", "MPI_File_iread_all", "MPI_File_iread_at", "MPI_File_iread_at_all",
  "MPI_File_iread_shared",
  "MPI_File_iwrite", "MPI_File_iwrite_all", "MPI_File_iwrite_at", "MPI_File_iwrite_at_all",
  "MPI_File_iwrite_shared",
  "MPI_File_read_all_begin", "MPI_File_read_at_all_begin", "MPI_File_read_ordered_begin",
  "MPI_File_write_all_begin", "MPI_File_write_at_all_begin", "MPI_File_write_ordered_begin",
  "post", "complete",
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
atomic_int siox__mpi_ready;

static int register_all(void) {
  char host[256] = "localhost";
  siox_unid posix;
  gethostname(host, sizeof host - 1);
  if (siox_node_register(host, "MPI", NULL, &siox__mpi.node_mpi) < 0 ||
      siox_node_register(host, "MPI-IO", NULL, &siox__mpi.node_mpiio) < 0 ||
      siox_node_register(host, "POSIX", NULL, &posix) < 0 ||
      siox_edge_register(siox__mpi.node_mpiio, posix) < 0 ||
      siox_target_register("*", "POSIX", &siox__mpi.posix) < 0)
    return -1;
  for (int i = 0; i < CALL_COUNT; i++) {
    siox_unid node = i <= CALL_ALLTOALLV ? siox__mpi.node_mpi : siox__mpi.node_mpiio;
    if (siox_activity_type_register(node, call_names[i], &siox__mpi.type[i]) < 0) return -1;
  }
  return 0;
}

static void layer_init(void) {
  /* Registration may fail (SIOX_DISABLE=1, bad environment): the layer then
   * passes every call straight through, which is what the user asked for. */
  siox__mpi.ok = register_all() == 0;
}

int siox__mpi_layer_init(void) {
  pthread_once(&once, layer_init);
  atomic_store_explicit(&siox__mpi_ready, 1, memory_order_release);
  return siox__mpi.ok;
}
