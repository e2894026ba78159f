/*
 * libsiox-capacity without a database: GlusterFS's DHT hash against values
 * computed by GlusterFS's own gf_dm_hashfn, the placement rule, the least
 * squares fit on synthetic samples, the event core on an M/D/1 queue (mean
 * wait in closed form), the simulation on workloads whose times are known
 * exactly, and the what-if scenarios' directions and errors.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cap_des.h"
#include "siox_capacity.h"

/* ---- placement ---------------------------------------------------------- */

/* Reference values: libglusterfs/src/hashfn.c (GlusterFS 10) compiled as is
 * and run on these strings. */
static void test_dm_hash_matches_glusterfs(void **state) {
  (void)state;
  static const struct {
    const char *s;
    uint32_t h;
  } ref[] = {{"/", 0x8619bd58u},
             {"f0-data", 0xbd0a202au},
             {"data", 0x9e8496dfu},
             {"a", 0x3a17e4e6u},
             {"abcd", 0xd89627f6u},
             {"0123456789abcdef", 0x6ecb5adau},
             {"0123456789abcdefXYZ", 0x273cae26u},
             {"file-with-a-rather-long-name.h5", 0xf9bc18e9u},
             {"/replay/copy1", 0xfb1f249bu},
             {"caf\xc3\xa9", 0x9e089967u},
             {"", 0x884774a2u}};
  for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++) {
    uint32_t h = siox_cap_dm_hash(ref[i].s, strlen(ref[i].s));
    if (h != ref[i].h) fail_msg("hash('%s') = 0x%08x, GlusterFS says 0x%08x", ref[i].s, h, ref[i].h);
  }
}

static void test_dht_ranges(void **state) {
  (void)state;
  /* "/" hashes to 0x8619bd58: 4 bricks start at 0x...58 % 4 = 0; "f0-data"
   * (0xbd0a202a) is in range 2 of 0x3fffffff each -> brick 2. */
  assert_int_equal(siox_cap_dht_place("/", "f0-data", 4), 2);
  /* 3 bricks: start 0x8619bd58 % 3 = 1, range 0x55555555: 0xbd0a202a is
   * range 2 -> (1 + 2) % 3 = 0. */
  assert_int_equal(siox_cap_dht_place("/", "f0-data", 3), 0);
  assert_int_equal(siox_cap_dht_place("/", "anything", 1), 0);
  assert_int_equal(siox_cap_dht_place("/", "x", 0), -22);
  /* The mount point is stripped and the directory taken from the path. */
  assert_int_equal(siox_cap_dht_place_path("/mnt/vol/f0-data", "/mnt/vol/", 4), 2);
  assert_int_equal(siox_cap_dht_place_path("/mnt/vol/replay/copy1/f0-data", "/mnt/vol", 4),
                   siox_cap_dht_place("/replay/copy1", "f0-data", 4));
  /* rsync's temporary .NAME.XXXXXX lands where NAME will. */
  assert_int_equal(siox_cap_dht_place("/d", ".report.txt.a8Kd3Q", 5), siox_cap_dht_place("/d", "report.txt", 5));
  /* Spread: 4000 names over 4 bricks, each gets a fair share. */
  int count[4] = {0};
  for (int i = 0; i < 4000; i++) {
    char name[32];
    snprintf(name, sizeof name, "rank%d.dat", i);
    count[siox_cap_dht_place("/out", name, 4)]++;
  }
  for (int b = 0; b < 4; b++) assert_in_range(count[b], 800, 1200);
}

/* ---- fitting --------------------------------------------------------------- */

static uint64_t rng = 88172645463325252ull;
static double uniform(void) { /* xorshift64: deterministic */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

static void test_fit_line(void **state) {
  (void)state;
  double x[400], y[400];
  struct siox_cap_fit f;
  for (int i = 0; i < 400; i++) x[i] = 4096.0 * (1 + i % 32), y[i] = 50000 + 2.5 * x[i];
  assert_int_equal(siox_cap_fit_line(x, y, 400, &f), 0);
  assert_true(fabs(f.a_ns - 50000) < 1e-3 && fabs(f.b_ns - 2.5) < 1e-9 && f.se_a < 1e-3);
  /* Noise of sd 10 us: the truth within 3 standard errors, the errors the
   * size theory gives for this design (se(b) = sd / sqrt(Sxx)). */
  double sxx = 0, mx = 0;
  for (int i = 0; i < 400; i++) mx += x[i] / 400;
  for (int i = 0; i < 400; i++) {
    double z = 0;
    for (int k = 0; k < 12; k++) z += uniform();
    y[i] = 50000 + 2.5 * x[i] + 10000 * (z - 6);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  assert_int_equal(siox_cap_fit_line(x, y, 400, &f), 0);
  assert_true(fabs(f.b_ns - 2.5) < 3 * f.se_b);
  assert_true(fabs(f.a_ns - 50000) < 3 * f.se_a);
  assert_true(fabs(f.sd_ns - 10000) < 1500);
  assert_true(fabs(f.se_b - 10000 / sqrt(sxx)) < 0.15 * f.se_b);
  /* One size: a mean, no slope; a negative slope is noise. */
  double z0[3] = {0, 0, 0}, t0[3] = {10, 20, 30};
  assert_int_equal(siox_cap_fit_line(z0, t0, 3, &f), 0);
  assert_true(f.b_ns == 0 && fabs(f.a_ns - 20) < 1e-9 && f.se_a > 0);
  double xs[3] = {1000, 2000, 3000}, ts[3] = {30, 20, 10};
  assert_int_equal(siox_cap_fit_line(xs, ts, 3, &f), 0);
  assert_true(f.b_ns == 0 && fabs(f.a_ns - 20) < 1e-9);
  assert_int_equal(siox_cap_fit_line(xs, ts, 0, &f), -22);
}

static void test_model_fit(void **state) {
  (void)state;
  siox_cap_model *m = siox_cap_model_new();
  int64_t b = siox_cap_model_comp(m, "h:/b1", SIOX_CAP_BRICK), c = siox_cap_model_comp(m, "host", SIOX_CAP_CLIENT);
  struct siox_cap_sample s[300];
  size_t n = 0;
  /* Brick writes 1 ms + 10 ns/B, two at a time (pairs overlap); client 50 us. */
  for (int i = 0; i < 100; i++) {
    uint64_t bytes = 65536u * (1 + i % 2);
    int64_t t = 1000000 + 10 * (int64_t)bytes;
    s[n++] = (struct siox_cap_sample){(uint32_t)b, SIOX_CAP_WRITE, bytes, (int64_t)(i / 2) * 10000000, t, 0, 0, 0};
    s[n++] = (struct siox_cap_sample){(uint32_t)c, SIOX_CAP_WRITE, bytes, (int64_t)i * 10000000, 50000, 0, 0, 0};
  }
  s[n++] = (struct siox_cap_sample){(uint32_t)b, SIOX_CAP_LOOKUP, 0, 5000000000, 300000, 0, 0, 0};
  assert_int_equal(siox_cap_model_fit(m, s, n), 0);
  const struct siox_cap_fit *w = &m->comp[b].fit[SIOX_CAP_WRITE];
  assert_int_equal(w->n, 100);
  assert_true(fabs(w->a_ns - 1e6) < 1 && fabs(w->b_ns - 10) < 1e-6);
  assert_int_equal(m->comp[b].servers, 2);
  assert_int_equal(m->comp[c].servers, 1);
  assert_int_equal(m->chunk, 131072);
  assert_int_equal(m->comp[b].fit[SIOX_CAP_LOOKUP].n, 1);
  assert_int_equal(m->comp[b].fit[SIOX_CAP_READ].n, 0);
  /* Capacity: 2 servers x 128 KiB per (1 ms + 1.31 ms). */
  double cap = siox_cap_comp_capacity(m, (uint32_t)b, SIOX_CAP_WRITE, NULL, NULL);
  assert_true(fabs(cap - 2 * 131072 / ((1e6 + 10 * 131072) * 1e-9)) < 1);
  struct siox_cap_sample bad = {7, SIOX_CAP_READ, 0, 0, 1, 0, 0, 0};
  assert_int_equal(siox_cap_model_fit(m, &bad, 1), -22);
  siox_cap_model_free(m);
}

/* ---- the event core: M/D/1 -------------------------------------------- */

static void test_md1_mean_wait(void **state) {
  (void)state;
  const double D = 1000, rho = 0.7, lambda = rho / D;
  const uint32_t N = 200000;
  struct cap_evq q = {0};
  struct cap_station st = {.servers = 1};
  enum { ARRIVAL = 9 };
  assert_int_equal(cap_evq_push(&q, 0, ARRIVAL, 0, 0), 0);
  struct cap_event e;
  while (cap_evq_pop(&q, &e)) {
    if (e.kind == ARRIVAL) {
      assert_int_equal(cap_station_arrive(&q, &st, 0, e.who, D), 0);
      if (e.who + 1 < N) assert_int_equal(cap_evq_push(&q, q.now - log(1 - uniform()) / lambda, ARRIVAL, e.who + 1, 0), 0);
    } else {
      assert_int_equal(cap_station_depart(&q, &st, 0), 0);
    }
  }
  double wq = st.wait_ns / (double)st.requests, want = rho * D / (2 * (1 - rho)); /* Pollaczek-Khinchine */
  assert_int_equal(st.requests, N);
  if (fabs(wq - want) > 0.05 * want) fail_msg("M/D/1 mean wait %.1f ns, closed form %.1f ns", wq, want);
  /* Utilization: busy time over the span is rho. */
  assert_true(fabs(st.busy_ns / q.now - rho) < 0.02);
  cap_station_free(&st);
  cap_evq_free(&q);
}

/* ---- the simulation on workloads with known answers ---------------------- */

/* A model of bricks b1..bn, each: writes 1 ms + 1 ns/B, lookup/open/flush
 * 100 us, one server; a client channel of 10 us per request. */
static siox_cap_model *toy_model(int bricks, int slow) {
  siox_cap_model *m = siox_cap_model_new();
  for (int i = 1; i <= bricks; i++) {
    char name[32];
    snprintf(name, sizeof name, "h:/b%d", i);
    int64_t k = siox_cap_model_comp(m, name, SIOX_CAP_BRICK);
    double f = i == slow ? 10 : 1;
    m->comp[k].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){.n = 10, .a_ns = 1e6 * f, .b_ns = 1 * f};
    m->comp[k].fit[SIOX_CAP_READ] = (struct siox_cap_fit){.n = 10, .a_ns = 1e6 * f, .b_ns = 1 * f};
    for (int c = SIOX_CAP_LOOKUP; c <= SIOX_CAP_CLOSE; c++)
      m->comp[k].fit[c] = (struct siox_cap_fit){.n = 10, .a_ns = 1e5};
  }
  int64_t c = siox_cap_model_comp(m, "client", SIOX_CAP_CLIENT);
  for (int k = 0; k < SIOX_CAP_NCLASS; k++) m->comp[c].fit[k] = (struct siox_cap_fit){.n = 10, .a_ns = 1e4};
  m->chunk = 131072;
  return m;
}

/* ranks ranks, each writing `writes` x 128 KiB to its own file (rank r:
 * file "out/rR"), after a gap of 1 ms, with a barrier at the end. */
static siox_workload *fpp(uint32_t ranks, int writes, int barrier) {
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", ranks);
  for (uint32_t r = 0; r < ranks; r++) {
    char name[32];
    snprintf(name, sizeof name, "/out/r%u", r);
    siox_wl_add_file(w, name);
  }
  for (uint32_t r = 0; r < ranks; r++) {
    for (int i = 0; i < writes; i++) {
      struct siox_wl_rec rec = {r, SIOX_WL_WRITE, r, (uint64_t)i * 131072, 131072, 1000000, 0, 0};
      assert_int_equal(siox_wl_add_rec(w, &rec), 0);
    }
    if (barrier) {
      struct siox_wl_rec b = {r, SIOX_WL_BARRIER, SIOX_WL_NOFILE, 0, 0, 0, 0, 0};
      assert_int_equal(siox_wl_add_rec(w, &b), 0);
    }
  }
  return w;
}

static void test_sim_exact(void **state) {
  (void)state;
  siox_cap_model *m = toy_model(2, 0);
  char err[256] = "";
  /* One rank, 5 writes on brick 0: each 10 us + (1 ms + 131072 ns); gaps
   * add to the span, not to the I/O time. */
  siox_workload *w = fpp(1, 5, 0);
  int32_t brick_of[2] = {0, 0};
  struct siox_cap_sim_opts o = {.copies = 1, .brick_of = brick_of, .client = 2};
  struct siox_cap_run run;
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  double op = 1e4 + 1e6 + 131072;
  assert_int_equal(run.job_io_ns[0], (int64_t)(5 * op));
  assert_int_equal(run.makespan_ns, (int64_t)(5 * op + 5 * 1e6));
  assert_int_equal(run.stat[0].requests, 5);
  assert_true(fabs(run.stat[0].utilization - 5 * (1e6 + 131072) / (5 * op + 5e6)) < 1e-9);
  siox_cap_run_free(&run);
  siox_wl_free(w);
  /* Two ranks, same brick, one server, no gaps: D/D/1 in lockstep. The
   * second rank's request waits for the first's at the brick each time;
   * the channel (10 us) is shorter than the brick, so the brick sets the
   * pace: the pair finishes 2 writes' brick time apart per round. */
  w = fpp(2, 4, 1);
  int32_t same[2] = {0, 0};
  o.brick_of = same;
  o.no_gaps = 1;
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  double svc = 1e6 + 131072;
  /* Rank 0 starts first (ties by order); both are at the brick at 10 us;
   * writes complete at 10 us + k * svc for k = 1..8 alternately. */
  assert_int_equal(run.makespan_ns, (int64_t)(1e4 + 8 * svc));
  assert_int_equal(run.stat[0].requests, 8);
  assert_true(run.stat[0].wait_ns > 0);
  assert_true(run.stat[1].requests == 0);
  /* Each rank's I/O time includes the barrier's wait: both end together. */
  assert_int_equal(run.job_io_ns[0], run.makespan_ns);
  siox_cap_run_free(&run);
  /* On two bricks they do not wait for each other. */
  int32_t spread[2] = {0, 1};
  o.brick_of = spread;
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  assert_true(run.stat[0].wait_ns == 0 && run.stat[1].wait_ns == 0);
  assert_int_equal(run.makespan_ns, (int64_t)(4 * (1e4 + svc) + 1e4));
  siox_cap_run_free(&run);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

static void test_sim_deadlock_and_charact(void **state) {
  (void)state;
  siox_cap_model *m = toy_model(1, 0);
  char err[256] = "";
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 2);
  struct siox_wl_rec b = {0, SIOX_WL_BARRIER, SIOX_WL_NOFILE, 0, 0, 0, 0, 0}; /* rank 1 never comes */
  siox_wl_add_rec(w, &b);
  struct siox_cap_sim_opts o = {.copies = 1, .client = -1};
  struct siox_cap_run run;
  /* Nothing else can happen: the barrier is released and counted. */
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  assert_int_equal(run.unmatched_syncs, 1);
  siox_cap_run_free(&run);
  siox_wl_free(w);
  /* A close attributed to another file on one rank (ROMIO's deferred open)
   * does not deadlock: opens and closes are not synchronization points. */
  w = siox_wl_new(SIOX_WL_TRACE, "t", 2);
  siox_wl_add_file(w, "/a");
  siox_wl_add_file(w, "/b");
  for (uint32_t r = 0; r < 2; r++) {
    struct siox_wl_rec o1 = {r, SIOX_WL_MPI_OPEN, 0, 0, 0, 0, 0, 0}, o2 = {r, SIOX_WL_MPI_OPEN, 1, 0, 0, 0, 0, 0};
    struct siox_wl_rec c = {r, SIOX_WL_MPI_CLOSE, r, 0, 0, 0, 0, 0}, bar = {r, SIOX_WL_BARRIER, SIOX_WL_NOFILE, 0, 0, 0, 0, 0};
    siox_wl_add_rec(w, &o1);
    siox_wl_add_rec(w, &o2);
    siox_wl_add_rec(w, &c);
    siox_wl_add_rec(w, &bar);
  }
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), 0);
  assert_int_equal(run.unmatched_syncs, 0);
  siox_cap_run_free(&run);
  siox_wl_free(w);
  w = siox_wl_new(SIOX_WL_CHARACTERIZATION, "t", 1);
  assert_int_equal(siox_cap_simulate(m, w, &o, &run, err, sizeof err), -22);
  assert_non_null(strstr(err, "trace"));
  siox_wl_free(w);
  siox_cap_model_free(m);
}

/* The residual: what a recorded operation took beyond the model stays with
 * it, and a scenario changes only the model's part. */
static void test_residual(void **state) {
  (void)state;
  siox_cap_model *m = toy_model(1, 1); /* one brick, 10x slow */
  siox_workload *w = siox_wl_new(SIOX_WL_TRACE, "t", 1);
  siox_wl_add_file(w, "/out/r0");
  for (int i = 0; i < 5; i++) {
    struct siox_wl_rec rec = {0, SIOX_WL_WRITE, 0, (uint64_t)i * 131072, 131072, 0, 20000000, 0};
    assert_int_equal(siox_wl_add_rec(w, &rec), 0);
  }
  char err[256] = "", dev[] = "device=all:100:1000";
  struct siox_cap_predict_opts po = {.residual = 1};
  struct siox_cap_answer asis, fast;
  assert_int_equal(siox_cap_predict(m, w, NULL, 0, &po, &asis, err, sizeof err), 0);
  assert_int_equal(asis.run.job_io_ns[0], 5 * 20000000); /* as recorded */
  struct siox_cap_scenario s;
  assert_int_equal(siox_cap_scenario_parse(dev, &s, err, sizeof err), 0);
  assert_int_equal(siox_cap_predict(m, w, &s, 1, &po, &fast, err, sizeof err), 0);
  int64_t local = 20000000 - (10000 + 10 * (1000000 + 131072)), brick = 100000 + 131072;
  assert_int_equal(fast.run.job_io_ns[0], 5 * (local + 10000 + brick));
  siox_cap_answer_free(&asis);
  siox_cap_answer_free(&fast);
  po.residual = 0; /* without it: the model alone */
  assert_int_equal(siox_cap_predict(m, w, NULL, 0, &po, &asis, err, sizeof err), 0);
  assert_int_equal(asis.run.job_io_ns[0], 5 * (10000 + 10 * (1000000 + 131072)));
  siox_cap_answer_free(&asis);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

/* ---- what-if ---------------------------------------------------------------- */

/* A brick that never served writes in the window (b2: lookups only), given
 * files by DHT: its writes cost the healthy brick's line (b1's), not nothing. */
static void test_unserved_brick(void **state) {
  (void)state;
  siox_cap_model *m = toy_model(2, 0);
  m->comp[1].fit[SIOX_CAP_WRITE] = (struct siox_cap_fit){0};
  siox_workload *w = fpp(8, 6, 1);
  char err[256] = "";
  struct siox_cap_predict_opts po = {.no_gaps = 1};
  struct siox_cap_answer a;
  uint32_t on2 = 0;
  for (uint32_t f = 0; f < 8; f++) on2 += siox_cap_dht_place_path(siox_wl_file_name(w, f), NULL, 2) == 1;
  assert_true(on2 > 0 && on2 < 8);
  assert_int_equal(siox_cap_predict(m, w, NULL, 0, &po, &a, err, sizeof err), 0);
  assert_int_equal(a.run.stat[1].bytes_written, (uint64_t)on2 * 6 * 131072);
  /* 6 writes of 128 KiB per file at b1's 1 ms + 1 ns/B, one server */
  double want = on2 * 6 * (1e6 + 131072.0);
  assert_true(fabs(a.run.stat[1].demand_ns - want) < 1e-6 * want);
  assert_true(m->comp[1].fit[SIOX_CAP_WRITE].n == 0); /* the model given is not changed */
  siox_cap_answer_free(&a);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

static void test_scenarios(void **state) {
  (void)state;
  siox_cap_model *m = toy_model(4, 3);
  /* 8 ranks, file per process, placed by DHT on "/out". */
  siox_workload *w = fpp(8, 6, 1);
  char err[256] = "", spec[64];
  struct siox_cap_scenario s, sv[4];
  struct siox_cap_predict_opts po = {.no_gaps = 1};
  struct siox_cap_answer asis, healed, half, loaded;
  strcpy(spec, "load=1");
  assert_int_equal(siox_cap_scenario_parse(spec, &s, err, sizeof err), 0);
  assert_int_equal(siox_cap_predict(m, w, &s, 1, &po, &asis, err, sizeof err), 0);
  /* The slow brick (b3) is the bottleneck when it holds a file. */
  uint32_t used3 = 0;
  for (uint32_t f = 0; f < 8; f++)
    used3 += siox_cap_dht_place_path(siox_wl_file_name(w, f), NULL, 4) == 2;
  char heal[] = "heal=h:/b3";
  assert_int_equal(siox_cap_scenario_parse(heal, &s, err, sizeof err), 0);
  assert_int_equal(siox_cap_predict(m, w, &s, 1, &po, &healed, err, sizeof err), 0);
  if (used3) {
    assert_true(healed.run.job_io_ns[0] < asis.run.job_io_ns[0]);
    assert_string_equal(asis.model->comp[asis.saturates_first].name, "h:/b3");
  } else {
    assert_int_equal(healed.run.job_io_ns[0], asis.run.job_io_ns[0]);
  }
  assert_true(healed.model->comp[2].synthetic);
  /* Half the bricks (the slow one healed first, so only the count changes)
   * never gives more throughput; composed scenarios apply in order. */
  char two[] = "heal=h:/b3+bricks=2", four[] = "heal=h:/b3+bricks=4";
  struct siox_cap_answer full;
  assert_int_equal(siox_cap_scenarios_parse(two, sv, 4, err, sizeof err), 2);
  assert_int_equal(sv[1].what, SIOX_CAP_BRICKS);
  assert_int_equal(siox_cap_predict(m, w, sv, 2, &po, &half, err, sizeof err), 0);
  assert_int_equal(siox_cap_scenarios_parse(four, sv, 4, err, sizeof err), 2);
  assert_int_equal(siox_cap_predict(m, w, sv, 2, &po, &full, err, sizeof err), 0);
  assert_true(half.run.makespan_ns >= full.run.makespan_ns);
  /* Bytes per brick: every byte on the brick DHT gives its file. */
  uint64_t want[4] = {0}, got = 0;
  for (uint32_t f = 0; f < 8; f++) want[siox_cap_dht_place_path(siox_wl_file_name(w, f), NULL, 4)] += 6 * 131072;
  for (int b = 0; b < 4; b++) assert_int_equal(full.run.stat[b].bytes_written, want[b]), got += want[b];
  assert_int_equal(got, 8 * 6 * 131072);
  /* A replay's files are DIR/f<ID>-<name>, placed by DHT. */
  struct siox_cap_predict_opts rp = {.no_gaps = 1, .mount = "/mnt", .replay_dir = "/mnt/replay"};
  struct siox_cap_answer rep;
  assert_int_equal(siox_cap_predict(m, w, NULL, 0, &rp, &rep, err, sizeof err), 0);
  memset(want, 0, sizeof want);
  for (uint32_t f = 0; f < 8; f++) {
    char name[64];
    snprintf(name, sizeof name, "f%u-r%u", f, f);
    want[siox_cap_dht_place("/replay", name, 4)] += 6 * 131072;
  }
  for (int b = 0; b < 4; b++) assert_int_equal(rep.run.stat[b].bytes_written, want[b]);
  siox_cap_answer_free(&rep);
  /* More bricks than measured: healthy new ones. */
  char six[] = "bricks=6";
  struct siox_cap_answer more;
  assert_int_equal(siox_cap_scenario_parse(six, &s, err, sizeof err), 0);
  assert_int_equal(siox_cap_predict(m, w, &s, 1, &po, &more, err, sizeof err), 0);
  assert_true(siox_cap_model_find(more.model, "new-brick6") >= 0);
  /* Load x 3: three copies; each job at least as slow as alone, and the
   * saturation load is the span of one copy over the busiest demand. */
  char three[] = "3";
  assert_int_equal(siox_cap_scenario_parse(three, &s, err, sizeof err), 0);
  assert_int_equal(siox_cap_predict(m, w, &s, 1, &po, &loaded, err, sizeof err), 0);
  assert_int_equal(loaded.run.copies, 3);
  for (int c = 0; c < 3; c++) assert_true(loaded.run.job_io_ns[c] >= asis.run.job_io_ns[0]);
  double d = loaded.run.stat[loaded.saturates_first].demand_ns;
  assert_true(fabs(loaded.saturates_at - (double)asis.run.makespan_ns / d) < 1e-6 * loaded.saturates_at);
  /* A device: 100 us + 500 MB/s on every brick. */
  char dev[] = "device=all:100:500";
  struct siox_cap_answer fast;
  assert_int_equal(siox_cap_scenario_parse(dev, &s, err, sizeof err), 0);
  assert_true(s.name == NULL && s.latency_ns == 1e5 && s.bandwidth_bps == 5e8);
  assert_int_equal(siox_cap_predict(m, w, &s, 1, &po, &fast, err, sizeof err), 0);
  assert_true(fast.run.job_io_ns[0] < asis.run.job_io_ns[0]);
  char dev1[] = "device=h:/b2:50:1000";
  assert_int_equal(siox_cap_scenario_parse(dev1, &s, err, sizeof err), 0);
  assert_string_equal(s.name, "h:/b2");
  /* An unknown brick, bad specs. */
  char unknown[] = "heal=h:/b9";
  struct siox_cap_answer none;
  assert_int_equal(siox_cap_scenario_parse(unknown, &s, err, sizeof err), 0);
  assert_int_equal(siox_cap_predict(m, w, &s, 1, &po, &none, err, sizeof err), -2);
  assert_non_null(strstr(err, "no brick 'h:/b9' in the model (bricks: h:/b1 h:/b2 h:/b3 h:/b4)"));
  const char *bad[] = {"bricks=0", "load=0", "device=all:x:5", "device=all:10", "heal=", "colour=red", "2x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char b[64];
    strcpy(b, bad[i]);
    err[0] = 0;
    if (siox_cap_scenario_parse(b, &s, err, sizeof err) != -22) fail_msg("'%s' accepted", bad[i]);
    assert_true(err[0]);
  }
  struct siox_cap_answer *all[] = {&asis, &healed, &half, &full, &more, &loaded, &fast};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) siox_cap_answer_free(all[i]);
  siox_wl_free(w);
  siox_cap_model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dm_hash_matches_glusterfs), cmocka_unit_test(test_dht_ranges),
      cmocka_unit_test(test_fit_line),                  cmocka_unit_test(test_model_fit),
      cmocka_unit_test(test_md1_mean_wait),             cmocka_unit_test(test_sim_exact),
      cmocka_unit_test(test_sim_deadlock_and_charact),  cmocka_unit_test(test_scenarios), cmocka_unit_test(test_unserved_brick),
      cmocka_unit_test(test_residual),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
