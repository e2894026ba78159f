/*
 * Internals shared by the files of libsiox-hdf5: the HDF5 functions the
 * layer calls (the wrapped ones as found next after this library, helpers
 * from the global scope: the library does not link libhdf5, so preloading
 * it into a process without HDF5 loads nothing), the node and the types.
 */
#ifndef SIOX_HDF5_LAYER_H
#define SIOX_HDF5_LAYER_H

#include <hdf5.h>

#include <siox/siox.h>

#define SIOX_H5_HIDDEN __attribute__((visibility("hidden")))
#define SIOX_H5_TLS __thread __attribute__((tls_model("initial-exec")))

enum siox_h5_call {
  H5C_FCREATE, H5C_FOPEN, H5C_FFLUSH, H5C_FCLOSE,
  H5C_DCREATE2, H5C_DOPEN2, H5C_DREAD, H5C_DWRITE, H5C_DCLOSE,
  H5C_GCREATE2, H5C_ACREATE2, H5C_AWRITE,
  H5C_COUNT
};

/* The HDF5 functions this layer calls; NULL when not found. */
struct siox_h5_real {
  hid_t (*Fcreate)(const char *, unsigned, hid_t, hid_t);
  hid_t (*Fopen)(const char *, unsigned, hid_t);
  herr_t (*Fflush)(hid_t, H5F_scope_t);
  herr_t (*Fclose)(hid_t);
  hid_t (*Dcreate2)(hid_t, const char *, hid_t, hid_t, hid_t, hid_t, hid_t);
  hid_t (*Dopen2)(hid_t, const char *, hid_t);
  herr_t (*Dread)(hid_t, hid_t, hid_t, hid_t, hid_t, void *);
  herr_t (*Dwrite)(hid_t, hid_t, hid_t, hid_t, hid_t, const void *);
  herr_t (*Dclose)(hid_t);
  hid_t (*Gcreate2)(hid_t, const char *, hid_t, hid_t, hid_t);
  hid_t (*Acreate2)(hid_t, const char *, hid_t, hid_t, hid_t, hid_t);
  herr_t (*Awrite)(hid_t, hid_t, const void *);
  /* helpers, not wrapped */
  ssize_t (*Iget_name)(hid_t, char *, size_t);
  hid_t (*Dget_space)(hid_t);
  hid_t (*Aget_space)(hid_t);
  hssize_t (*Sget_select_npoints)(hid_t);
  herr_t (*Sclose)(hid_t);
  size_t (*Tget_size)(hid_t);
  herr_t (*Pget_dxpl_mpio)(hid_t, H5FD_mpio_xfer_t *);
};

struct siox_h5_layer {
  struct siox_h5_real real;
  siox_unid node;
  siox_type_id type[H5C_COUNT];
  int ok; /* 1: recording */
};
extern struct siox_h5_layer siox__h5 SIOX_H5_HIDDEN;

/* Resolves the real functions and registers the node on first use. Always
 * safe to call; afterwards the wrapped pointers in siox__h5.real are set
 * (or NULL if this process has no HDF5, which no caller can reach). */
SIOX_H5_HIDDEN void siox__h5_layer_init(void);

/* Inside a wrapper already on this thread: inner calls pass through. */
extern SIOX_H5_TLS int siox__h5_depth SIOX_H5_HIDDEN;

/* Starts an activity of call, or returns 0 (not recording, or nested). */
SIOX_H5_HIDDEN siox_aid siox__h5_start(enum siox_h5_call call);
/* Ends it; a negative HDF5 return value is recorded as the error. */
SIOX_H5_HIDDEN void siox__h5_stop(siox_aid aid, long long rc);
/* Records the HDF5 path of object id (file name for a file) as hdf5/name. */
SIOX_H5_HIDDEN void siox__h5_name(siox_aid aid, hid_t id);

#endif
