/*
 * HDF5 object calls on node (host, HDF5): datasets (create, open, close),
 * groups (create) and attributes (create, write). Creating or opening a
 * dataset reports the descriptor hdf5/dataset and the object's path.
 */
#include "hdf5_layer.h"

/* Names the new object and reports its id as a descriptor. */
static void created(siox_aid aid, hid_t id, int dataset) {
  if (id < 0) return;
  siox__h5_name(aid, id);
  if (dataset) {
    siox_desc d = siox_desc_int(SIOX_ATTR_HDF5_DATASET, (int64_t)id);
    siox_descriptor_create(siox__h5.node, aid, &d);
  }
}

hid_t H5Dcreate2(hid_t loc_id, const char *name, hid_t type_id, hid_t space_id, hid_t lcpl_id, hid_t dcpl_id,
                 hid_t dapl_id) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_DCREATE2);
  hid_t id = siox__h5.real.Dcreate2(loc_id, name, type_id, space_id, lcpl_id, dcpl_id, dapl_id);
  if (!aid) return id;
  created(aid, id, 1);
  siox__h5_stop(aid, id);
  return id;
}

hid_t H5Dopen2(hid_t loc_id, const char *name, hid_t dapl_id) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_DOPEN2);
  hid_t id = siox__h5.real.Dopen2(loc_id, name, dapl_id);
  if (!aid) return id;
  created(aid, id, 1);
  siox__h5_stop(aid, id);
  return id;
}

herr_t H5Dclose(hid_t dset_id) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_DCLOSE);
  if (aid) {
    siox_desc d = siox_desc_int(SIOX_ATTR_HDF5_DATASET, (int64_t)dset_id);
    siox_descriptor_release(siox__h5.node, aid, &d);
  }
  herr_t rc = siox__h5.real.Dclose(dset_id);
  if (aid) siox__h5_stop(aid, rc);
  return rc;
}

hid_t H5Gcreate2(hid_t loc_id, const char *name, hid_t lcpl_id, hid_t gcpl_id, hid_t gapl_id) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_GCREATE2);
  hid_t id = siox__h5.real.Gcreate2(loc_id, name, lcpl_id, gcpl_id, gapl_id);
  if (!aid) return id;
  created(aid, id, 0);
  siox__h5_stop(aid, id);
  return id;
}

hid_t H5Acreate2(hid_t loc_id, const char *attr_name, hid_t type_id, hid_t space_id, hid_t acpl_id,
                 hid_t aapl_id) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_ACREATE2);
  hid_t id = siox__h5.real.Acreate2(loc_id, attr_name, type_id, space_id, acpl_id, aapl_id);
  if (!aid) return id;
  siox_activity_attr_str(aid, SIOX_ATTR_HDF5_NAME, attr_name);
  siox__h5_stop(aid, id);
  return id;
}

/* An attribute is always written whole: its size is its dataspace. */
static uint64_t attr_bytes(hid_t attr_id, hid_t type_id) {
  hid_t space = siox__h5.real.Aget_space(attr_id);
  if (space < 0) return 0;
  hssize_t n = siox__h5.real.Sget_select_npoints(space);
  siox__h5.real.Sclose(space);
  return n > 0 ? (uint64_t)n * siox__h5.real.Tget_size(type_id) : 0;
}

herr_t H5Awrite(hid_t attr_id, hid_t type_id, const void *buf) {
  siox__h5_layer_init();
  siox_aid aid = siox__h5_start(H5C_AWRITE);
  if (aid) {
    siox__h5_name(aid, attr_id);
    siox_activity_attr_u64(aid, SIOX_ATTR_IO_BYTES, attr_bytes(attr_id, type_id));
  }
  herr_t rc = siox__h5.real.Awrite(attr_id, type_id, buf);
  if (aid) siox__h5_stop(aid, rc);
  return rc;
}
