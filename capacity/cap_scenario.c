/*
 * What-if scenarios on the model (siox_cap_predict in siox_capacity.h):
 * change the model as the scenario says, place the files, simulate, and
 * name the component that saturates first by the bottleneck law: with a
 * demand of D_c ns of service per copy of the workload at component c
 * (busy time / servers), k concurrent copies keep c at k * D_c / T busy,
 * T the time one copy takes alone; c reaches 100 % at k = T / D_c, and the
 * component with the largest D_c gets there first.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "siox_capacity.h"

#define MAX_BRICKS 1024

int siox_cap_scenario_parse(char *spec, struct siox_cap_scenario *s, char *err, size_t errlen) {
  memset(s, 0, sizeof(*s));
  s->label = spec;
  char *end, *eq = strchr(spec, '=');
  const char *val = eq ? eq + 1 : spec;
  size_t klen = eq ? (size_t)(eq - spec) : 0;
  if (!eq || (klen == 4 && strncmp(spec, "load", 4) == 0)) {
    unsigned long k = strtoul(val, &end, 10);
    if (*end || end == val || k < 1 || k > 4096) {
      snprintf(err, errlen, "'%s': the load is a whole number of concurrent copies, 1..4096", spec);
      return -EINVAL;
    }
    s->what = SIOX_CAP_LOAD;
    s->n = (uint32_t)k;
    return 0;
  }
  if (klen == 6 && strncmp(spec, "bricks", 6) == 0) {
    unsigned long n = strtoul(val, &end, 10);
    if (*end || end == val || n < 1 || n > MAX_BRICKS) {
      snprintf(err, errlen, "'%s': bricks=N takes a brick count, 1..%d", spec, MAX_BRICKS);
      return -EINVAL;
    }
    s->what = SIOX_CAP_BRICKS;
    s->n = (uint32_t)n;
    return 0;
  }
  if (klen == 4 && strncmp(spec, "heal", 4) == 0 && *val) {
    s->what = SIOX_CAP_HEAL;
    s->name = val;
    return 0;
  }
  if (klen == 6 && strncmp(spec, "device", 6) == 0) {
    /* BRICK:LAT_US:MBPS, the brick name itself may hold ':' (host:/dir). */
    char *c2 = strrchr(val, ':');
    char *c1 = NULL;
    if (c2) {
      *c2 = 0;
      c1 = strrchr(val, ':');
      *c2 = ':';
    }
    double lat = c1 ? strtod(c1 + 1, &end) : -1;
    int ok = c1 && end == c2 && lat >= 0;
    double bw = ok ? strtod(c2 + 1, &end) : -1;
    if (!ok || *end || end == c2 + 1 || !(bw > 0) || c1 == val) {
      snprintf(err, errlen, "'%s': device=BRICK:LATENCY_US:MBYTES_PER_S (BRICK may be all), e.g. device=all:100:500",
               spec);
      return -EINVAL;
    }
    *c1 = 0; /* the brick name ends here */
    s->what = SIOX_CAP_DEVICE;
    s->name = strcmp(val, "all") == 0 ? NULL : val;
    s->latency_ns = lat * 1e3;
    s->bandwidth_bps = bw * 1e6;
    return 0;
  }
  snprintf(err, errlen, "'%s': a scenario is bricks=N, heal=BRICK, device=BRICK:LAT_US:MBPS or load=K", spec);
  return -EINVAL;
}

int siox_cap_scenarios_parse(char *spec, struct siox_cap_scenario *s, size_t max, char *err, size_t errlen) {
  char *label = spec;
  size_t n = 0;
  for (char *save = NULL, *p = strtok_r(spec, "+", &save); p; p = strtok_r(NULL, "+", &save)) {
    if (n == max) {
      snprintf(err, errlen, "at most %zu scenarios in one", max);
      return -EINVAL;
    }
    int rc = siox_cap_scenario_parse(p, &s[n], err, errlen);
    if (rc < 0) return rc;
    n++;
  }
  if (n == 0) {
    snprintf(err, errlen, "an empty scenario");
    return -EINVAL;
  }
  s[0].label = label;
  return (int)n;
}

/* The brick named name, or -ENOENT with the list of bricks in err. */
static int64_t find_brick(const siox_cap_model *m, const char *name, char *err, size_t errlen) {
  int64_t k = siox_cap_model_find(m, name);
  if (k >= 0 && m->comp[k].kind == SIOX_CAP_BRICK) return k;
  uint32_t b[MAX_BRICKS];
  size_t n = siox_cap_model_bricks(m, b, MAX_BRICKS);
  int len = snprintf(err, errlen, "no brick '%s' in the model (bricks:", name);
  for (size_t i = 0; i < n && len > 0 && (size_t)len < errlen; i++)
    len += snprintf(err + len, errlen - (size_t)len, " %s", m->comp[b[i]].name);
  if (len > 0 && (size_t)len < errlen) snprintf(err + len, errlen - (size_t)len, "%s)", n ? "" : " none");
  return -ENOENT;
}

static uint32_t healthy_servers(const siox_cap_model *m) {
  uint32_t s[MAX_BRICKS];
  size_t k = 0;
  for (size_t i = 0; i < m->ncomp && k < MAX_BRICKS; i++)
    if (m->comp[i].kind == SIOX_CAP_BRICK && !m->comp[i].synthetic) s[k++] = m->comp[i].servers;
  if (!k) return 1;
  for (size_t i = 1; i < k; i++)
    for (size_t j = i; j > 0 && s[j] < s[j - 1]; j--) {
      uint32_t t = s[j];
      s[j] = s[j - 1];
      s[j - 1] = t;
    }
  return s[(k - 1) / 2];
}

/* 1 when every measured brick runs on the client node (the testbed): a new
 * brick is then taken to run there too, sharing its cores. */
static int bricks_on_client_node(const siox_cap_model *m) {
  int any = 0;
  for (size_t i = 0; i < m->ncomp; i++) {
    if (m->comp[i].kind != SIOX_CAP_BRICK || m->comp[i].synthetic) continue;
    if (!m->comp[i].on_client_node) return 0;
    any = 1;
  }
  return any;
}

/* Gives component c the healthy bricks' service times (from ref). */
static void make_healthy(siox_cap_model *mm, const siox_cap_model *ref, uint32_t c) {
  for (int cls = 0; cls < SIOX_CAP_NCLASS; cls++) siox_cap_model_healthy(ref, cls, &mm->comp[c].fit[cls]);
  /* its reads' kernel part: the healthy read reference brick's (README "The read-back's kernel part") */
  int64_t h = siox_cap_model_healthy_read_kernel(ref);
  mm->comp[c].kernel_fit[SIOX_CAP_READ] = h >= 0 ? ref->comp[h].kernel_fit[SIOX_CAP_READ] : (struct siox_cap_fit){0};
  mm->comp[c].kernel_call_ns[SIOX_CAP_READ] = h >= 0 ? ref->comp[h].kernel_call_ns[SIOX_CAP_READ] : 0;
  mm->comp[c].servers = healthy_servers(ref);
  mm->comp[c].synthetic = 1;
  mm->comp[c].declared_bps = 0;
}

static void make_device(siox_cap_model *mm, uint32_t c, double lat_ns, double bps) {
  for (int cls = 0; cls < SIOX_CAP_NCLASS; cls++) {
    struct siox_cap_fit *f = &mm->comp[c].fit[cls];
    int data = cls == SIOX_CAP_READ || cls == SIOX_CAP_WRITE;
    *f = (struct siox_cap_fit){.n = 1, .a_ns = lat_ns, .b_ns = data ? 1e9 / bps : 0};
  }
  mm->comp[c].synthetic = 1;
  mm->comp[c].declared_bps = bps;
}

/* The volume being predicted: its bricks in volfile order, and whether the
 * set differs from the recorded one (then every file is placed by DHT). */
struct volume {
  uint32_t bricks[MAX_BRICKS];
  size_t nb;
  int moved;
  uint32_t copies;
};

/* Applies s to mm (a clone of m) and to the volume v. */
static int apply(siox_cap_model *mm, const siox_cap_model *m, const struct siox_cap_scenario *s, struct volume *v,
                 char *err, size_t errlen) {
  if (s->what == SIOX_CAP_HEAL || (s->what == SIOX_CAP_DEVICE && s->name)) {
    int64_t k = find_brick(mm, s->name, err, errlen);
    if (k < 0) return (int)k;
    if (s->what == SIOX_CAP_HEAL) make_healthy(mm, m, (uint32_t)k);
    else make_device(mm, (uint32_t)k, s->latency_ns, s->bandwidth_bps);
  } else if (s->what == SIOX_CAP_DEVICE) {
    for (size_t i = 0; i < v->nb; i++) make_device(mm, v->bricks[i], s->latency_ns, s->bandwidth_bps);
  } else if (s->what == SIOX_CAP_BRICKS) {
    if (v->nb == 0) {
      snprintf(err, errlen, "the model has no brick to take as a pattern for bricks=%u", s->n);
      return -ENOENT;
    }
    for (size_t i = v->nb; i < s->n; i++) { /* new bricks: healthy ones */
      char name[64];
      snprintf(name, sizeof name, "new-brick%zu", i + 1);
      int64_t k = siox_cap_model_comp(mm, name, SIOX_CAP_BRICK);
      if (k < 0) return (int)k;
      make_healthy(mm, m, (uint32_t)k);
      mm->comp[k].on_client_node = bricks_on_client_node(m);
      v->bricks[i] = (uint32_t)k;
    }
    v->moved |= s->n != v->nb;
    v->nb = s->n; /* fewer: the last ones in volfile order leave */
  } else if (s->what == SIOX_CAP_LOAD) {
    v->copies *= s->n;
  }
  return 0;
}

/* The brick of each copy's file: recorded, else by DHT (a replay's files
 * are DIR/f<ID>-<base name>, as siox-replay names them). */
static int place(const siox_cap_model *mm, const siox_workload *w, const struct volume *v,
                 const struct siox_cap_predict_opts *o, int32_t *brick_of) {
  size_t nf = siox_wl_nfiles(w);
  for (size_t f = 0; f < nf; f++) {
    const char *name = siox_wl_file_name(w, (uint32_t)f);
    char path[4096];
    if (o->replay_dir) {
      const char *base = strrchr(name, '/');
      base = base ? base + 1 : name;
      snprintf(path, sizeof path, "%s/f%zu-%s", o->replay_dir, f, *base ? base : "file");
      name = path;
    }
    int64_t b = v->moved || o->replay_dir ? -1 : siox_cap_model_placed(mm, name);
    if (b < 0 && v->nb) {
      int k = siox_cap_dht_place_path(name, o->mount, (uint32_t)v->nb);
      if (k < 0) return k;
      b = v->bricks[k];
    }
    /* Copies keep the job's placement: k copies of the job load the same bricks. */
    for (uint32_t c = 0; c < v->copies; c++) brick_of[(size_t)c * nf + f] = (int32_t)b;
  }
  return 0;
}

/* A brick of the predicted volume that never served reads or writes in the
 * window (a 2-brick run's idle brick, asked for under bricks=4) would serve
 * them free in the simulation (a class it never served is no stage): it
 * gets the healthy bricks' line for that class instead, as a new brick
 * does (README "A brick that never served a class"). */
static void price_unserved(siox_cap_model *mm, const siox_cap_model *m, const struct volume *v) {
  static const int data[] = {SIOX_CAP_READ, SIOX_CAP_WRITE};
  for (size_t i = 0; i < v->nb; i++) {
    struct siox_cap_comp *c = &mm->comp[v->bricks[i]];
    if (c->synthetic) continue;
    for (size_t k = 0; k < sizeof data / sizeof data[0]; k++)
      if (!c->fit[data[k]].n) siox_cap_model_healthy(m, data[k], &c->fit[data[k]]);
  }
}

static int sim(const siox_cap_model *mm, const siox_workload *w, const int32_t *brick_of, uint32_t copies,
               int no_gaps, const int64_t *local, struct siox_cap_run *run, char *err, size_t errlen) {
  struct siox_cap_sim_opts o = {.copies = copies, .brick_of = brick_of, .client = siox_cap_model_main_client(mm), .no_gaps = no_gaps,
                                .local_ns = local};
  return siox_cap_simulate(mm, w, &o, run, err, errlen);
}

/* The residual: per operation, its recorded time minus what the model
 * gives it on the recorded system (>= 0; barriers none: their time is
 * waiting, which the simulation makes itself). NULL when not asked. */
static int residual(const siox_cap_model *m, const siox_workload *w, const struct siox_cap_predict_opts *o,
                    int64_t **out, char *err, size_t errlen) {
  *out = NULL;
  if (!o->residual) return 0;
  struct volume *v = calloc(1, sizeof(*v));
  int32_t *brick_of = calloc(siox_wl_nfiles(w) ? siox_wl_nfiles(w) : 1, sizeof(*brick_of));
  int64_t *local = calloc(siox_wl_nrecs(w) ? siox_wl_nrecs(w) : 1, sizeof(*local));
  struct siox_cap_predict_opts own = {.mount = o->mount, .no_gaps = o->no_gaps};
  struct siox_cap_run run = {0};
  int rc = -ENOMEM;
  if (!v || !brick_of || !local) goto out;
  v->nb = siox_cap_model_bricks(m, v->bricks, MAX_BRICKS);
  v->copies = 1;
  if ((rc = place(m, w, v, &own, brick_of)) < 0 || (rc = sim(m, w, brick_of, 1, o->no_gaps, NULL, &run, err, errlen)) < 0)
    goto out;
  for (size_t i = 0; i < siox_wl_nrecs(w); i++) {
    const struct siox_wl_rec *r = siox_wl_rec(w, i);
    int64_t d = r->op == SIOX_WL_BARRIER ? 0 : r->dur_ns - run.rec_ns[i];
    local[i] = d > 0 ? d : 0;
  }
  *out = local;
  local = NULL;
out:
  siox_cap_run_free(&run);
  free(v);
  free(brick_of);
  free(local);
  return rc;
}

int siox_cap_predict(const siox_cap_model *m, const siox_workload *w, const struct siox_cap_scenario *s, size_t ns,
                     const struct siox_cap_predict_opts *o, struct siox_cap_answer *out, char *err, size_t errlen) {
  memset(out, 0, sizeof(*out));
  if (errlen) err[0] = 0;
  out->saturates_first = -1;
  snprintf(out->label, sizeof out->label, "%s", ns && s[0].label ? s[0].label : "as-is");
  struct volume *v = calloc(1, sizeof(*v));
  siox_cap_model *mm = siox_cap_model_clone(m);
  int32_t *brick_of = NULL;
  struct siox_cap_run one = {0};
  int64_t *local = NULL;
  int rc = -ENOMEM;
  if (!v || !mm) goto fail;
  if ((rc = residual(m, w, o, &local, err, errlen)) < 0) goto fail;
  rc = -ENOMEM;
  v->nb = siox_cap_model_bricks(mm, v->bricks, MAX_BRICKS);
  v->copies = 1;
  for (size_t i = 0; i < ns; i++)
    if ((rc = apply(mm, m, &s[i], v, err, errlen)) < 0) goto fail;
  rc = -ENOMEM;
  if (!(brick_of = calloc((size_t)v->copies * (siox_wl_nfiles(w) ? siox_wl_nfiles(w) : 1), sizeof(*brick_of))))
    goto fail;
  if ((rc = place(mm, w, v, o, brick_of)) < 0) goto fail;
  price_unserved(mm, m, v);
  if ((rc = sim(mm, w, brick_of, v->copies, o->no_gaps, local, &out->run, err, errlen)) < 0) goto fail;
  /* The time of one copy alone, for the saturation load. */
  int64_t t1 = out->run.makespan_ns;
  if (v->copies > 1) {
    if ((rc = sim(mm, w, brick_of, 1, o->no_gaps, local, &one, err, errlen)) < 0) goto fail;
    t1 = one.makespan_ns;
    siox_cap_run_free(&one);
  }
  double most = 0;
  for (size_t c = 0; c < out->run.ncomp; c++)
    if (out->run.stat[c].demand_ns > most) most = out->run.stat[c].demand_ns, out->saturates_first = (int64_t)c;
  out->saturates_at = most > 0 ? (double)t1 / most : 0;
  out->model = mm;
  free(brick_of);
  free(v);
  free(local);
  return 0;
fail:
  if (rc == -ENOMEM && !err[0]) snprintf(err, errlen, "out of memory");
  siox_cap_model_free(mm);
  free(brick_of);
  free(v);
  free(local);
  siox_cap_run_free(&out->run);
  return rc;
}

void siox_cap_answer_free(struct siox_cap_answer *a) {
  siox_cap_run_free(&a->run);
  siox_cap_model_free(a->model);
  a->model = NULL;
}
