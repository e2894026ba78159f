/*
 * The simulation of a workload on the storage model (siox_cap_simulate in
 * siox_capacity.h): every rank of every copy is an entity that sleeps its
 * compute gaps and issues its operations' requests one at a time (a rank's
 * I/O is synchronous, as the replay's is), each through the client's FUSE
 * channel and then the brick that holds the file. Stations are the model's
 * components: FIFO, `servers` requests at once (a client's at most its
 * node's cores, when the model has them); a component on the client node
 * also holds one of the node's cores (one more station, shared) for its
 * request's CPU part (node_cpu; cap_cpu.c), sharing it with the ranks
 * that wait in MPI and poll (mpi_polling). A read of what the client
 * node's page cache holds (cap_cache.c) makes no request for that part.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cap_cache.h"
#include "cap_des.h"
#include "siox_capacity.h"

enum { EV_WAKE = 2 /* a rank's gap ended or it was released: go on */ };

enum phase { PH_START, PH_PRE_SYNC, PH_IO, PH_POST_SYNC, PH_DONE };

struct rank_st {
  uint32_t copy, rank;
  size_t *recs, nrecs, pos; /* this rank's record indexes, in order; the current one */
  enum phase ph;
  double op_start;
  int64_t io_ns;
  int req;                 /* requests of the current operation issued so far */
  int nreq;                /* and in all */
  int stage;               /* 0: at the client, 1: at the brick */
  struct cap_gap *gap;     /* a read/write's parts that go to the brick (a read's: those not cached) */
  size_t ngap, capg, gi;   /* their count, capacity, the current one */
  uint64_t gleft;          /* bytes of the current part not yet requested */
  uint64_t cached;         /* bytes of the operation the page cache serves */
  size_t sieve_reads;      /* the first parts of gap that are data sieving's read of the span */
  uint64_t span_hi;        /* the file byte after the operation's last (its span under a view) */
  const struct siox_wl_rec **view; /* [nfiles]: the rank's view of each file (its mpi_view), NULL: bytes */
  int waiting;             /* 1 while held at a synchronization point */
  struct cap_slots *slot;  /* the file's slots of the current request's class it holds, NULL: none */
  double slot_asked;       /* when it asked for a slot (waiting for one) */
  int local_done;          /* the operation's local time has passed */
  uint32_t at;             /* the station of the current stage, while it holds a server of it */
  double cpu_ns, rest_ns;  /* the stage's CPU part (on a core) and the rest (its own server only) */
};

struct sync_st {
  uint32_t size, arrived;
  uint32_t *who;
};

struct sim {
  const siox_cap_model *m;
  const siox_workload *w;
  const struct siox_cap_sim_opts *o;
  struct cap_evq q;
  struct cap_station *st; /* one per model component, then the client node's cores (cpu) */
  uint32_t cpu;           /* the cores' station, UINT32_MAX: none (node_cpu off, no client_cores) */
  struct rank_st *r;
  uint32_t nr;
  uint64_t *bytes_r, *bytes_w; /* per component */
  int64_t *rec_ns;        /* per record, copy 0 */
  uint64_t unmatched;     /* synchronization points released without their whole group */
  uint32_t polling;       /* ranks waiting in MPI now: at a synchronization point, or done (mpi_polling) */
  uint32_t *done;         /* [copies]: ranks of the copy that finished their operations */
  uint64_t *size;          /* [copies * nfiles]: how far each copy's file reaches so far (sieving reads to there) */
  struct sync_st *sync;   /* [copies * (1 + nfiles)]: group 0 all ranks, 1 + f the MPI ranks of file f */
  size_t nfiles;
  struct cap_cache cache; /* the client node's page cache: one node runs every rank and copy */
  struct cap_slots *slots; /* [nfiles * NCLASS]: a client class's requests in flight per file (every copy's), NULL: none */
  char *err;
  size_t errlen;
};

/* The MPI-IO operations that synchronize the file's ranks in the
 * simulation: the collective accesses. MPI_File_open and _close are
 * collective too, but a trace can attribute a rank's close to another of
 * its open files (ROMIO's deferred open leaves non-aggregators without the
 * POSIX close that names the file), and a close synchronized on the wrong
 * file deadlocks the simulation; their waiting is in their recorded time
 * (the residual) instead. */
static int is_collective(int op) {
  return op == SIOX_WL_MPI_READ_ALL || op == SIOX_WL_MPI_WRITE_ALL;
}

/* What a collective open or close spends outside the stations (MPI's
 * synchronization, ROMIO's own work): calibrated from the window's calls
 * (cap_collective.c). */
static double collective_ns(const siox_cap_model *m, int op) {
  if (!m->collective) return 0;
  return op == SIOX_WL_MPI_OPEN ? m->mpi_open_ns : op == SIOX_WL_MPI_CLOSE ? m->mpi_close_ns : 0;
}

static int is_data(int op) {
  return op == SIOX_WL_READ || op == SIOX_WL_WRITE || op == SIOX_WL_MPI_READ || op == SIOX_WL_MPI_WRITE ||
         op == SIOX_WL_MPI_READ_ALL || op == SIOX_WL_MPI_WRITE_ALL;
}

/* The requests an operation makes: their number, and the class of the i-th. */
static int op_requests(const struct sim *s, const struct rank_st *r, const struct siox_wl_rec *rec) {
  if (is_data((int)rec->op)) {
    uint64_t n = 0; /* per part (plan_data): ceil(bytes / chunk) */
    for (size_t i = 0; i < r->ngap; i++) n += (r->gap[i].hi - r->gap[i].lo + s->m->chunk - 1) / s->m->chunk;
    return (int)n;
  }
  switch (rec->op) {
  case SIOX_WL_OPEN: case SIOX_WL_MPI_OPEN: return 2;
  case SIOX_WL_CLOSE: case SIOX_WL_MPI_CLOSE: case SIOX_WL_FSYNC: case SIOX_WL_MPI_SYNC: case SIOX_WL_STAT: return 1;
  default: return 0;
  }
}

static int req_class(const struct rank_st *r, const struct siox_wl_rec *rec) {
  int i = r->req;
  if (r->gi < r->sieve_reads) return SIOX_CAP_READ; /* a data sieving write reads its span first */
  switch (rec->op) {
  case SIOX_WL_OPEN: case SIOX_WL_MPI_OPEN: return i == 0 ? SIOX_CAP_LOOKUP : SIOX_CAP_OPEN;
  case SIOX_WL_CLOSE: case SIOX_WL_MPI_CLOSE: return SIOX_CAP_CLOSE;
  case SIOX_WL_FSYNC: case SIOX_WL_MPI_SYNC: return SIOX_CAP_FSYNC;
  case SIOX_WL_STAT: return SIOX_CAP_LOOKUP;
  default: return siox_wl_op_is_read((int)rec->op) ? SIOX_CAP_READ : SIOX_CAP_WRITE;
  }
}

static const struct siox_wl_rec *cur(const struct sim *s, const struct rank_st *r) {
  return siox_wl_rec(s->w, r->recs[r->pos]);
}

static int32_t brick_of(const struct sim *s, const struct rank_st *r, uint32_t fid) {
  if (fid == SIOX_WL_NOFILE || !s->o->brick_of) return -1;
  return s->o->brick_of[(size_t)r->copy * s->nfiles + fid];
}

static struct sync_st *group(struct sim *s, const struct rank_st *r, const struct siox_wl_rec *rec) {
  size_t g = rec->op == SIOX_WL_BARRIER || rec->fid == SIOX_WL_NOFILE ? 0 : 1 + rec->fid;
  return &s->sync[(size_t)r->copy * (1 + s->nfiles) + g];
}

static int step(struct sim *s, uint32_t id);

/* Adds the part [lo, hi) to r's parts. */
static int add_part(struct rank_st *r, uint64_t lo, uint64_t hi) {
  if (r->ngap == r->capg) {
    size_t cap = r->capg ? 2 * r->capg : 2;
    struct cap_gap *g = realloc(r->gap, cap * sizeof(*g));
    if (!g) return -ENOMEM;
    r->gap = g, r->capg = cap;
  }
  r->gap[r->ngap++] = (struct cap_gap){lo, hi};
  return 0;
}

/* Whether ROMIO sieves this access: an independent MPI-IO access under a
 * view with holes is one read of its whole span (a write then changes its
 * blocks and writes the span back, under a lock), not requests for its
 * bytes (workload/README.md, "Views"). Collective accesses are two-phase
 * I/O: the aggregators' file domains hold the ranks' bytes. */
static const struct siox_wl_rec *sieve_view(const struct rank_st *r, const struct siox_wl_rec *rec) {
  if (rec->op != SIOX_WL_MPI_READ && rec->op != SIOX_WL_MPI_WRITE) return NULL;
  const struct siox_wl_rec *v = r->view ? r->view[rec->fid] : NULL;
  return siox_wl_view_strided(v) ? v : NULL;
}

/* The parts of a read/write that become requests: a read of a file on the
 * volume asks the brick only for what the client's page cache lacks (the
 * rest costs the cache's read time), anything else all of its bytes; a
 * sieved access reads its span (and a write writes it back). */
static int plan_data(struct sim *s, struct rank_st *r, const struct siox_wl_rec *rec) {
  uint64_t lo = rec->offset, hi = rec->offset + rec->bytes;
  r->ngap = r->gi = r->sieve_reads = 0;
  r->gleft = r->cached = 0;
  if (!is_data((int)rec->op) || !rec->bytes) return 0;
  const struct siox_wl_rec *v = sieve_view(r, rec);
  if (v) hi = siox_wl_view_end(v, lo, rec->bytes);
  r->span_hi = hi;
  /* Sieving reads stop at the end of the file (a growing file: the span
   * past it reads nothing); other reads are taken whole. */
  uint64_t rhi = v && hi > s->size[(size_t)r->copy * s->nfiles + rec->fid] ? s->size[(size_t)r->copy * s->nfiles + rec->fid] : hi;
  int reads = (siox_wl_op_is_read((int)rec->op) || v) && rhi > lo;
  if (reads && brick_of(s, r, rec->fid) >= 0) {
    uint64_t missing;
    if (cap_cache_lookup(&s->cache, r->copy, rec->fid, lo, rhi, &r->gap, &r->ngap, &r->capg, &missing) < 0)
      return -ENOMEM;
    r->cached = rhi - lo - missing;
  } else if (reads && add_part(r, lo, rhi) < 0) {
    return -ENOMEM;
  }
  if (!siox_wl_op_is_read((int)rec->op) && !v && add_part(r, lo, hi) < 0) return -ENOMEM;
  if (v && !siox_wl_op_is_read((int)rec->op)) {
    r->sieve_reads = r->ngap;
    if (add_part(r, lo, hi) < 0) return -ENOMEM;
  }
  if (r->ngap) r->gleft = r->gap[0].hi - r->gap[0].lo;
  return 0;
}

/* Bytes of the next request of a read/write: the rest of the current part, at most a chunk. */
static uint64_t req_bytes(const struct sim *s, const struct rank_st *r) {
  return r->gleft < s->m->chunk ? r->gleft : s->m->chunk;
}

/* The current request is done: on to the next (and the next part). */
static void next_request(struct sim *s, struct rank_st *r, int cls) {
  if (cls == SIOX_CAP_READ || cls == SIOX_CAP_WRITE) {
    r->gleft -= req_bytes(s, r);
    if (!r->gleft && r->gi + 1 < r->ngap) {
      r->gi++;
      r->gleft = r->gap[r->gi].hi - r->gap[r->gi].lo;
    }
  }
  r->req++;
  r->stage = 0;
}

/* id arrives at its operation's synchronization point; the last to arrive
 * releases everyone (at this instant, through events: no recursion). */
static int arrive_sync(struct sim *s, uint32_t id) {
  struct rank_st *r = &s->r[id];
  struct sync_st *g = group(s, r, cur(s, r));
  g->who[g->arrived++] = id;
  r->waiting = 1;
  if (g->arrived < g->size) {
    s->polling++; /* it waits in MPI's progress loop, runnable (README "Ranks waiting in MPI") */
    return 0;
  }
  s->polling -= g->size - 1;
  for (uint32_t i = 0; i < g->size; i++) {
    s->r[g->who[i]].waiting = 0;
    if (cap_evq_push(&s->q, s->q.now, EV_WAKE, g->who[i], 0) < 0) return -ENOMEM;
  }
  g->arrived = 0;
  return 0;
}

/* The slots a request of class cls on rec's file waits for: the client's
 * limit for the class on one file (siox_cap_comp's class_servers), NULL
 * when there is none. */
static struct cap_slots *slots_of(struct sim *s, const struct siox_wl_rec *rec, int cls) {
  if (!s->slots || rec->fid == SIOX_WL_NOFILE) return NULL;
  struct cap_slots *p = &s->slots[(size_t)rec->fid * SIOX_CAP_NCLASS + (size_t)cls];
  return p->limit ? p : NULL;
}

/* A write keeps its file's place from its first request to its last: the
 * kernel writes a call's pages through FUSE under the file's inode lock
 * (README "Concurrency per class": in the replays' traces a call's
 * requests ran back to back); a read's requests take places one by one. */
static int holds_call(const struct rank_st *r, int cls) {
  return cls == SIOX_CAP_WRITE && r->req + 1 < r->nreq;
}

/* The request is done: its slot passes to the next waiting rank (which
 * goes on at once, its wait counted as the client's), unless the call
 * keeps it (holds_call), then on to the next request. */
static int request_done(struct sim *s, uint32_t id, int cls) {
  struct rank_st *r = &s->r[id];
  if (r->slot && !holds_call(r, cls)) {
    uint32_t next;
    if (cap_slots_give(r->slot, &next)) {
      struct rank_st *n = &s->r[next];
      n->slot = r->slot;
      s->st[s->o->client].wait_ns += s->q.now - n->slot_asked;
      if (cap_evq_push(&s->q, s->q.now, EV_WAKE, next, 0) < 0) return -ENOMEM;
    }
    r->slot = NULL;
  }
  next_request(s, r, cls);
  return 0;
}

/* Issues request r->req of the current operation (client stage first). */
static int issue(struct sim *s, uint32_t id) {
  struct rank_st *r = &s->r[id];
  const struct siox_wl_rec *rec = cur(s, r);
  int cls = req_class(r, rec);
  uint64_t bytes = 0;
  if (cls == SIOX_CAP_READ || cls == SIOX_CAP_WRITE) bytes = req_bytes(s, r);
  int32_t b = brick_of(s, r, rec->fid);
  if (r->stage == 0 && !r->slot) { /* a place among the file's requests of this class first */
    struct cap_slots *p = slots_of(s, rec, cls);
    int got = p ? cap_slots_take(p, id) : 0;
    if (got < 0) return got;
    if (p && !got) {
      r->slot_asked = s->q.now;
      return 0; /* request_done of a holder wakes it, holding the slot */
    }
    r->slot = p;
  }
  /* The brick moves the bytes whatever the model knows of its costs. */
  if (r->stage == 0 && b >= 0 && cls == SIOX_CAP_READ) s->bytes_r[b] += bytes;
  if (r->stage == 0 && b >= 0 && cls == SIOX_CAP_WRITE) s->bytes_w[b] += bytes;
  for (; r->stage < 2; r->stage++) {
    int64_t c = r->stage == 0 ? s->o->client : b;
    if (c < 0 || !s->m->comp[c].fit[cls].n) continue; /* no such stage, or a class it never served */
    const struct siox_cap_fit *f = &s->m->comp[c].fit[cls];
    double svc = siox_cap_fit_eval(f, (double)bytes) + (s->m->with_delays ? f->excess_ns : 0);
    if (r->stage == 0 && s->m->kernel_path && r->req == 0 && bytes) /* the node's kernel: once per call */
      svc += siox_cap_kernel_ns(s->m, (uint32_t)c, b, cls);
    if (svc < 0) svc = 0;
    r->at = (uint32_t)c;
    if (s->st[c].hold) {
      r->cpu_ns = siox_cap_comp_cpu_ns(s->m, (uint32_t)c, cls, (double)bytes, svc);
      r->rest_ns = svc - r->cpu_ns;
    }
    return cap_station_arrive(&s->q, &s->st[c], (uint32_t)c, id, svc);
  }
  /* Neither stage serves it: the request costs nothing in the model. */
  if (request_done(s, id, cls) < 0) return -ENOMEM;
  return cap_evq_push(&s->q, s->q.now, EV_WAKE, id, 0);
}

/* A station finished id's request stage: on to the brick, or the request is done. */
static int stage_done(struct sim *s, uint32_t id) {
  struct rank_st *r = &s->r[id];
  if (r->stage == 0) {
    r->stage = 1;
    return issue(s, id);
  }
  const struct siox_wl_rec *rec = cur(s, r);
  if (request_done(s, id, req_class(r, rec)) < 0) return -ENOMEM;
  return step(s, id);
}

/* The operation is over: what a read/write of a file on the volume moved is
 * in the client's page cache now. */
static int end_op(struct sim *s, struct rank_st *r) {
  const struct siox_wl_rec *rec = cur(s, r);
  if (is_data((int)rec->op) && rec->bytes && brick_of(s, r, rec->fid) >= 0 &&
      cap_cache_insert(&s->cache, r->copy, rec->fid, rec->offset, r->span_hi,
                       !siox_wl_op_is_read((int)rec->op)) < 0)
    return -ENOMEM;
  uint64_t *size = rec->fid != SIOX_WL_NOFILE ? &s->size[(size_t)r->copy * s->nfiles + rec->fid] : NULL;
  if (size && is_data((int)rec->op) && !siox_wl_op_is_read((int)rec->op) && r->span_hi > *size) *size = r->span_hi;
  r->io_ns += (int64_t)(s->q.now - r->op_start);
  if (r->copy == 0 && s->rec_ns) s->rec_ns[r->recs[r->pos]] = (int64_t)(s->q.now - r->op_start);
  r->pos++;
  r->ph = PH_START;
  return 0;
}

/* r finished its operations: it waits in MPI (the replay's closing
 * MPI_Allreduce, MPI_Finalize) for the other ranks of its copy, polling;
 * the last one releases them. */
static void finish(struct sim *s, const struct rank_st *r) {
  uint32_t ranks = siox_wl_ranks(s->w);
  if (++s->done[r->copy] < ranks) s->polling++;
  else s->polling -= ranks - 1;
}

/* The rank's view of rec's file is rec's from now on. */
static int see_view(struct sim *s, struct rank_st *r, const struct siox_wl_rec *rec) {
  if (!r->view && !(r->view = calloc(s->nfiles ? s->nfiles : 1, sizeof(*r->view)))) return -ENOMEM;
  r->view[rec->fid] = rec;
  return 0;
}

/* A file the workload reads past its writes was there before (the
 * replay extends it so: workload/README.md, "siox-replay"); the others grow
 * as they are written. Extents without views: an upper bound that is
 * enough to tell the two apart. */
static int initial_sizes(struct sim *s) {
  size_t nf = s->nfiles ? s->nfiles : 1;
  uint64_t *ext = calloc(2 * nf, sizeof(*ext)); /* [f]: reads' end, [nf + f]: writes' */
  if (!ext) return -ENOMEM;
  for (size_t i = 0; i < siox_wl_nrecs(s->w); i++) {
    const struct siox_wl_rec *r = siox_wl_rec(s->w, i);
    if (r->fid == SIOX_WL_NOFILE || !is_data((int)r->op)) continue;
    uint64_t *x = &ext[(siox_wl_op_is_read((int)r->op) ? 0 : nf) + r->fid];
    if (r->offset + r->bytes > *x) *x = r->offset + r->bytes;
  }
  for (uint32_t c = 0; c < s->o->copies; c++)
    for (size_t f = 0; f < s->nfiles; f++) s->size[(size_t)c * s->nfiles + f] = ext[f] > ext[nf + f] ? ext[f] : 0;
  free(ext);
  return 0;
}

/* Moves rank id on from where it stands until it waits for something. */
static int step(struct sim *s, uint32_t id) {
  struct rank_st *r = &s->r[id];
  for (;;) {
    if (r->pos >= r->nrecs) {
      if (r->ph != PH_DONE) finish(s, r);
      r->ph = PH_DONE;
      return 0;
    }
    const struct siox_wl_rec *rec = cur(s, r);
    switch (r->ph) {
    case PH_START: /* the gap first, then the operation */
      r->ph = PH_PRE_SYNC;
      if (!s->o->no_gaps && rec->gap_ns > 0) return cap_evq_push(&s->q, s->q.now + (double)rec->gap_ns, EV_WAKE, id, 0);
      break;
    case PH_PRE_SYNC:
      if (rec->op == SIOX_WL_MPI_VIEW && see_view(s, r, rec) < 0) return -ENOMEM;
      if (rec->op == SIOX_WL_MPI_OPEN && r->view) r->view[rec->fid] = NULL; /* an open starts with the byte view */
      r->op_start = s->q.now;
      r->req = 0;
      r->stage = 0;
      if (plan_data(s, r, rec) < 0) return -ENOMEM;
      r->nreq = op_requests(s, r, rec);
      r->local_done = 0;
      r->ph = PH_IO;
      if (rec->op == SIOX_WL_BARRIER || is_collective((int)rec->op)) return arrive_sync(s, id);
      break;
    case PH_IO:
      if (rec->op == SIOX_WL_BARRIER) {
        if (end_op(s, r) < 0) return -ENOMEM;
        break;
      }
      if (!r->local_done) { /* time outside the stations: the residual, the page cache's copy, MPI's part */
        double t = s->o->local_ns && s->o->local_ns[r->recs[r->pos]] > 0 ? (double)s->o->local_ns[r->recs[r->pos]] : 0;
        if (r->cached) t += siox_cap_fit_eval(&s->m->cache_read, (double)r->cached);
        t += collective_ns(s->m, (int)rec->op);
        r->local_done = 1;
        if (t > 0) return cap_evq_push(&s->q, s->q.now + t, EV_WAKE, id, 0);
      }
      if (r->req < r->nreq) return issue(s, id);
      r->ph = PH_POST_SYNC;
      if (is_collective((int)rec->op)) return arrive_sync(s, id);
      break;
    case PH_POST_SYNC:
      if (end_op(s, r) < 0) return -ENOMEM;
      break;
    case PH_DONE: return 0;
    }
  }
}

/* Group sizes: every rank of a copy for barriers; the ranks that MPI-open a
 * file for that file's collectives. */
static int build_sync(struct sim *s) {
  uint32_t ranks = siox_wl_ranks(s->w), copies = s->o->copies;
  size_t ng = 1 + s->nfiles;
  s->sync = calloc((size_t)copies * ng, sizeof(*s->sync));
  unsigned char *opens = calloc((size_t)ranks * (s->nfiles ? s->nfiles : 1), 1);
  if (!s->sync || !opens) goto nomem;
  for (size_t i = 0; i < siox_wl_nrecs(s->w); i++) {
    const struct siox_wl_rec *rec = siox_wl_rec(s->w, i);
    if (rec->op == SIOX_WL_MPI_OPEN) opens[(size_t)rec->rank * s->nfiles + rec->fid] = 1;
  }
  for (uint32_t c = 0; c < copies; c++)
    for (size_t g = 0; g < ng; g++) {
      struct sync_st *y = &s->sync[c * ng + g];
      y->size = ranks;
      if (g > 0) {
        y->size = 0;
        for (uint32_t k = 0; k < ranks; k++) y->size += opens[(size_t)k * s->nfiles + g - 1];
      }
      if (!(y->who = calloc(y->size ? y->size : 1, sizeof(*y->who)))) goto nomem;
    }
  free(opens);
  return 0;
nomem:
  free(opens);
  return -ENOMEM;
}

/* Per file and class, the client's limit of requests in flight (README
 * "Concurrency per class"): the copies of a workload share it, as they
 * share the file (the same name; load=K runs K copies on the same files).
 * None without a client, with the model's class_concurrency off, or for
 * classes the client has no limit for. */
static int build_slots(struct sim *s) {
  if (s->o->client < 0 || !s->m->class_concurrency || !s->nfiles) return 0;
  const struct siox_cap_comp *c = &s->m->comp[s->o->client];
  size_t n = s->nfiles * SIOX_CAP_NCLASS;
  if (!(s->slots = calloc(n, sizeof(*s->slots)))) return -ENOMEM;
  for (size_t i = 0; i < n; i++) s->slots[i].limit = c->class_servers[i % SIOX_CAP_NCLASS];
  return 0;
}

static int build_ranks(struct sim *s) {
  uint32_t ranks = siox_wl_ranks(s->w);
  s->nr = ranks * s->o->copies;
  if (!(s->r = calloc(s->nr, sizeof(*s->r)))) return -ENOMEM;
  size_t *count = calloc(ranks, sizeof(*count));
  if (!count) return -ENOMEM;
  for (size_t i = 0; i < siox_wl_nrecs(s->w); i++) count[siox_wl_rec(s->w, i)->rank]++;
  for (uint32_t id = 0; id < s->nr; id++) {
    struct rank_st *r = &s->r[id];
    r->copy = id / ranks;
    r->rank = id % ranks;
    if (!(r->recs = malloc((count[r->rank] ? count[r->rank] : 1) * sizeof(*r->recs)))) {
      free(count);
      return -ENOMEM;
    }
  }
  free(count);
  for (size_t i = 0; i < siox_wl_nrecs(s->w); i++) {
    uint32_t k = siox_wl_rec(s->w, i)->rank;
    for (uint32_t c = 0; c < s->o->copies; c++) {
      struct rank_st *r = &s->r[c * ranks + k];
      r->recs[r->nrecs++] = i;
    }
  }
  return 0;
}

/* A stage at a component on the client node got its server: its CPU part
 * waits for a core, FIFO (a core does one thing at a time: a FIFO station
 * rather than the kernel's time slicing, the same total work). */
static int use_cpu(struct sim *s, uint32_t id) {
  return cap_station_arrive(&s->q, &s->st[s->cpu], s->cpu, id, s->r[id].cpu_ns);
}

/* A CPU part got a core (the cores' station holds, with mpi_polling): the
 * ranks waiting in MPI poll on the same cores, so while p of them and n
 * parts (this one included) are runnable on C cores each gets C / (n + p) of
 * one: the part takes its work x (n + p) / C when that is above 1 (processor
 * sharing, the share taken when the part starts). */
static int cpu_served(struct sim *s, uint32_t id) {
  const struct cap_station *c = &s->st[s->cpu];
  double share = (double)(c->busy + s->polling) / c->servers;
  double t = s->r[id].cpu_ns * (share > 1 ? share : 1);
  return cap_evq_push(&s->q, s->q.now + t, CAP_EV_DEPART, id, s->cpu);
}

/* The stage's CPU part is done: the core is free; the rest of its service
 * (a device's wait) keeps only the component's server. */
static int cpu_done(struct sim *s, uint32_t id) {
  if (cap_station_depart(&s->q, &s->st[s->cpu], s->cpu) < 0) return -ENOMEM;
  struct rank_st *r = &s->r[id];
  return cap_evq_push(&s->q, s->q.now + r->rest_ns, CAP_EV_DEPART, id, r->at);
}

/* One event. */
static int handle(struct sim *s, const struct cap_event *e) {
  int rc;
  if (e->kind == CAP_EV_SERVED) return e->arg == s->cpu ? cpu_served(s, e->who) : use_cpu(s, e->who);
  if (e->kind == CAP_EV_DEPART && e->arg == s->cpu) return cpu_done(s, e->who);
  if (e->kind != CAP_EV_DEPART) return step(s, e->who);
  if ((rc = cap_station_depart(&s->q, &s->st[e->arg], e->arg)) < 0) return rc;
  return stage_done(s, e->who);
}

static int run(struct sim *s) {
  for (uint32_t id = 0; id < s->nr; id++)
    if (cap_evq_push(&s->q, 0, EV_WAKE, id, 0) < 0) return -ENOMEM;
  struct cap_event e;
  for (;;) {
    while (cap_evq_pop(&s->q, &e)) {
      int rc = handle(s, &e);
      if (rc < 0) return rc;
    }
    /* Nothing left to happen but ranks wait at synchronization points some
     * rank of their group never reaches (a trace whose ranks disagree on a
     * collective's file, or missing one): release the fullest group and
     * count it, rather than give no answer. */
    struct sync_st *best = NULL;
    for (size_t g = 0; g < (size_t)s->o->copies * (1 + s->nfiles); g++)
      if (s->sync[g].arrived && (!best || s->sync[g].arrived > best->arrived)) best = &s->sync[g];
    if (!best) break;
    s->unmatched++;
    s->polling -= best->arrived;
    for (uint32_t i = 0; i < best->arrived; i++) {
      s->r[best->who[i]].waiting = 0;
      if (cap_evq_push(&s->q, s->q.now, EV_WAKE, best->who[i], 0) < 0) return -ENOMEM;
    }
    best->arrived = 0;
  }
  for (uint32_t id = 0; id < s->nr; id++)
    if (s->r[id].ph != PH_DONE) {
      snprintf(s->err, s->errlen, "copy %u rank %u did not finish", s->r[id].copy, s->r[id].rank);
      return -EINVAL;
    }
  return 0;
}

static int collect(struct sim *s, struct siox_cap_run *out) {
  uint32_t ranks = siox_wl_ranks(s->w);
  out->copies = s->o->copies;
  out->ranks = ranks;
  out->makespan_ns = (int64_t)s->q.now;
  out->events = s->q.popped;
  out->unmatched_syncs = s->unmatched;
  out->ncomp = s->m->ncomp;
  if (s->cpu != UINT32_MAX) {
    out->cpu_busy_ns = s->st[s->cpu].busy_ns;
    out->cpu_wait_ns = s->st[s->cpu].wait_ns;
  }
  out->rank_io_ns = calloc(s->nr, sizeof(*out->rank_io_ns));
  out->job_io_ns = calloc(s->o->copies, sizeof(*out->job_io_ns));
  out->stat = calloc(s->m->ncomp ? s->m->ncomp : 1, sizeof(*out->stat));
  out->rec_ns = s->rec_ns;
  s->rec_ns = NULL;
  if (!out->rank_io_ns || !out->job_io_ns || !out->stat) return -ENOMEM;
  for (uint32_t id = 0; id < s->nr; id++) {
    out->rank_io_ns[id] = s->r[id].io_ns;
    if (s->r[id].io_ns > out->job_io_ns[s->r[id].copy]) out->job_io_ns[s->r[id].copy] = s->r[id].io_ns;
  }
  double span = out->makespan_ns > 0 ? (double)out->makespan_ns : 1;
  for (size_t c = 0; c < s->m->ncomp; c++) {
    struct siox_cap_comp_stat *x = &out->stat[c];
    const struct cap_station *st = &s->st[c];
    x->requests = st->requests;
    x->busy_ns = st->busy_ns;
    x->wait_ns = st->wait_ns;
    x->utilization = st->busy_ns / (st->servers * span);
    x->mean_wait_ns = st->requests ? st->wait_ns / (double)st->requests : 0;
    x->mean_queue = st->wait_ns / span;
    x->demand_ns = st->busy_ns / st->servers / s->o->copies;
    x->bytes_read = s->bytes_r[c];
    x->bytes_written = s->bytes_w[c];
  }
  return 0;
}

/* The client node's cores (README "The client node's CPU"): the station
 * after the components', client_cores servers; every component on the node
 * holds its server while its request's CPU part waits for and uses one. */
static void set_cpu(struct sim *s) {
  s->cpu = UINT32_MAX;
  if (!s->m->node_cpu || !s->m->client_cores) return;
  s->cpu = (uint32_t)s->m->ncomp;
  s->st[s->cpu].servers = s->m->client_cores;
  s->st[s->cpu].hold = s->m->mpi_polling; /* cpu_served times a part by the share it gets */
  for (size_t c = 0; c < s->m->ncomp; c++) s->st[c].hold = s->m->comp[c].on_client_node;
}

int siox_cap_simulate(const siox_cap_model *m, const siox_workload *w, const struct siox_cap_sim_opts *o,
                      struct siox_cap_run *out, char *err, size_t errlen) {
  memset(out, 0, sizeof(*out));
  if (siox_wl_form(w) != SIOX_WL_TRACE) {
    snprintf(err, errlen, "the simulation runs a trace: generate one from the characterization first");
    return -EINVAL;
  }
  if (o->copies < 1 || (o->client >= 0 && (size_t)o->client >= m->ncomp)) {
    snprintf(err, errlen, "bad simulation options (copies %u, client %lld)", o->copies, (long long)o->client);
    return -EINVAL;
  }
  struct sim s = {.m = m, .w = w, .o = o, .nfiles = siox_wl_nfiles(w), .err = err, .errlen = errlen};
  int rc = -ENOMEM;
  size_t nc = m->ncomp + 1; /* the components, then the client node's cores */
  s.bytes_r = calloc(nc, sizeof(*s.bytes_r));
  s.bytes_w = calloc(nc, sizeof(*s.bytes_w));
  s.rec_ns = calloc(siox_wl_nrecs(w) ? siox_wl_nrecs(w) : 1, sizeof(*s.rec_ns));
  s.done = calloc(o->copies, sizeof(*s.done));
  s.size = calloc((size_t)o->copies * (s.nfiles ? s.nfiles : 1), sizeof(*s.size));
  if (!(s.st = calloc(nc, sizeof(*s.st))) || !s.bytes_r || !s.bytes_w || !s.rec_ns || !s.done || !s.size) goto out;
  if (initial_sizes(&s) < 0) goto out;
  for (size_t c = 0; c < m->ncomp; c++) s.st[c].servers = siox_cap_comp_servers(m, (uint32_t)c);
  set_cpu(&s);
  s.cache.limit = m->client_cache_bytes;
  if (build_slots(&s) < 0) goto out;
  if (build_ranks(&s) < 0 || build_sync(&s) < 0) goto out;
  if ((rc = run(&s)) == 0) rc = collect(&s, out);
  if (rc == -ENOMEM) snprintf(err, errlen, "out of memory");
out:
  if (rc) siox_cap_run_free(out);
  cap_evq_free(&s.q);
  for (size_t c = 0; s.st && c < nc; c++) cap_station_free(&s.st[c]);
  free(s.st);
  free(s.bytes_r);
  free(s.bytes_w);
  free(s.rec_ns);
  free(s.done);
  free(s.size);
  for (uint32_t i = 0; s.r && i < s.nr; i++) free(s.r[i].recs), free(s.r[i].gap), free(s.r[i].view);
  cap_cache_free(&s.cache);
  for (size_t i = 0; s.slots && i < s.nfiles * SIOX_CAP_NCLASS; i++) cap_slots_free(&s.slots[i]);
  free(s.slots);
  free(s.r);
  for (size_t g = 0; s.sync && g < (size_t)o->copies * (1 + s.nfiles); g++) free(s.sync[g].who);
  free(s.sync);
  return rc;
}

void siox_cap_run_free(struct siox_cap_run *r) {
  free(r->rank_io_ns);
  free(r->job_io_ns);
  free(r->stat);
  free(r->rec_ns);
  memset(r, 0, sizeof(*r));
}
