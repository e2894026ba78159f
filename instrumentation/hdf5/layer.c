/*
 * libsiox-hdf5 set-up: finds the real HDF5 entry points (dlsym RTLD_NEXT
 * for the wrapped ones, so this library must come before libhdf5 in the
 * search order, which LD_PRELOAD guarantees), registers node (host, HDF5)
 * with the edge HDF5 -> MPI-IO and one activity type per wrapped call.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "hdf5_layer.h"

struct siox_h5_layer siox__h5;
SIOX_H5_TLS int siox__h5_depth;

static const char *const call_names[H5C_COUNT] = {
  "H5Fcreate", "H5Fopen", "H5Fflush", "H5Fclose",
  "H5Dcreate2", "H5Dopen2", "H5Dread", "H5Dwrite", "H5Dclose",
  "H5Gcreate2", "H5Acreate2", "H5Awrite",
};

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Casts dlsym's object pointer to the function pointer it names (POSIX
 * guarantees this works; ISO C has no word for it). */
#define RESOLVE(h, field, sym) \
  do { void *p_ = dlsym(h, sym); __builtin_memcpy(&siox__h5.real.field, &p_, sizeof p_); } while (0)

static void resolve(void) {
  RESOLVE(RTLD_NEXT, Fcreate, "H5Fcreate");
  RESOLVE(RTLD_NEXT, Fopen, "H5Fopen");
  RESOLVE(RTLD_NEXT, Fflush, "H5Fflush");
  RESOLVE(RTLD_NEXT, Fclose, "H5Fclose");
  RESOLVE(RTLD_NEXT, Dcreate2, "H5Dcreate2");
  RESOLVE(RTLD_NEXT, Dopen2, "H5Dopen2");
  RESOLVE(RTLD_NEXT, Dread, "H5Dread");
  RESOLVE(RTLD_NEXT, Dwrite, "H5Dwrite");
  RESOLVE(RTLD_NEXT, Dclose, "H5Dclose");
  RESOLVE(RTLD_NEXT, Gcreate2, "H5Gcreate2");
  RESOLVE(RTLD_NEXT, Acreate2, "H5Acreate2");
  RESOLVE(RTLD_NEXT, Awrite, "H5Awrite");
  RESOLVE(RTLD_DEFAULT, Iget_name, "H5Iget_name");
  RESOLVE(RTLD_DEFAULT, Dget_space, "H5Dget_space");
  RESOLVE(RTLD_DEFAULT, Aget_space, "H5Aget_space");
  RESOLVE(RTLD_DEFAULT, Sget_select_npoints, "H5Sget_select_npoints");
  RESOLVE(RTLD_DEFAULT, Sclose, "H5Sclose");
  RESOLVE(RTLD_DEFAULT, Tget_size, "H5Tget_size");
  RESOLVE(RTLD_DEFAULT, Pget_dxpl_mpio, "H5Pget_dxpl_mpio");
}

static int register_all(void) {
  char host[256] = "localhost";
  siox_unid mpiio;
  gethostname(host, sizeof host - 1);
  if (siox_node_register(host, "HDF5", NULL, &siox__h5.node) < 0 ||
      siox_node_register(host, "MPI-IO", NULL, &mpiio) < 0 || siox_edge_register(siox__h5.node, mpiio) < 0)
    return -1;
  for (int i = 0; i < H5C_COUNT; i++)
    if (siox_activity_type_register(siox__h5.node, call_names[i], &siox__h5.type[i]) < 0) return -1;
  return 0;
}

static void layer_init(void) {
  resolve();
  /* The helpers are needed to describe calls; without them record nothing
   * rather than half. Registration fails when SIOX is disabled. */
  siox__h5.ok = siox__h5.real.Iget_name && siox__h5.real.Sget_select_npoints && siox__h5.real.Tget_size &&
                siox__h5.real.Pget_dxpl_mpio && siox__h5.real.Dget_space && siox__h5.real.Aget_space &&
                siox__h5.real.Sclose && register_all() == 0;
}

void siox__h5_layer_init(void) {
  pthread_once(&once, layer_init);
}

siox_aid siox__h5_start(enum siox_h5_call call) {
  if (siox__h5_depth || !siox__h5.ok) return 0;
  siox_aid aid = siox_activity_start(siox__h5.type[call]);
  if (aid) siox__h5_depth++;
  return aid;
}

void siox__h5_stop(siox_aid aid, long long rc) {
  siox__h5_depth--;
  if (rc < 0) siox_activity_error(aid, (int32_t)rc);
  siox_activity_stop(aid);
}

void siox__h5_name(siox_aid aid, hid_t id) {
  char name[1024];
  ssize_t n = siox__h5.real.Iget_name(id, name, sizeof name);
  if (n > 0 && (size_t)n < sizeof name) siox_activity_attr_str(aid, SIOX_ATTR_HDF5_NAME, name);
}
