/*
 * siox-strided-writes: the workload of the hint loop (knowledge base, issue
 * 4). Small strided independent writes to one shared file, the pattern
 * ROMIO handles by data sieving (read-modify-write windows under fcntl
 * locks) or, with romio_ds_write=disable, by one small pwrite per block.
 * SIOX sees which in the POSIX layer, suggests hints, applies them on the
 * next run (SIOX_HINTS=1).
 *
 * usage: mpirun -np P siox-strided-writes FILE [--blocks N] [--block B]
 *          [--stride S] [--repeat K] [--info KEY=VALUE]... [--print-info]
 *          [--no-verify] [--collective] [--read-back] [--file-per-process]
 *          [--segmented]
 *   Each rank sets the view: N blocks of B bytes (default 64 x 4096), stride
 *   S bytes (default P*B: a dense interleave), displacement rank*B; then
 *   calls MPI_File_write of N*B bytes K times (default 8; the individual file
 *   pointer moves on, so write k fills tile k, N*S bytes, of the file).
 *   With S > P*B the layout is sparse (a column of a large row-major array):
 *   the S - P*B bytes after each row of blocks are holes (not verified: data
 *   sieving may write stale buffer bytes there).
 *   --info KEY=VALUE  set in the MPI_Info passed to MPI_File_open
 *   --print-info      rank 0 prints "info KEY VALUE" for MPI_File_get_info
 *   --no-verify       skip reading the file back
 *   --collective      MPI_File_write_all instead of MPI_File_write: ROMIO's
 *                     two-phase I/O, where aggregator ranks gather the others'
 *                     blocks and make the pwrites for them
 *   --read-back       after the writes, read the same blocks back through the
 *                     view (MPI_File_read_all with --collective, else
 *                     MPI_File_read) and check every byte: a read phase for
 *                     the hint loop, where read hints (romio_cb_read,
 *                     romio_ds_read) act
 *   --file-per-process each rank writes (and reads back) its own file
 *                     FILE.RANK, opened on MPI_COMM_SELF, laid out as the
 *                     one rank of a shared file (displacement 0, default
 *                     stride B: contiguous); rank 0 verifies FILE.0. The
 *                     file-per-process job of bench_replay.sh
 *   --segmented       one shared file, each rank's calls in its own
 *                     contiguous segment of it (IOR's segmented layout with
 *                     one segment: rank r's K x N x B bytes at r x K x N x S,
 *                     laid out as the one rank of the segment: default
 *                     stride B, each call one contiguous MPI-IO write and
 *                     read): the shared-file job of bench_capacity_validate.sh
 *                     and bench_replay.sh beside the interleaved one
 * Rank 0 prints "io_time_s T" (the write phase plus the read phase when
 * --read-back, barrier to barrier, the slowest rank's view), "write_time_s",
 * "read_time_s", "open_time_s T", and "siox_strided_writes: ok" when the data
 * read back is what every rank wrote.
 */
#include <getopt.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INFO 16

struct opts {
  const char *file;
  long blocks, block, stride, repeat;
  char *info[MAX_INFO];
  int ninfo, print_info, verify, collective, read_back, fpp, seg;
};

static int rank, nprocs;
/* The file's layout: the ranks that share it and this rank's place among
 * them (1 and 0 with --file-per-process and --segmented). */
static int lrank, lprocs;

/* The bytes of one rank's segment with --segmented (its K calls' tiles), else 0. */
static long seg_bytes(const struct opts *o) { return o->seg ? o->repeat * o->blocks * o->stride : 0; }

static void die(const char *msg) {
  fprintf(stderr, "siox-strided-writes (rank %d): %s\n", rank, msg);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static long positive(const char *s, const char *what) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*s == '\0' || *end || v <= 0 || v > (1L << 30)) die(what);
  return v;
}

static void parse(int argc, char **argv, struct opts *o) {
  static const struct option lo[] = {{"blocks", required_argument, 0, 'n'}, {"block", required_argument, 0, 'b'},
                                     {"repeat", required_argument, 0, 'k'}, {"info", required_argument, 0, 'i'},
                                     {"print-info", no_argument, 0, 'p'},   {"no-verify", no_argument, 0, 'v'},
                                     {"stride", required_argument, 0, 's'}, {"collective", no_argument, 0, 'c'},
                                     {"read-back", no_argument, 0, 'r'},    {"file-per-process", no_argument, 0, 'f'},
                                     {"segmented", no_argument, 0, 'g'},    {0, 0, 0, 0}};
  int c;
  *o = (struct opts){.blocks = 64, .block = 4096, .repeat = 8, .verify = 1};
  while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    if (c == 'n') o->blocks = positive(optarg, "bad --blocks");
    else if (c == 'b') o->block = positive(optarg, "bad --block");
    else if (c == 'k') o->repeat = positive(optarg, "bad --repeat");
    else if (c == 's') o->stride = positive(optarg, "bad --stride");
    else if (c == 'i' && o->ninfo < MAX_INFO && strchr(optarg, '=')) o->info[o->ninfo++] = optarg;
    else if (c == 'p') o->print_info = 1;
    else if (c == 'v') o->verify = 0;
    else if (c == 'c') o->collective = 1;
    else if (c == 'r') o->read_back = 1;
    else if (c == 'f') o->fpp = 1;
    else if (c == 'g') o->seg = 1;
    else die("usage: siox-strided-writes FILE [--blocks N] [--block B] [--stride S] [--repeat K] [--info K=V]... "
             "[--print-info] [--no-verify] [--collective] [--read-back] [--file-per-process] [--segmented]");
  }
  if (o->fpp && o->seg) die("--file-per-process and --segmented exclude each other");
  lrank = o->fpp || o->seg ? 0 : rank;
  lprocs = o->fpp || o->seg ? 1 : nprocs;
  if (!o->stride) o->stride = lprocs * o->block;
  /* The ranks' blocks of one row must not overlap; MPI_Type_vector's stride
   * is an int. */
  if (o->stride < lprocs * o->block || o->stride > (1L << 30)) die("--stride must be >= ranks x --block");
  if (optind != argc - 1) die("exactly one FILE expected");
  o->file = argv[optind];
}

/* The byte every rank writes at file offset off: a function of the block's
 * owner and position, so that a misplaced block shows up in verify(). */
static unsigned char expected(long off, long block) {
  long b = off / block;
  return (unsigned char)(b * 131 + b / lprocs + off % 7);
}

static MPI_Info make_info(const struct opts *o) {
  MPI_Info info = MPI_INFO_NULL;
  if (o->ninfo == 0) return info;
  MPI_Info_create(&info);
  for (int i = 0; i < o->ninfo; i++) {
    char key[256];
    const char *eq = strchr(o->info[i], '=');
    snprintf(key, sizeof key, "%.*s", (int)(eq - o->info[i]), o->info[i]);
    MPI_Info_set(info, key, eq + 1);
  }
  return info;
}

static void print_info(MPI_File fh) {
  MPI_Info info;
  int n = 0;
  if (MPI_File_get_info(fh, &info) != MPI_SUCCESS) return;
  MPI_Info_get_nkeys(info, &n);
  for (int i = 0; i < n && rank == 0; i++) {
    char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get_nthkey(info, i, key);
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
    if (flag) printf("info %s %s\n", key, val);
  }
  MPI_Info_free(&info);
}

/* Sets the rank's strided view: N blocks of B bytes every S bytes, tiled so
 * that call k continues in tile k, N*S bytes on. */
static void set_view(MPI_File fh, const struct opts *o) {
  MPI_Datatype ft, tiled;
  MPI_Type_vector((int)o->blocks, (int)o->block, (int)o->stride, MPI_BYTE, &ft);
  MPI_Type_create_resized(ft, 0, o->blocks * o->stride, &tiled);
  MPI_Type_commit(&tiled);
  MPI_Offset disp = (MPI_Offset)(rank * seg_bytes(o) + lrank * o->block);
  if (MPI_File_set_view(fh, disp, MPI_BYTE, tiled, "native", MPI_INFO_NULL) != MPI_SUCCESS)
    die("MPI_File_set_view failed");
  MPI_Type_free(&ft);
  MPI_Type_free(&tiled);
}

/* The file offset of byte j of block i in call k of this rank. */
static long offset_of(const struct opts *o, long k, long i, long j) {
  return rank * seg_bytes(o) + k * o->blocks * o->stride + i * o->stride + lrank * o->block + j;
}

/* Writes (or, with reading, reads back and checks, counting bad bytes in
 * *bad) K times N blocks through the strided view; returns the slowest
 * rank's seconds, barrier to barrier. */
static double phase(MPI_File fh, const struct opts *o, int reading, long *bad) {
  long n = o->blocks, b = o->block;
  unsigned char *buf = malloc((size_t)(n * b));
  if (!buf) die("out of memory");
  set_view(fh, o); /* also rewinds the individual file pointer */
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (long k = 0; k < o->repeat; k++) {
    MPI_Status st;
    int rc;
    if (reading) {
      rc = o->collective ? MPI_File_read_all(fh, buf, (int)(n * b), MPI_BYTE, &st)
                         : MPI_File_read(fh, buf, (int)(n * b), MPI_BYTE, &st);
    } else {
      for (long i = 0; i < n; i++)
        for (long j = 0; j < b; j++) buf[i * b + j] = expected(offset_of(o, k, i, j), b);
      rc = o->collective ? MPI_File_write_all(fh, buf, (int)(n * b), MPI_BYTE, &st)
                         : MPI_File_write(fh, buf, (int)(n * b), MPI_BYTE, &st);
    }
    if (rc != MPI_SUCCESS) die(reading ? "MPI-IO read failed" : "MPI-IO write failed");
    for (long i = 0; reading && i < n; i++)
      for (long j = 0; j < b; j++) *bad += buf[i * b + j] != expected(offset_of(o, k, i, j), b);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double mine = MPI_Wtime() - t0, slowest = 0;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  free(buf);
  return slowest;
}

/* 1 when file offset off holds a rank's byte, 0 in a hole of a sparse layout
 * (the stride's bytes after the ranks' blocks of a row). Holes are not
 * checked: ROMIO's data sieving reads a window past the end of the file
 * and writes the whole window back, so a hole may hold its buffer's stale
 * bytes (seen with romio321 on ext4 and GlusterFS); only direct writes leave
 * them zero. */
static int is_data(long off, const struct opts *o) {
  return (off % (o->blocks * o->stride)) % o->stride < lprocs * o->block;
}

/* Rank 0 reads the file back with plain stdio, outside MPI-IO: every rank's
 * blocks, and the file's length. */
static int verify(const struct opts *o) {
  long size = (nprocs - 1) * seg_bytes(o) + (o->repeat - 1) * o->blocks * o->stride + (o->blocks - 1) * o->stride +
              lprocs * o->block,
       bad = 0;
  static unsigned char chunk[1 << 20];
  FILE *f = fopen(o->file, "rb");
  if (!f) return 0;
  for (long off = 0; off < size;) {
    size_t want = (size_t)(size - off < (long)sizeof chunk ? size - off : (long)sizeof chunk);
    size_t got = fread(chunk, 1, want, f);
    for (size_t i = 0; i < got; i++) bad += is_data(off + (long)i, o) && chunk[i] != expected(off + (long)i, o->block);
    if (got < want) {
      bad += (long)(want - got) + (size - off - (long)want);
      break;
    }
    off += (long)got;
  }
  int extra = fgetc(f) != EOF;
  fclose(f);
  if (bad || extra) fprintf(stderr, "siox-strided-writes: %ld bad bytes%s\n", bad, extra ? ", file too long" : "");
  return bad == 0 && !extra;
}

int main(int argc, char **argv) {
  struct opts o;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  parse(argc, argv, &o);
  char own[4096];
  if (o.fpp) { /* this rank's own file */
    if (snprintf(own, sizeof own, "%s.%d", o.file, rank) >= (int)sizeof own) die("FILE too long");
    o.file = own;
  }
  if (rank == 0 || o.fpp) remove(o.file); /* a stale longer file would fail verify */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Info info = make_info(&o);
  MPI_File fh;
  double t0 = MPI_Wtime();
  if (MPI_File_open(o.fpp ? MPI_COMM_SELF : MPI_COMM_WORLD, o.file, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh) != MPI_SUCCESS)
    die("MPI_File_open failed");
  double open_s = MPI_Wtime() - t0;
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (o.print_info) print_info(fh);
  long bad = 0, all_bad = 0;
  double write_s = phase(fh, &o, 0, &bad), read_s = o.read_back ? phase(fh, &o, 1, &bad) : 0;
  MPI_File_close(&fh);
  MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_bad) fprintf(stderr, "siox-strided-writes: %ld bad bytes read back through MPI-IO\n", all_bad);
  int ok = all_bad == 0 && (rank != 0 || !o.verify || verify(&o));
  if (rank == 0) {
    printf("open_time_s %.6f\nio_time_s %.6f\nwrite_time_s %.6f\nread_time_s %.6f\n", open_s, write_s + read_s,
           write_s, read_s);
    if (ok) printf("siox_strided_writes: ok\n");
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
