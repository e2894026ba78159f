/*
 * hdf5_parallel_write: the parallel-HDF5 side of the MPI/HDF5 integration
 * tests. All ranks create one file through the MPI-IO driver, a group, a
 * 2-D dataset of doubles (ROWS x COLS per rank, stacked by rank) written
 * collectively, one attribute, then read their rows back independently and
 * verify them. Object times are off so that the file's bytes depend only on
 * the data (the test compares checksums with and without SIOX).
 *
 * usage: hdf5_parallel_write FILE [ROWS [COLS]]
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define OK(x)                                                               \
  do {                                                                      \
    if ((x) < 0) {                                                          \
      fprintf(stderr, "%s failed at line %d\n", #x, __LINE__);              \
      MPI_Abort(MPI_COMM_WORLD, 2);                                         \
    }                                                                       \
  } while (0)

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) MPI_Abort(MPI_COMM_WORLD, 1);
  hsize_t rows = argc > 2 ? (hsize_t)atoll(argv[2]) : 64, cols = argc > 3 ? (hsize_t)atoll(argv[3]) : 128;
  double *data = malloc(rows * cols * sizeof *data), *back = malloc(rows * cols * sizeof *back);
  for (hsize_t i = 0; i < rows * cols; i++) data[i] = rank * 1e6 + (double)i;

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
  hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  OK(file);
  hid_t group = H5Gcreate2(file, "/results", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  OK(group);
  hsize_t dims[2] = {rows * (hsize_t)size, cols};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  OK(H5Pset_obj_track_times(dcpl, 0));
  hid_t dset = H5Dcreate2(group, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  OK(dset);

  hsize_t start[2] = {rows * (hsize_t)rank, 0}, count[2] = {rows, cols};
  hid_t fsel = H5Dget_space(dset);
  OK(H5Sselect_hyperslab(fsel, H5S_SELECT_SET, start, NULL, count, NULL));
  hid_t mspace = H5Screate_simple(2, count, NULL);
  hid_t coll = H5Pcreate(H5P_DATASET_XFER);
  OK(H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE));
  OK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fsel, coll, data));

  hsize_t one = 1;
  hid_t aspace = H5Screate_simple(1, &one, NULL);
  hid_t attr = H5Acreate2(dset, "ranks", H5T_NATIVE_INT, aspace, H5P_DEFAULT, H5P_DEFAULT);
  OK(attr);
  OK(H5Awrite(attr, H5T_NATIVE_INT, &size));
  OK(H5Aclose(attr));
  OK(H5Fflush(file, H5F_SCOPE_GLOBAL));

  OK(H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fsel, H5P_DEFAULT, back));
  int bad = 0;
  for (hsize_t i = 0; i < rows * cols; i++) bad += back[i] != data[i];

  H5Sclose(aspace);
  H5Pclose(coll);
  H5Sclose(mspace);
  H5Sclose(fsel);
  H5Dclose(dset);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Gclose(group);
  H5Fclose(file);
  H5Pclose(fapl);
  free(data);
  free(back);
  int all = 0;
  MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0) printf("hdf5_parallel_write: %s\n", all ? "DATA ERRORS" : "ok");
  return all ? 3 : 0;
}
