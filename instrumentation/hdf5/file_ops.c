/*
 * HDF5 file calls on node (host, HDF5): H5Fcreate, H5Fopen, H5Fflush,
 * H5Fclose. With the MPI-IO driver these run MPI_File_open/close/sync
 * underneath in the same thread, which become their children.
 */
#include "hdf5_layer.h"

hid_t H5Fcreate(const char *filename, unsigned flags, hid_t fcpl_id, hid_t fapl_id) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_FCREATE);
  hid_t id = siox__h5.real.Fcreate(filename, flags, fcpl_id, fapl_id);
  if (!aid) return id;
  siox_activity_attr_str(aid, SIOX_ATTR_HDF5_NAME, filename);
  siox_activity_attr_u64(aid, SIOX_ATTR_IO_FLAGS, flags);
  siox__h5_stop(aid, id);
  return id;
}

hid_t H5Fopen(const char *filename, unsigned flags, hid_t fapl_id) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_FOPEN);
  hid_t id = siox__h5.real.Fopen(filename, flags, fapl_id);
  if (!aid) return id;
  siox_activity_attr_str(aid, SIOX_ATTR_HDF5_NAME, filename);
  siox_activity_attr_u64(aid, SIOX_ATTR_IO_FLAGS, flags);
  siox__h5_stop(aid, id);
  return id;
}

herr_t H5Fflush(hid_t object_id, H5F_scope_t scope) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_FFLUSH);
  herr_t rc = siox__h5.real.Fflush(object_id, scope);
  if (aid) siox__h5_stop(aid, rc);
  return rc;
}

herr_t H5Fclose(hid_t file_id) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_FCLOSE);
  herr_t rc = siox__h5.real.Fclose(file_id);
  if (aid) siox__h5_stop(aid, rc);
  return rc;
}
