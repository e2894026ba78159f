/*
 * Private interfaces of the job analyses (findings_*.c): findings_load.c reads
 * one job's activities from the warehouse into a struct fnd_job,
 * findings_cost.c holds the file-system cost model and the data-sieving
 * arithmetic (pure, no database), findings_mpiio.c and findings_detect.c
 * turn the job into findings and hint sets, findings_store.c writes them,
 * findings_job.c is the public entry (siox_kb_analyze_job/_pending).
 */
#ifndef SIOX_KB_FINDINGS_H
#define SIOX_KB_FINDINGS_H

#include <json-c/json.h>
#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the job as loaded (findings_load.c) --------------------------------- */

enum fnd_layer { FND_MPIIO, FND_POSIX, FND_STDIO, FND_MPI };
enum fnd_kind { FND_OTHER, FND_READ, FND_WRITE, FND_META, FND_OPEN };

struct fnd_op {
  int64_t aid, parent; /* parent: explicit parent_aid, 0 for none */
  int proc;            /* index into fnd_job.procs */
  int layer, kind, collective;
  int64_t start_ns, end_ns;
  int64_t bytes, offset; /* -1 when not recorded */
  int file;              /* index into fnd_job.files, -1 unknown */
  int call;              /* POSIX op under an MPI-IO data call: index into calls, else -1 */
  int runtime;           /* made inside MPI_Init/MPI_Finalize (the MPI runtime's own I/O) */
};

struct fnd_file {
  char path[1024];
  char pattern[1024];
  char hints[1024]; /* mpi/hints of the first MPI_File_open ('' none) */
  char component[32]; /* its mpi/io_component (romio321, ompio; '' unknown) */
  /* Per-byte cost learned by an earlier analysis of the same application
   * and file pattern that saw several operation sizes (-1: none). */
  double prior_b_ns;
  char prior_job[256];
};

struct fnd_proc {
  int proc_id;
  char host[256];
};

/* One MPI-IO data access and what its POSIX children did. */
struct fnd_call {
  int op; /* index into fnd_job.ops */
  int n_rd, n_wr;
  int64_t rd_bytes, wr_bytes, child_ns;
  int64_t min_off, max_end;   /* of the children */
  int64_t min_size, max_size; /* of the children */
};

struct fnd_job {
  char job[256];
  char exe[1024], args[4096];
  struct fnd_proc *procs;
  size_t nprocs, nhosts;
  struct fnd_op *ops;
  size_t nops;
  struct fnd_file *files;
  size_t nfiles;
  struct fnd_call *calls;
  size_t ncalls;
  int64_t last_end_ns;
};

/* Loads job's activities (MPI-IO, POSIX, stdio layers of its processes).
 * Returns the number of activities (0: nothing of that job), or -1 (err).
 * The caller releases j with fnd_job_free, also after a failure. */
long fnd_job_load(PGconn *c, const char *job, struct fnd_job *j, char *err, size_t errcap);
void fnd_job_free(struct fnd_job *j);

/* ---- cost model (findings_cost.c) ----------------------------------------- */

/* latency_ns = a_ns + b_ns_per_byte * bytes of one file-system operation. */
struct fnd_cost {
  double a_ns, b_ns;
  long samples, sizes; /* operations and distinct sizes behind the fit */
  double one_size;     /* the size when sizes == 1 */
  double max_size;     /* the largest operation behind the fit: the line is not trusted beyond it */
  char how[512];       /* how it was obtained, for the rationale */
};

/* Fits the model to n (bytes, ns) samples: least squares when >= 2 distinct
 * sizes give a non-negative line, else a line through the mean latencies of
 * the smallest and largest size. With one size, a comes from floor (the
 * smallest operations seen on the same mount: floor->a_ns) when given, and
 * the rest of the latency is per byte; without floor, b is 0. Says which in
 * out->how. Returns 0, or -1 when n == 0. */
int fnd_cost_fit(const double *bytes, const double *ns, size_t n, const struct fnd_cost *floor, struct fnd_cost *out);
double fnd_cost_op(const struct fnd_cost *m, double bytes);

/* A noncontiguous access seen as n pieces of piece bytes, the first at
 * offset 0 and each stride bytes after the previous one (stride >= piece). */
struct fnd_layout {
  long pieces;
  int64_t piece, stride;
};

/* ROMIO's data-sieving windows over layout with buffer size w: a window
 * starts at the first piece not yet covered and reaches w bytes or the end of
 * the last piece, whichever is first. Returns the number of windows; *bytes
 * (may be NULL) gets their total size. */
long fnd_ds_windows(const struct fnd_layout *l, int64_t w, int64_t *bytes);

/* Predicted seconds of one access under each strategy: one operation per
 * piece (direct), or per window a read and, for writes, a write back. */
double fnd_cost_direct(const struct fnd_cost *m, const struct fnd_layout *l);
double fnd_cost_sieve(const struct fnd_cost *m, const struct fnd_layout *l, int64_t w, int write);

/* ---- ROMIO's aggregation as observed (findings_romio_agg.c) --------------- */

/* One file-system operation under a collective call. */
struct fnd_interval {
  int64_t start, end, bytes;
  int proc;
};

struct fnd_agg {
  int writers;     /* processes that made the collective calls */
  int aggregators; /* processes whose calls made the file-system operations */
  long ops, solo, overlapped; /* operations; alone; overlapping another process's */
  double concurrency;         /* operation time / time with one in flight */
  double solo_ns_per_b, overlap_ns_per_b;
  int parallel; /* did running them at once help: 1 yes, 0 no, -1 cannot tell */
};

/* The model of v[n] (sorted in place) made by writers processes. */
void fnd_agg_model(struct fnd_interval *v, size_t n, int writers, struct fnd_agg *a);
/* How much faster k aggregators write than one, as far as the data shows:
 * 1 when parallelism did not help (or k <= 1: a single aggregator
 * serializes), min(k, observed concurrency) when it did, NAN when the data
 * cannot tell. */
double fnd_agg_speedup(const struct fnd_agg *a, int k);

/* ---- output (findings_mpiio.c, findings_detect.c, findings_store.c) -------- */

#define FND_MAX_SETS 64

struct fnd_finding {
  char kind[48];
  const char *severity; /* "info", "warning", "critical" */
  char summary[512];
  json_object *evidence; /* owned */
  double gain_s;
  int file; /* -1: not about one file */
};

struct fnd_hintset {
  int file;
  json_object *hints, *rationale, *evidence; /* owned */
  double gain_s;
  int used; /* a finding refers to it */
  /* The prediction rests on a value the data could not determine (e.g. the
   * per-byte cost with one operation size): stored as an experiment, its
   * gain unknown (stored as 0, never claimed). why: which value. */
  int experiment;
  char experiment_why[400];
};

struct fnd_out {
  struct fnd_finding *f;
  size_t n, cap;
  struct fnd_hintset sets[FND_MAX_SETS];
  size_t nsets;
};

/* Appends a finding; takes ownership of evidence. Returns it, or NULL (and
 * frees evidence) when out of memory. */
struct fnd_finding *fnd_add(struct fnd_out *o, const char *kind, const char *severity, int file,
                            json_object *evidence, double gain_s, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* The romio321 hint set of file, created empty on first use (NULL: full). */
struct fnd_hintset *fnd_set(struct fnd_out *o, int file);
/* Adds key=value with its rationale to file's set. */
void fnd_hint(struct fnd_out *o, int file, const char *key, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void fnd_out_free(struct fnd_out *o);
/* The run applied a set that is withdrawn: its data shows that set at
 * work, so no set is made from it (every set's keys are dropped) and a
 * hint_set_withdrawn finding says so. */
void fnd_no_sets(const struct fnd_job *j, struct fnd_out *o);

/* json helpers */
json_object *fnd_aids(const struct fnd_job *j, const int *ops, size_t n);
void fnd_jnum(json_object *o, const char *key, double v);
void fnd_jint(json_object *o, const char *key, int64_t v);

/* The file-system cost model fitted to the job's POSIX data operations:
 * FND_SCOPE_FILE those under MPI-IO calls on file; FND_SCOPE_MOUNT those
 * under MPI-IO calls on files in file's directory (the mount, as far as the
 * data tells: POSIX operations name their file only under MPI-IO); FND_SCOPE_ALL
 * every one outside the MPI runtime's own. floor: see fnd_cost_fit. */
enum fnd_scope { FND_SCOPE_FILE, FND_SCOPE_MOUNT, FND_SCOPE_ALL };
int fnd_job_cost(const struct fnd_job *j, int file, enum fnd_scope scope, const struct fnd_cost *floor,
                 struct fnd_cost *out);

/* MPI-IO per file: data sieving, collective buffering, component. */
void fnd_analyze_mpiio(const struct fnd_job *j, struct fnd_out *o);
/* The other detections of issue 4 item 2 (whole job). */
void fnd_analyze_detect(const struct fnd_job *j, struct fnd_out *o);

/* Writes o for job j in one transaction, replacing the job's findings and
 * superseding older hint sets of the same application, pattern and
 * component. 0 or -1 (err). */
int fnd_store(PGconn *c, const struct fnd_job *j, struct fnd_out *o, char *err, size_t errcap);

#endif
