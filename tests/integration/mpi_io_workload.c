/*
 * mpi_io_workload: the MPI-IO side of the MPI/HDF5 integration tests. Each
 * rank makes a known set of MPI-IO calls on one shared file (independent,
 * collective, through a strided view, nonblocking, split collective,
 * ordered; writes, then reads that verify the data) and writes what it did
 * to MANIFEST.<rank>: one line per data access "call offset bytes collective",
 * which the test compares with what SIOX recorded.
 *
 * usage: mpi_io_workload FILE MANIFEST [BLOCK [N]]
 *   env SIOX_TEST_HINTS="key=value;..." are passed to MPI_File_open;
 *   env SIOX_TEST_SHARED=1 adds ranks racing on the shared pointer of
 *   FILE.shared (one more open and close per rank); =2 makes every
 *   other of those writes MPI_File_iwrite_shared + MPI_Wait.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static FILE *manifest;
static int errors;

static void note(const char *call, long long offset, long long bytes, int collective) {
  fprintf(manifest, "%s %lld %lld %d\n", call, offset, bytes, collective);
}

static void fill(unsigned char *b, size_t n, int tag) {
  for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(rank * 31 + tag * 7 + (int)i);
}

static void check(const unsigned char *b, size_t n, int tag, const char *what) {
  unsigned char want[65536];
  fill(want, n, tag);
  if (memcmp(b, want, n) != 0) {
    fprintf(stderr, "rank %d: %s read back wrong data (tag %d)\n", rank, what, tag);
    errors++;
  }
}

static MPI_Info hints(void) {
  MPI_Info info;
  MPI_Info_create(&info);
  const char *env = getenv("SIOX_TEST_HINTS");
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", env ? env : "");
  for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) continue;
    *eq = 0;
    MPI_Info_set(info, kv, eq + 1);
  }
  return info;
}

#define OK(call)                                                                  \
  do {                                                                            \
    int rc_ = (call);                                                             \
    if (rc_ != MPI_SUCCESS) {                                                     \
      fprintf(stderr, "rank %d: %s failed (%d) at line %d\n", rank, #call, rc_, __LINE__); \
      MPI_Abort(MPI_COMM_WORLD, 2);                                               \
    }                                                                             \
  } while (0)

/* 6b: the shared pointer, raced, in a file of its own (PATH.shared: its
 * layout differs from run to run): every rank appends SHARED_N blocks with
 * MPI_File_write_shared, no barrier between, so ranks move the pointer
 * under each other. Where each block landed is found afterwards from its
 * signature (rank, index) in one read of the file, and noted. */
#define SHARED_N 64
#define SHARED_B 512
static void shared_race(const char *file, int nonblocking) {
  char path[4096];
  unsigned char blk[SHARED_B], *all = malloc((size_t)size * SHARED_N * SHARED_B);
  MPI_File fh;
  MPI_Status st;
  long long found[SHARED_N], len = (long long)size * SHARED_N * SHARED_B;
  snprintf(path, sizeof path, "%s.shared", file);
  MPI_Info info = hints();
  OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
  MPI_Info_free(&info);
  for (int i = 0; i < SHARED_N; i++) {
    MPI_Request req;
    fill(blk, SHARED_B, 600 + i);
    memcpy(blk, (int[]){0x5107, rank, i}, 3 * sizeof(int));
    if (nonblocking && i % 2) {
      OK(MPI_File_iwrite_shared(fh, blk, SHARED_B, MPI_BYTE, &req));
      OK(MPI_Wait(&req, &st));
    } else {
      OK(MPI_File_write_shared(fh, blk, SHARED_B, MPI_BYTE, &st));
    }
    found[i] = -1;
  }
  MPI_Barrier(MPI_COMM_WORLD); /* a local file system: written is readable */
  OK(MPI_File_read_at(fh, 0, all, (int)len, MPI_BYTE, &st));
  note("MPI_File_read_at", 0, len, 0);
  for (long long j = 0; j < (long long)size * SHARED_N; j++) {
    int sig[3];
    memcpy(sig, all + j * SHARED_B, sizeof sig);
    if (sig[0] == 0x5107 && sig[1] == rank && sig[2] >= 0 && sig[2] < SHARED_N) found[sig[2]] = j * SHARED_B;
  }
  for (int i = 0; i < SHARED_N; i++) {
    if (found[i] < 0) fprintf(stderr, "rank %d: shared block %d not found\n", rank, i), errors++;
    note(nonblocking && i % 2 ? "MPI_File_iwrite_shared" : "MPI_File_write_shared", found[i], SHARED_B, 0);
  }
  OK(MPI_File_close(&fh));
  free(all);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    fprintf(stderr, "usage: %s FILE MANIFEST [BLOCK [N]]\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  long long B = argc > 3 ? atoll(argv[3]) : 4096, N = argc > 4 ? atoll(argv[4]) : 8;
  long long region = N * size * B;
  char mpath[4096];
  snprintf(mpath, sizeof mpath, "%s.%d", argv[2], rank);
  manifest = fopen(mpath, "w");
  unsigned char *buf = malloc((size_t)B), *in = malloc((size_t)B);
  if (!manifest || !buf || !in || B > 16384) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_File fh;
  MPI_Status st;
  MPI_Info info = hints();
  OK(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
  MPI_Info_free(&info);

  /* 1: independent writes at explicit offsets, interleaved by rank */
  for (long long i = 0; i < N; i++) {
    long long off = (i * size + rank) * B;
    fill(buf, (size_t)B, (int)i);
    OK(MPI_File_write_at(fh, off, buf, (int)B, MPI_BYTE, &st));
    note("MPI_File_write_at", off, B, 0);
  }
  /* 2: collective writes at explicit offsets */
  for (long long i = 0; i < N; i++) {
    long long off = region + (i * size + rank) * B;
    fill(buf, (size_t)B, (int)(100 + i));
    OK(MPI_File_write_at_all(fh, off, buf, (int)B, MPI_BYTE, &st));
    note("MPI_File_write_at_all", off, B, 1);
  }
  /* 3: a strided view: N blocks of this rank in one collective call, then
   * one more block through the individual pointer (the next tile). */
  MPI_Datatype vec, tile;
  MPI_Type_vector((int)N, (int)B, (int)(size * B), MPI_BYTE, &vec);
  MPI_Type_create_resized(vec, 0, region, &tile);
  MPI_Type_commit(&tile);
  long long disp = 2 * region + rank * B;
  OK(MPI_File_set_view(fh, disp, MPI_BYTE, tile, "native", MPI_INFO_NULL));
  unsigned char *big = malloc((size_t)(N * B));
  for (long long i = 0; i < N; i++) fill(big + i * B, (size_t)B, (int)(200 + i));
  OK(MPI_File_write_all(fh, big, (int)(N * B), MPI_BYTE, &st));
  note("MPI_File_write_all", disp, N * B, 1);
  fill(buf, (size_t)B, 250);
  OK(MPI_File_write(fh, buf, (int)B, MPI_BYTE, &st));
  note("MPI_File_write", disp + region, B, 0);
  OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  MPI_Type_free(&tile);
  MPI_Type_free(&vec);

  /* 4: nonblocking independent writes, completed together */
  MPI_Request req[64];
  unsigned char *nb = malloc((size_t)(N * B));
  for (long long i = 0; i < N && i < 64; i++) {
    long long off = 4 * region + (i * size + rank) * B;
    fill(nb + i * B, (size_t)B, (int)(300 + i));
    OK(MPI_File_iwrite_at(fh, off, nb + i * B, (int)B, MPI_BYTE, &req[i]));
    note("MPI_File_iwrite_at", off, B, 0);
  }
  OK(MPI_Waitall((int)(N < 64 ? N : 64), req, MPI_STATUSES_IGNORE));
  /* 5: a split collective */
  long long off5 = 5 * region + rank * B;
  fill(buf, (size_t)B, 400);
  OK(MPI_File_write_at_all_begin(fh, off5, buf, (int)B, MPI_BYTE));
  OK(MPI_File_write_at_all_end(fh, buf, &st));
  note("MPI_File_write_at_all_begin", off5, B, 1);
  /* 6: ordered: rank r writes (r+1) KiB after ranks 0..r-1 */
  long long base6 = 5 * region + size * B, before = 0;
  for (int r = 0; r < rank; r++) before += (r + 1) * 1024;
  OK(MPI_File_seek_shared(fh, base6, MPI_SEEK_SET));
  unsigned char ord[16384];
  fill(ord, (size_t)(rank + 1) * 1024, 500);
  OK(MPI_File_write_ordered(fh, ord, (rank + 1) * 1024, MPI_BYTE, &st));
  note("MPI_File_write_ordered", base6 + before, (rank + 1) * 1024, 1);
  OK(MPI_File_sync(fh));
  MPI_Barrier(MPI_COMM_WORLD);
  const char *shared = getenv("SIOX_TEST_SHARED");
  if (shared) shared_race(argv[1], strcmp(shared, "2") == 0);

  /* 7: read back: independent, collective, nonblocking */
  for (long long i = 0; i < N; i++) {
    long long off = (i * size + rank) * B;
    OK(MPI_File_read_at(fh, off, in, (int)B, MPI_BYTE, &st));
    note("MPI_File_read_at", off, B, 0);
    check(in, (size_t)B, (int)i, "read_at");
  }
  for (long long i = 0; i < N; i++) {
    long long off = region + (i * size + rank) * B;
    OK(MPI_File_read_at_all(fh, off, in, (int)B, MPI_BYTE, &st));
    note("MPI_File_read_at_all", off, B, 1);
    check(in, (size_t)B, (int)(100 + i), "read_at_all");
  }
  for (long long i = 0; i < N; i++) {
    long long off = 4 * region + (i * size + rank) * B;
    MPI_Request r;
    OK(MPI_File_iread_at(fh, off, in, (int)B, MPI_BYTE, &r));
    OK(MPI_Wait(&r, &st));
    note("MPI_File_iread_at", off, B, 0);
    check(in, (size_t)B, (int)(300 + i), "iread_at");
  }
  OK(MPI_File_close(&fh));
  fclose(manifest);
  free(big);
  free(nb);
  free(buf);
  free(in);
  int all = 0;
  MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0) printf("mpi_io_workload: %s\n", all ? "DATA ERRORS" : "ok");
  return all ? 3 : 0;
}
