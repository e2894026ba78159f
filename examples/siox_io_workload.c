/*
 * siox_io_workload: the MPI application of the demo and the system tests. It
 * drives every application-side layer SIOX instruments: parallel HDF5
 * (collective H5Dwrite of a 2-D dataset), MPI-IO (independent writes), plain
 * POSIX (pwrite), reads everything back and verifies it, and prints the calls
 * it made per layer so that the warehouse can be checked against them.
 *
 * usage: mpirun -np N siox_io_workload [--rows R] [--cols C] [--steps S]
 *          [--block B] [--h5 FILE]... [--mpiio FILE]... [--posix FILE]...
 *          [--stdio FILE]...
 *   --h5 FILE     HDF5 through the MPI-IO driver: a dataset of S*N*R x C
 *                 doubles; step k writes rows (k*N + rank)*R .. +R with one
 *                 collective H5Dwrite, then each rank reads its rows back
 *   --mpiio FILE  S independent MPI_File_write_at of B bytes per rank
 *                 (rank-interleaved blocks), then S MPI_File_read_at
 *   --posix FILE  rank 0 only: S pwrite of B bytes, then S pread
 *   --stdio FILE  rank 0 only: S fwrite of B bytes (stdio buffers them and
 *                 writes them out inside a later call), then S fread
 * Rank 0 prints "COUNT LAYER CALL N" (the calls of all ranks), the HDF5
 * files' I/O time (below) and "ok".
 *   h5_write_time_s  the collective H5Dwrite phase, barrier to barrier, the
 *                    slowest rank's view (summed over the --h5 files)
 *   h5_read_time_s   the H5Dread phase, likewise
 *   io_time_s        the two together: the time of the MPI-IO data calls
 *                    HDF5 makes on the file (what a hint set acts on and
 *                    the knowledge base judges), without MPI start-up, file
 *                    creation and close
 */
#include <fcntl.h>
#include <getopt.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXF 16

static int rank, size, errors;
static hsize_t rows = 32, cols = 512;
static int steps = 4;
static size_t block = 1 << 18;

/* Calls made by this rank, per layer and call; summed over ranks at the end. */
enum { H_FCREATE, H_DCREATE, H_DWRITE, H_DREAD, H_DCLOSE, H_FCLOSE, M_OPEN, M_WRITE_AT, M_READ_AT, M_CLOSE,
       P_OPEN, P_PWRITE, P_PREAD, P_CLOSE, S_FWRITE, S_FREAD, NCOUNT };
static const char *const count_name[NCOUNT] = {
    "HDF5 H5Fcreate", "HDF5 H5Dcreate2", "HDF5 H5Dwrite", "HDF5 H5Dread", "HDF5 H5Dclose", "HDF5 H5Fclose",
    "MPI-IO MPI_File_open", "MPI-IO MPI_File_write_at", "MPI-IO MPI_File_read_at", "MPI-IO MPI_File_close",
    "POSIX open", "POSIX pwrite", "POSIX pread", "POSIX close", "stdio fwrite", "stdio fread"};
static long counts[NCOUNT];
static double h5_write_s, h5_read_s; /* this rank's, barrier to barrier */

#define OK(x)                                                                   \
  do {                                                                          \
    if ((x) < 0) {                                                              \
      fprintf(stderr, "rank %d: %s failed at line %d\n", rank, #x, __LINE__);   \
      MPI_Abort(MPI_COMM_WORLD, 2);                                             \
    }                                                                           \
  } while (0)

#define MPI_OK(x) OK((x) == MPI_SUCCESS ? 0 : -1)

static double value(hsize_t row, hsize_t col) { return (double)row * 1e4 + (double)col; }

static void fill(unsigned char *b, size_t n, long tag) {
  for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(tag * 131 + (long)i * 7 + (long)(i >> 9));
}

/* One HDF5 file: S collective writes of this rank's rows, then reads. */
static void do_h5(const char *path) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  OK(file);
  hsize_t dims[2] = {(hsize_t)steps * (hsize_t)size * rows, cols}, count[2] = {rows, cols};
  hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  OK(H5Pset_obj_track_times(dcpl, 0)); /* the file's bytes depend on the data only */
  hid_t dset = H5Dcreate2(file, "field", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  OK(dset);
  hid_t mspace = H5Screate_simple(2, count, NULL), coll = H5Pcreate(H5P_DATASET_XFER);
  OK(H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE));
  double *buf = malloc(rows * cols * sizeof *buf);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int k = 0; k < steps; k++) {
    hsize_t start[2] = {((hsize_t)k * (hsize_t)size + (hsize_t)rank) * rows, 0};
    for (hsize_t i = 0; i < rows * cols; i++) buf[i] = value(start[0] + i / cols, i % cols);
    hid_t fsel = H5Dget_space(dset);
    OK(H5Sselect_hyperslab(fsel, H5S_SELECT_SET, start, NULL, count, NULL));
    OK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fsel, coll, buf));
    H5Sclose(fsel);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  h5_write_s += MPI_Wtime() - t0;
  hsize_t start[2] = {(hsize_t)rank * rows, 0};
  hid_t fsel = H5Dget_space(dset);
  OK(H5Sselect_hyperslab(fsel, H5S_SELECT_SET, start, NULL, count, NULL));
  t0 = MPI_Wtime();
  OK(H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fsel, H5P_DEFAULT, buf));
  MPI_Barrier(MPI_COMM_WORLD);
  h5_read_s += MPI_Wtime() - t0;
  for (hsize_t i = 0; i < rows * cols; i++) errors += buf[i] != value(start[0] + i / cols, i % cols);
  free(buf);
  H5Sclose(fsel);
  H5Pclose(coll);
  H5Sclose(mspace);
  H5Dclose(dset);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  H5Pclose(fapl);
  counts[H_FCREATE]++, counts[H_DCREATE]++, counts[H_DWRITE] += steps, counts[H_DREAD]++;
  counts[H_DCLOSE]++, counts[H_FCLOSE]++;
}

/* One MPI-IO file: S independent writes of B bytes per rank, then reads. */
static void do_mpiio(const char *path) {
  MPI_File fh;
  unsigned char *buf = malloc(block), *want = malloc(block);
  MPI_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  for (int k = 0; k < steps; k++) {
    long tag = (long)k * size + rank;
    fill(buf, block, tag);
    MPI_OK(MPI_File_write_at(fh, (MPI_Offset)tag * (MPI_Offset)block, buf, (int)block, MPI_BYTE, MPI_STATUS_IGNORE));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int k = 0; k < steps; k++) {
    long tag = (long)k * size + rank;
    fill(want, block, tag);
    MPI_OK(MPI_File_read_at(fh, (MPI_Offset)tag * (MPI_Offset)block, buf, (int)block, MPI_BYTE, MPI_STATUS_IGNORE));
    errors += memcmp(buf, want, block) != 0;
  }
  MPI_File_close(&fh);
  free(buf);
  free(want);
  counts[M_OPEN]++, counts[M_WRITE_AT] += steps, counts[M_READ_AT] += steps, counts[M_CLOSE]++;
}

/* One POSIX file, written and read by rank 0 alone. */
static void do_posix(const char *path) {
  if (rank != 0) return;
  unsigned char *buf = malloc(block), *want = malloc(block);
  int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
  OK(fd);
  for (int k = 0; k < steps; k++) {
    fill(buf, block, 1000 + k);
    errors += pwrite(fd, buf, block, (off_t)k * (off_t)block) != (ssize_t)block;
  }
  for (int k = 0; k < steps; k++) {
    fill(want, block, 1000 + k);
    errors += pread(fd, buf, block, (off_t)k * (off_t)block) != (ssize_t)block || memcmp(buf, want, block) != 0;
  }
  close(fd);
  free(buf);
  free(want);
  counts[P_OPEN]++, counts[P_PWRITE] += steps, counts[P_PREAD] += steps, counts[P_CLOSE]++;
}

/* One stdio file, written and read by rank 0 alone. */
static void do_stdio(const char *path) {
  if (rank != 0) return;
  unsigned char *buf = malloc(block), *want = malloc(block);
  FILE *f = fopen(path, "w");
  OK(f ? 0 : -1);
  for (int k = 0; k < steps; k++) {
    fill(buf, block, 2000 + k);
    errors += fwrite(buf, 1, block, f) != block;
  }
  errors += fclose(f) != 0;
  OK((f = fopen(path, "r")) ? 0 : -1);
  /* The page cache still holds what was just written: drop it, so that the
   * reads reach the file system (on a FUSE mount, as client readv fops). */
  OK(posix_fadvise(fileno(f), 0, 0, POSIX_FADV_DONTNEED));
  for (int k = 0; k < steps; k++) {
    fill(want, block, 2000 + k);
    errors += fread(buf, 1, block, f) != block || memcmp(buf, want, block) != 0;
  }
  fclose(f);
  free(buf);
  free(want);
  counts[S_FWRITE] += steps, counts[S_FREAD] += steps;
}

static void usage(void) {
  if (rank == 0)
    fprintf(stderr, "usage: siox_io_workload [--rows R] [--cols C] [--steps S] [--block B] "
                    "[--h5 FILE]... [--mpiio FILE]... [--posix FILE]... [--stdio FILE]...\n");
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
  static const struct option opts[] = {{"rows", required_argument, NULL, 'r'},  {"cols", required_argument, NULL, 'c'},
                                       {"steps", required_argument, NULL, 's'}, {"block", required_argument, NULL, 'b'},
                                       {"h5", required_argument, NULL, 'H'},    {"mpiio", required_argument, NULL, 'M'},
                                       {"posix", required_argument, NULL, 'P'}, {"stdio", required_argument, NULL, 'S'},
                                       {0}};
  const char *files[MAXF];
  int kinds[MAXF], nfiles = 0, c;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c == 'r') rows = (hsize_t)atoll(optarg);
    else if (c == 'c') cols = (hsize_t)atoll(optarg);
    else if (c == 's') steps = atoi(optarg);
    else if (c == 'b') block = (size_t)atoll(optarg);
    else if ((c == 'H' || c == 'M' || c == 'P' || c == 'S') && nfiles < MAXF) kinds[nfiles] = c, files[nfiles++] = optarg;
    else usage();
  }
  if (!nfiles || optind < argc || !rows || !cols || steps < 1 || !block || block > (1 << 30)) usage();
  /* Files in the order given, so that every run makes the same calls. */
  for (int i = 0; i < nfiles; i++) {
    if (kinds[i] == 'H') do_h5(files[i]);
    else if (kinds[i] == 'M') do_mpiio(files[i]);
    else if (kinds[i] == 'P') do_posix(files[i]);
    else do_stdio(files[i]);
  }
  long total[NCOUNT];
  int all = 0;
  double mine[2] = {h5_write_s, h5_read_s}, slowest[2];
  MPI_Reduce(counts, total, NCOUNT, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    for (int i = 0; i < NCOUNT; i++)
      if (total[i]) printf("COUNT %s %ld\n", count_name[i], total[i]);
    if (total[H_DWRITE])
      printf("h5_write_time_s %.6f\nh5_read_time_s %.6f\nio_time_s %.6f\n", slowest[0], slowest[1],
             slowest[0] + slowest[1]);
    printf("siox_io_workload: %s\n", all ? "DATA ERRORS" : "ok");
  }
  MPI_Finalize();
  return all ? 3 : 0;
}
