/*
 * libsiox-capacity: a storage model calibrated from SIOX's own measurements,
 * a discrete-event simulation that runs a workload file on it, and the
 * what-if scenarios of capacity planning (issue 13 sections 3-4; design in
 * capacity/README.md).
 *
 * The model: per component (a GlusterFS brick, a client node's FUSE
 * channel) and per request class, service time = a + b * bytes, fitted by
 * least squares on the component's measured exclusive times, with standard
 * errors; the number of requests it serves at once; which brick holds each
 * file (recorded, or GlusterFS's DHT rule for files and bricks not seen).
 *
 * Ownership: a siox_cap_model is the caller's (siox_cap_model_new/free);
 * names are copied. Functions return 0 or a negative errno with a one-line
 * message in (err, errlen) where they take one; nothing here prints.
 */
#ifndef SIOX_CAPACITY_H
#define SIOX_CAPACITY_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "siox_workload.h"

/* ---- placement: GlusterFS DHT (cap_dht.c) ------------------------------ */
/* GlusterFS's Davies-Meyer hash (gf_dm_hashfn) of len bytes of s. */
uint32_t siox_cap_dm_hash(const char *s, size_t len);
/* The brick (0..nbricks-1, in volfile order) that cluster/distribute gives
 * a new file `base` (its name) in directory `dir` (volume-relative, "/" for
 * the root) when the directory's layout was made for nbricks equal bricks:
 * the 32-bit hash space cut in nbricks equal ranges, handed out in brick
 * order starting at hash(dir) % nbricks; the file goes to the range holding
 * hash(base). -EINVAL when nbricks is 0. */
int siox_cap_dht_place(const char *dir, const char *base, uint32_t nbricks);
/* Same for a whole path: dir and base split at the last '/', after removing
 * `mount` (the volume's mount point, may be NULL) from its front. */
int siox_cap_dht_place_path(const char *path, const char *mount, uint32_t nbricks);

/* ---- least squares with standard errors (cap_fit.c) -------------------- */
struct siox_cap_fit {
  uint64_t n;        /* samples; 0: class never observed (costs 0) */
  double a_ns;       /* fixed cost per request */
  double b_ns;       /* cost per byte */
  double se_a, se_b; /* their standard errors (0 when n < 3) */
  double cov_ab;     /* their covariance */
  double sd_ns;      /* residual standard deviation */
  uint64_t left_out; /* samples left out as disturbed (siox_cap_fit_robust); not in n */
  double excess_ns;  /* mean of all n + left_out samples' time above the line: the disturbances the
                      * recording's requests met, per request on average (0 from siox_cap_fit_line) */
  uint64_t queued;   /* a client's reads not fitted because they started behind another request of the
                      * client to the same brick (siox_cap_model_fit); in neither n nor left_out */
};
/* y = a + b*x over n samples. b is kept >= 0 (a negative slope is noise:
 * then a is the mean and b 0); with all x equal b is 0. -EINVAL when n is 0. */
int siox_cap_fit_line(const double *x, const double *y, size_t n, struct siox_cap_fit *out);
/* The same line on the samples that are service: least squares, then the
 * samples beyond 3 robust standard deviations (1.4826 x the residuals'
 * median absolute deviation) of the median residual left out and the line
 * refitted until none more leaves (never below half the samples; under 5
 * samples: siox_cap_fit_line). n counts the kept, left_out the others; the
 * standard errors are the kept samples'; excess_ns the mean residual of all
 * (what the left-out samples add to the line's time, spread over every
 * request). -EINVAL when n is 0, -ENOMEM. */
int siox_cap_fit_robust(const double *x, const double *y, size_t n, struct siox_cap_fit *out);
/* Predicted service time of a request of `bytes` under fit f, and the
 * standard error of that prediction (of the mean, not of one request). */
double siox_cap_fit_eval(const struct siox_cap_fit *f, double bytes);
double siox_cap_fit_se(const struct siox_cap_fit *f, double bytes);

/* ---- the model (cap_model.c) ------------------------------------------ */
/* Request classes, named after the GlusterFS fops they come from. */
enum siox_cap_class {
  SIOX_CAP_READ,   /* readv */
  SIOX_CAP_WRITE,  /* writev */
  SIOX_CAP_LOOKUP, /* lookup (first step of open, stat of a path) */
  SIOX_CAP_OPEN,   /* open, create */
  SIOX_CAP_CLOSE,  /* flush */
  SIOX_CAP_FSYNC,  /* fsync */
  SIOX_CAP_STAT,   /* stat */
  SIOX_CAP_NCLASS
};
const char *siox_cap_class_name(int cls);
/* The class of a GlusterFS fop name ("writev"), or -1. */
int siox_cap_class_of_fop(const char *fop);

enum siox_cap_kind { SIOX_CAP_BRICK = 0, SIOX_CAP_CLIENT = 1 };

struct siox_cap_comp {
  char *name;                 /* brick name (host:/dir) or client host */
  enum siox_cap_kind kind;
  struct siox_cap_fit fit[SIOX_CAP_NCLASS];
  uint32_t servers;           /* requests served at once (the most seen in service together) */
  /* A client's per class: the most requests of the class seen in flight at
   * once on one file (whole activities, start to end; 0: not measured, no
   * limit). The simulation holds a request's place from its client stage to
   * the end of its brick stage, a write's from its call's first request to
   * its last (README "Concurrency per class"). */
  uint32_t class_servers[SIOX_CAP_NCLASS];
  /* A client's, for read and write: ns per POSIX call its node's reads
   * (writes) on the volume spent while no request of the client was in
   * GlusterFS (the kernel's FUSE path, the CPU waited for; README "The
   * kernel's part"). Added once per read/write operation, to the client
   * stage of its first request. The robust estimate: kernel_fit's a_ns.
   * A brick's [READ]: the same over the main client's read calls whose
   * requests it served (README "The read-back's kernel part"). */
  double kernel_call_ns[SIOX_CAP_NCLASS];
  /* Its fit over the calls (siox_cap_fit_robust of each call's share, no
   * size: b 0): a_ns the estimate, se_a its standard error, n the calls
   * kept, left_out the disturbed ones, excess_ns what they add per call on
   * average (a_ns + excess_ns is the plain mean over all calls, the
   * estimate before; README "The kernel's part"). Zero when not calibrated. */
  struct siox_cap_fit kernel_fit[SIOX_CAP_NCLASS];
  /* A client's read line over all its reads, the queued ones too (the rule
   * before README "Reads queued behind another"; siox_cap_model_read_all). */
  struct siox_cap_fit read_all;
  /* A brick's write line fitted robustly (siox_cap_fit_robust): what the
   * healthy reference takes for writes (README "The healthy reference");
   * the brick's own write line stays least squares (fit). */
  struct siox_cap_fit write_robust;
  double declared_bps;        /* node/bandwidth attribute (bytes/s), 0: none */
  /* The host its processes run on, as the warehouse's processes report it
   * ("": not known; then the name's host part, up to the first ':'). */
  char host[65];
  /* 1: runs on the client node (the client itself; a brick whose host is
   * the client's): its requests' CPU work holds one of that node's cores
   * (README "The client node's CPU"; siox_cap_model_nodes). */
  int on_client_node;
  int synthetic;              /* 1: not measured (a new brick, a replacement, a declared device) */
};

struct siox_cap_sample {
  uint32_t comp;     /* index in the model */
  uint32_t cls;      /* enum siox_cap_class */
  uint64_t bytes;
  int64_t start_ns;
  int64_t ns;        /* exclusive service time */
  int64_t span_ns;   /* the activity's whole time (a client's includes its brick's); 0: ns */
  int64_t object;    /* the file it was a call on, 0: not known (all such count as one file) */
  uint32_t via;      /* a client's: 1 + the index of the brick that served it (its linked brick
                      * activity's), 0: not known (then never counted as queued) */
};

typedef struct siox_cap_model siox_cap_model;
struct siox_cap_model {
  struct siox_cap_comp *comp;
  size_t ncomp, capcomp;
  uint64_t chunk;    /* bytes per brick request of a large read/write (FUSE's max request, as seen) */
  char **place_file; /* recorded placement: file name -> brick component */
  uint32_t *place_comp;
  size_t nplace, capplace;
  uint64_t samples;  /* samples fitted */
  /* The client node's page cache (README "The client's page cache"): a read
   * of pages written or read through the client before is served by the
   * kernel at cache_read, without a request; at most client_cache_bytes per
   * client node, least recently used out (0: no cache, every read a request). */
  uint64_t client_cache_bytes;
  struct siox_cap_fit cache_read;
  /* 0 (the default): the simulation serves each request in its class's
   * line's time; 1: plus the class's excess_ns, the recording's delays on
   * average (README "Disturbed samples"), and each read/write call its
   * client's kernel_fit excess_ns (README "The kernel's part"). */
  int with_delays;
  /* 1 (the default): a client's classes are limited to their class_servers
   * per file; 0: one concurrency (servers) for every class, the model
   * before it (README "Concurrency per class"). */
  int class_concurrency;
  /* Time a collective MPI-IO open and close spend outside the model's
   * components (MPI's synchronization among ranks, ROMIO's own work), per
   * call: calibrated from the window's calls by siox_cap_model_collective
   * (README "Collective open and close"). collective 1 (the default): the
   * simulation adds them; 0: not (the model before). */
  double mpi_open_ns, mpi_close_ns;
  int collective;
  /* 1 (the default): operations pay their client's kernel_call_ns; 0: not (the model before). */
  int kernel_path;
  /* 1: the kernel's part per call is the plain mean over the window's calls
   * (kernel_call_ns + kernel_fit's excess_ns; the estimate before the robust
   * one); 0 (the default): the robust estimate, plus the excess only
   * with with_delays (README "The kernel's part"). */
  int kernel_mean;
  /* 0 (the default): a read pays the kernel's part of the reads its brick
   * served (a brick's kernel_call_ns[READ]; README "The read-back's kernel
   * part"); 1: the client's over all its reads (the model before). */
  int kernel_pooled;
  /* 1: the clients' read lines are read_all (siox_cap_model_read_all; the
   * rule before, --read-all); 0: fitted from the reads not queued. */
  int read_all;
  /* 1: the healthy reference's write line is the brick's least-squares one
   * (the rule before, --healthy-ls); 0: its robust one (write_robust). */
  int healthy_ls;
  /* The client node's cores (README "Bounding a client's servers by its
   * node's cores"): a client component serves at most this many requests at
   * once, whatever it was seen to have in flight (its requests are CPU
   * work: a FUSE request in flight is not one being served). 0: no bound
   * (the model before). Declared, not measured: the warehouse records no
   * node's core count. */
  uint32_t client_cores;
  /* 1 (the default): every component on the client node (on_client_node)
   * holds one of its client_cores cores for the CPU part of each request
   * (siox_cap_comp_cpu_ns), so the client's, the bricks' and the kernel's
   * work queue for the same cores; 0: each component has its servers to
   * itself (the model before). No effect when client_cores is 0 (README
   * "The client node's CPU"). */
  int node_cpu;
  /* 1 (--polling; 0 is the default): ranks waiting at a synchronization point poll (MPI's
   * progress loop: a waiting rank stays runnable), so while p of them wait
   * and n CPU parts are in service on the node's client_cores cores C, a CPU
   * part that starts takes its work x max(1, (n + p) / C): the cores are
   * shared (README "Ranks waiting in MPI"); 0: waiting ranks take no CPU
   * (it over-predicted on a quiet node). Only with node_cpu and client_cores. */
  int mpi_polling;
};
/* Defaults of siox_cap_model_new (README "The client's page cache"). */
#define SIOX_CAP_CLIENT_CACHE_BYTES (8ull * 1024 * 1024 * 1024)
#define SIOX_CAP_CACHE_READ_A_NS 1500.0 /* per read (bench/bench_client_cache.sh: 4 KiB in 2.3 us) */
#define SIOX_CAP_CACHE_READ_B_NS 0.19   /* per byte (5.3 GB/s: 1 MiB in 0.20 ms) */

siox_cap_model *siox_cap_model_new(void);
void siox_cap_model_free(siox_cap_model *m);
siox_cap_model *siox_cap_model_clone(const siox_cap_model *m);
/* Adds (or finds) a component; returns its index or -ENOMEM. */
int64_t siox_cap_model_comp(siox_cap_model *m, const char *name, enum siox_cap_kind kind);
/* Index of the component named name, or -1. */
int64_t siox_cap_model_find(const siox_cap_model *m, const char *name);
/* Fits every (component, class) from samples (a client's by siox_cap_fit_robust,
 * a brick's by siox_cap_fit_line; a client's reads that started while an
 * earlier request of the client to the same brick was in flight left out
 * and counted in queued, unless fewer than 5 would be left: README "Reads
 * queued behind another"), the concurrency of each
 * component from the samples' overlap, a client's per class and file
 * (class_servers, over the samples' spans), and the chunk size from the
 * largest brick read/write. 0, -EINVAL (a sample names no component), -ENOMEM. */
int siox_cap_model_fit(siox_cap_model *m, const struct siox_cap_sample *s, size_t n);
/* Puts each client's read_all line in place of its read line (fitted from
 * the reads that were not queued) and sets m->read_all: the rule before
 * (README "Reads queued behind another"). */
void siox_cap_model_read_all(siox_cap_model *m);
/* Records that file name lives on brick comp. 0, -EINVAL, -ENOMEM. */
int siox_cap_model_place(siox_cap_model *m, const char *file, uint32_t comp);
/* The brick holding file name, or -1. */
int64_t siox_cap_model_placed(const siox_cap_model *m, const char *file);
/* The bricks in volfile order (natural order of their names: brick2 before
 * brick10); writes up to max indexes into out, returns how many there are. */
size_t siox_cap_model_bricks(const siox_cap_model *m, uint32_t *out, size_t max);
/* The healthy reference of a class over the measured bricks: the lower
 * median brick by service time of a chunk-sized request (one slow brick in
 * two or more never sets it); for writes each brick's robust line
 * (write_robust) unless m->healthy_ls. *out zeroed when no brick served
 * the class. */
void siox_cap_model_healthy(const siox_cap_model *m, int cls, struct siox_cap_fit *out);
/* The brick whose line siox_cap_model_healthy gives for cls, -1 when none. */
int64_t siox_cap_model_healthy_brick(const siox_cap_model *m, int cls);
/* The brick whose reads' kernel part a healed or new brick's reads pay:
 * the lower median by read service of a chunk among the bricks with one
 * (README "The read-back's kernel part"), -1 when none has. */
int64_t siox_cap_model_healthy_read_kernel(const siox_cap_model *m);
/* The client component all ranks' requests pass: the most sampled one
 * (-1: the model has no client). */
int64_t siox_cap_model_main_client(const siox_cap_model *m);
/* The requests component comp serves at once in the model: the most it was
 * seen serving (at least 1), a client's at most m->client_cores when set. */
uint32_t siox_cap_comp_servers(const siox_cap_model *m, uint32_t comp);
/* Marks the components on the client node (cap_cpu.c): the most sampled
 * client, and every brick whose host is that client's (each one's `host`,
 * else its name up to the first ':'). */
void siox_cap_model_nodes(siox_cap_model *m);
/* The CPU part of a request of class cls and `bytes` that takes svc ns at
 * component comp (cap_cpu.c): all of it at a client (its exclusive time is
 * its threads', the network's and the kernel's work on the node); at a
 * brick at most the healthy reference's time for the request: what a brick
 * takes beyond the healthy bricks is its device's wait (the testbed's
 * slowed brick sleeps 5 ms per request), which holds no core (none when
 * no measured brick served the class: every brick a declared device). */
double siox_cap_comp_cpu_ns(const siox_cap_model *m, uint32_t comp, int cls, double bytes, double svc);
/* Capacity of a component for class cls at chunk-sized requests (bytes/s;
 * requests/s for classes of no bytes): the declared bandwidth when there is
 * one, else siox_cap_comp_servers * chunk / service time. lo and hi (may be NULL): the same
 * at the fit's +/- 2 standard errors. 0 when the class was never seen. */
double siox_cap_comp_capacity(const siox_cap_model *m, uint32_t comp, int cls, double *lo, double *hi);

/* A POSIX pread/pwrite on the volume at a client node (cap_kernel.c). */
struct siox_cap_posix_op {
  uint32_t comp; /* the client component of its node */
  uint32_t cls;  /* SIOX_CAP_READ or SIOX_CAP_WRITE */
  uint64_t bytes;
  int64_t start_ns, end_ns;
};
/* Sets each client's kernel_call_ns[READ/WRITE] and kernel_fit from its
 * node's POSIX calls p and the client's samples s (their whole spans): each
 * call's share of the time some call of the class was in progress and no
 * request of the client was (a moment shared by k calls in progress counts
 * 1/k to each, so the shares add up to that time), fitted per class by
 * siox_cap_fit_robust with no size (a per-call constant; disturbed calls
 * left out and their excess kept). A class without calls keeps 0. 0,
 * -EINVAL (a call names no client component), -ENOMEM. */
int siox_cap_model_kernel(siox_cap_model *m, const struct siox_cap_posix_op *p, size_t np,
                          const struct siox_cap_sample *s, size_t n);
/* The kernel's part a call of class cls at client c pays in the simulation:
 * kernel_call_ns, plus kernel_fit's excess_ns with with_delays or
 * kernel_mean (then the plain mean); 0 with kernel_path 0. A read whose
 * requests go to brick (-1: none) pays that brick's kernel_call_ns[READ]
 * instead when the brick has one and not kernel_pooled (README "The
 * read-back's kernel part"). */
double siox_cap_kernel_ns(const siox_cap_model *m, uint32_t c, int64_t brick, int cls);

/* Calibrates mpi_open_ns (mpi_close_ns) from the durations of MPI_File_open
 * (MPI_File_close) calls (cap_collective.c): their median beyond the model's
 * requests for one (lookup + open, or flush: the most sampled client's and
 * the healthy brick reference's, nothing queued), never below 0. A kind
 * with no call keeps its value. 0, -ENOMEM. */
int siox_cap_model_collective(siox_cap_model *m, const int64_t *open_ns, size_t nopen, const int64_t *close_ns,
                              size_t nclose);

/* The model calibrated on the brick and client activities that started in
 * [since, until) (cap_calibrate.c, through libsiox-warehouse), with the
 * kernel's part (the window's POSIX reads and writes on the volume), the
 * collective open and close (its MPI_File_open/_close calls), the recorded
 * placement and declared bandwidths. 0, -ENOENT (no sample: err
 * says why), -EIO (query; err), -ENOMEM. *out is the caller's. */
int siox_cap_model_from_warehouse(PGconn *pg, int64_t since_ns, int64_t until_ns, siox_cap_model **out, char *err,
                                  size_t errlen);

/* ---- simulation (cap_sim.c, on the event core cap_des.c) -------------- */
struct siox_cap_comp_stat {
  uint64_t requests;
  double busy_ns;      /* service time summed */
  double wait_ns;      /* queueing time summed */
  double utilization;  /* busy_ns / (servers * makespan) */
  double mean_wait_ns; /* per request */
  double mean_queue;   /* requests waiting, time average (Little: wait_ns / makespan) */
  double demand_ns;    /* busy_ns / servers per copy of the workload */
  uint64_t bytes_read, bytes_written; /* by the requests of files on this brick */
};
struct siox_cap_run {
  uint32_t copies, ranks;
  int64_t makespan_ns;
  int64_t *rank_io_ns;  /* [copies * ranks]: time inside operations */
  int64_t *job_io_ns;   /* [copies]: the slowest rank's */
  int64_t *rec_ns;      /* [nrecs of the workload]: each operation's predicted time in copy 0 */
  struct siox_cap_comp_stat *stat; /* [ncomp of the model] */
  size_t ncomp;
  uint64_t events;
  double cpu_busy_ns, cpu_wait_ns; /* the client node's cores (node_cpu): CPU time used, time waited for a core */
  uint64_t unmatched_syncs; /* synchronization points some rank of the group never reached: released when
                             * nothing else could happen (the trace's ranks disagree; a replay would hang) */
};
void siox_cap_run_free(struct siox_cap_run *r);

struct siox_cap_sim_opts {
  uint32_t copies;         /* concurrent copies of the workload (>= 1) */
  const int32_t *brick_of; /* [copies * nfiles]: brick component of each copy's file; -1: no brick (local) */
  int64_t client;          /* the client component every rank's requests pass (FUSE channel), -1: none */
  int no_gaps;             /* 1: compute gaps take no time */
  const int64_t *local_ns; /* [nrecs] or NULL: time each operation spends outside the model's components
                            * (MPI exchange, kernel, CPU), added before its requests */
};
/* Runs w (a trace) on m. Each rank's operations in order: the compute gap,
 * then per operation its requests (a read/write: ceil(bytes/chunk) chunks,
 * one after the other; a read of a file on a brick only for the parts the
 * client node's page cache lacks, the rest at m->cache_read; open: lookup
 * then open; stat: lookup; close: flush; fsync: fsync; seek: none), each
 * through the client channel and then the file's brick, queueing FIFO
 * where all servers are busy. Barriers and the
 * collective MPI-IO accesses (*_all) hold each rank until every rank of
 * their group (all ranks; a file's MPI ranks) has arrived; when nothing else
 * can happen and ranks still wait, the fullest waiting group is released
 * and counted (unmatched_syncs). 0, -EINVAL (not a trace), -ENOMEM. *out is
 * the caller's. */
int siox_cap_simulate(const siox_cap_model *m, const siox_workload *w, const struct siox_cap_sim_opts *o,
                      struct siox_cap_run *out, char *err, size_t errlen);

/* ---- what-if scenarios (cap_scenario.c) -------------------------------- */
enum siox_cap_what {
  SIOX_CAP_AS_IS,    /* the recorded system */
  SIOX_CAP_BRICKS,   /* n bricks (fewer: the last ones removed; more: healthy ones added); files placed by DHT */
  SIOX_CAP_HEAL,     /* brick `name` replaced by a healthy one */
  SIOX_CAP_DEVICE,   /* brick `name` (or every brick: name NULL) gets latency + bytes / bandwidth */
  SIOX_CAP_LOAD      /* k concurrent copies of the workload */
};
struct siox_cap_scenario {
  enum siox_cap_what what;
  uint32_t n;          /* BRICKS: brick count; LOAD: copies */
  const char *name;    /* HEAL, DEVICE: the brick */
  double latency_ns;   /* DEVICE */
  double bandwidth_bps;/* DEVICE */
  const char *label;   /* for reports ("bricks=2") */
};
/* Parses "bricks=N", "heal=BRICK", "device=BRICK:LAT_US:MBPS" (BRICK may be
 * "all"), "load=K" (or a bare K). 0 or -EINVAL with the reason in err. The
 * scenario points into spec (which must outlive it). */
int siox_cap_scenario_parse(char *spec, struct siox_cap_scenario *s, char *err, size_t errlen);
/* Parses "A+B+..." (scenarios applied in order) into s[0..max); returns how
 * many, or -EINVAL. Cuts spec at the '+'. */
int siox_cap_scenarios_parse(char *spec, struct siox_cap_scenario *s, size_t max, char *err, size_t errlen);

struct siox_cap_answer {
  char label[128];
  struct siox_cap_run run;
  siox_cap_model *model;   /* the model the scenario ran on (its components name run.stat) */
  int64_t saturates_first; /* the component with the highest demand per copy, -1 none */
  double saturates_at;     /* copies of the workload at which it reaches 100 % (makespan of one copy / its demand) */
};
void siox_cap_answer_free(struct siox_cap_answer *a);
struct siox_cap_predict_opts {
  const char *mount;      /* the volume's mount point in the workload's file names (NULL: names are volume-relative) */
  const char *replay_dir; /* predict `siox replay --dir DIR` of the workload: its files are DIR/f<ID>-<name>,
                           * placed by DHT (NULL: the workload's own files) */
  int no_gaps;            /* compute gaps take no time */
  int residual;           /* keep each operation's recorded time outside the model (see README "Residual") */
};
/* Predicts workload w on model m under the scenarios s[0..ns) applied in
 * order (none: as recorded). Files the model has no recorded brick for,
 * every file when the brick count changes, and a replay's files are placed
 * by DHT. An unknown brick is -ENOENT with "no brick NAME in the model
 * (bricks: ...)". */
int siox_cap_predict(const siox_cap_model *m, const siox_workload *w, const struct siox_cap_scenario *s, size_t ns,
                     const struct siox_cap_predict_opts *o, struct siox_cap_answer *out, char *err, size_t errlen);

/* ---- validation: predictions against real runs (cap_validate.c) ------ */
/* One scenario of a validation: what was predicted and which real runs of it
 * the warehouse holds (capacity/README.md, "Validation"). */
struct siox_cap_validate_case {
  const char *name;            /* printed ("healed") */
  const char *spec;            /* storage scenarios "A+B" (siox_cap_scenarios_parse); NULL: as recorded */
  const siox_workload *w;      /* the workload the runs executed (the recorded job's, or a transformed one) */
  const char *replay_dir;      /* the directory the runs replayed w into (`siox replay --dir`); NULL: w's own files */
  const char *run_mount;       /* the mount point of the volume they ran on (NULL: the model's, opts->mount) */
  const char *const *measured; /* job ids of the runs: one per concurrent copy the scenario predicts, or a
                                * multiple for repeats of the scenario (each repeat's copies in a row) */
  size_t nmeasured;
  const char *const *prefixes; /* without replay_dir: the runs' files (NULL-terminated; NULL: default filter) */
};
struct siox_cap_validate_result {
  uint32_t copies;            /* concurrent copies the scenario predicts */
  uint32_t repeats;           /* runs of the scenario measured (nmeasured / copies) */
  uint32_t ranks;
  int64_t predicted_ns;       /* mean predicted I/O time of one copy (its slowest rank's time inside operations) */
  int64_t measured_ns;        /* the same, measured from the runs' traces in the warehouse: the mean over a
                               * repeat's copies, the median over the repeats (siox_cap_measured) */
  int64_t measured_min_ns, measured_max_ns; /* the fastest and slowest single measured job */
  double error_pct;           /* |predicted - measured| / measured x 100 */
  uint64_t unmatched_syncs;   /* of the simulation (see siox_cap_run) */
};
/* Predicts case c on model m (opts: mount, no_gaps, residual; replay_dir
 * comes from c) and measures it: each run of c->measured is read back from
 * the warehouse (siox_wl_extract, its files: those under c->replay_dir).
 * A run must be there and must be a run of this scenario: -ENOENT "no run
 * of job J in the warehouse"; -EINVAL when its ranks or bytes moved differ
 * from c->w's, or nmeasured is not a multiple of the scenario's copies
 * (repeats: nmeasured / copies, measured by siox_cap_measured); also the errors of
 * siox_cap_predict. err names the case. */
int siox_cap_validate(PGconn *pg, const siox_cap_model *m, const struct siox_cap_validate_case *c,
                      const struct siox_cap_predict_opts *opts, struct siox_cap_validate_result *out, char *err,
                      size_t errlen);
/* The measured I/O time of a case whose jobs took t[0..n) (I/O time each),
 * in repeats of `copies` jobs in a row (the concurrent copies of one run):
 * the median over the repeats of each repeat's mean per copy, so that one
 * disturbed run among several does not make the figure. -EINVAL when n is
 * 0 or not a multiple of copies. */
int64_t siox_cap_measured(const int64_t *t, size_t n, uint32_t copies);
/* I/O time of a trace: the largest rank's sum of operation durations. */
int64_t siox_cap_io_time(const siox_workload *w);
/* The median of v[0..n) (sorts v); 0 when n is 0. */
double siox_cap_median(double *v, size_t n);

#endif
