/*
 * H5Dread / H5Dwrite on node (host, HDF5): the dataset's path (hdf5/name),
 * the bytes selected (hdf5/selection_bytes = io/bytes: selected elements x
 * memory type size) and the transfer mode of the dxpl (mpi/collective). The
 * MPI-IO calls the MPI-IO driver makes underneath become children.
 */
#include "hdf5_layer.h"

/* Elements selected by the call: the file selection, else the memory one,
 * else (both H5S_ALL) the whole dataset. */
static hssize_t selected(hid_t dset_id, hid_t mem_space, hid_t file_space) {
  if (file_space != H5S_ALL) return siox__h5.real.Sget_select_npoints(file_space);
  if (mem_space != H5S_ALL) return siox__h5.real.Sget_select_npoints(mem_space);
  hid_t space = siox__h5.real.Dget_space(dset_id);
  if (space < 0) return -1;
  hssize_t n = siox__h5.real.Sget_select_npoints(space);
  siox__h5.real.Sclose(space);
  return n;
}

static void describe(siox_aid aid, hid_t dset_id, hid_t mem_type, hid_t mem_space, hid_t file_space,
                     hid_t dxpl_id) {
  H5FD_mpio_xfer_t mode = H5FD_MPIO_INDEPENDENT;
  hssize_t n = selected(dset_id, mem_space, file_space);
  uint64_t bytes = n > 0 ? (uint64_t)n * siox__h5.real.Tget_size(mem_type) : 0;
  siox__h5_name(aid, dset_id);
  siox_activity_attr_u64(aid, SIOX_ATTR_HDF5_SELECTION_BYTES, bytes);
  siox_activity_attr_u64(aid, SIOX_ATTR_IO_BYTES, bytes);
  siox_activity_attr_u64(aid, SIOX_ATTR_IO_COUNT, n > 0 ? (uint64_t)n : 0);
  /* H5P_DEFAULT, or a dxpl without the MPI-IO property, means independent. */
  if (dxpl_id != H5P_DEFAULT && siox__h5.real.Pget_dxpl_mpio(dxpl_id, &mode) < 0)
    mode = H5FD_MPIO_INDEPENDENT;
  siox_activity_attr_u64(aid, SIOX_ATTR_MPI_COLLECTIVE, mode == H5FD_MPIO_COLLECTIVE);
}

herr_t H5Dwrite(hid_t dset_id, hid_t mem_type_id, hid_t mem_space_id, hid_t file_space_id, hid_t dxpl_id,
                const void *buf) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_DWRITE);
  if (aid) describe(aid, dset_id, mem_type_id, mem_space_id, file_space_id, dxpl_id);
  herr_t rc = siox__h5.real.Dwrite(dset_id, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf);
  if (aid) siox__h5_stop(aid, rc);
  return rc;
}

herr_t H5Dread(hid_t dset_id, hid_t mem_type_id, hid_t mem_space_id, hid_t file_space_id, hid_t dxpl_id,
               void *buf) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_DREAD);
  if (aid) describe(aid, dset_id, mem_type_id, mem_space_id, file_space_id, dxpl_id);
  herr_t rc = siox__h5.real.Dread(dset_id, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf);
  if (aid) siox__h5_stop(aid, rc);
  return rc;
}
