/*
 * The knowledge-base analysis thread: every few seconds it asks libsiox-kb
 * to analyse the jobs that ended (quiet --analyze-idle seconds) or have run
 * --analyze-every seconds since their last analysis, which also folds the
 * baselines and capacity aggregates. It has its own libpq connection and
 * never touches the ingest thread's state, so a long analysis delays no
 * batch (PostgreSQL's row locks are the only contact).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <siox/siox_kb.h>
#include <siox/siox_wh.h>

#include "server.h"

struct siox_kb_thread {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
  PGcancel *cancel; /* under mu: the connection's cancel handle, for stop */
  char *conninfo;
  int idle_s, every_s;
};

/* Half the idle time (at most 5 s): a job is analysed at most 1.5 idle
 * periods after its last activity. */
static int period_s(const struct siox_kb_thread *k) {
  int p = k->idle_s / 2;
  return p < 1 ? 1 : p > 5 ? 5 : p;
}

/* Sleeps one period; returns 1 when asked to stop. */
static int nap(struct siox_kb_thread *k) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += period_s(k);
  pthread_mutex_lock(&k->mu);
  while (!k->stop && pthread_cond_timedwait(&k->cv, &k->mu, &until) != ETIMEDOUT) {
  }
  int stop = k->stop;
  pthread_mutex_unlock(&k->mu);
  return stop;
}

/* Replaces the cancel handle (NULL: none) under the lock. */
static void set_cancel(struct siox_kb_thread *k, PGconn *c) {
  pthread_mutex_lock(&k->mu);
  if (k->cancel) PQfreeCancel(k->cancel);
  k->cancel = c ? PQgetCancel(c) : NULL;
  pthread_mutex_unlock(&k->mu);
}

/* The background folds of baselines and capacity stay BACKGROUND_SETTLE_NS
 * behind now: a fold never looks at activities that end before its
 * watermark again, and under load rows reach the warehouse well after
 * their end (spooled batches, a busy ingest thread). An explicit
 * `siox anomalies|capacity --update` still folds up to kb_fold_state's
 * settle time (15 s); this parameter only ever lengthens it. */
#define BACKGROUND_SETTLE_NS 120000000000LL

/* Minutes of the timeline the kind models' fold catches up per period. */
#define KIND_MODEL_MINUTES 30

static void *run(void *arg) {
  struct siox_kb_thread *k = arg;
  PGconn *c = NULL;
  char err[512];
  while (!nap(k)) {
    if (!c || PQstatus(c) != CONNECTION_OK) {
      set_cancel(k, NULL);
      if (c) PQfinish(c);
      if (!(c = siox_db_connect(k->conninfo, 0)) && siox_pg_revive() == 0) c = siox_db_connect(k->conninfo, 0);
      if (!c) continue; /* the database is away: retry next period */
      set_cancel(k, c);
    }
    int n = siox_kb_analyze_pending(c, k->idle_s, k->every_s, BACKGROUND_SETTLE_NS, err, sizeof err);
    if (n < 0) siox_log("analysis: %s", err);
    else if (n > 0) siox_log("analysis: %d job(s) analysed", n);
    /* The kinds' latency models blame reads (schema 024): a bounded
     * catch-up per period, so a stop is never held up for long. */
    if ((n = siox_wh_kind_models_update(c, BACKGROUND_SETTLE_NS, KIND_MODEL_MINUTES, err, sizeof err)) < 0)
      siox_log("kind models: %s", err);
  }
  set_cancel(k, NULL);
  if (c) PQfinish(c);
  return NULL;
}

int siox_kb_thread_start(struct siox_server *s, const char *conninfo) {
  if (s->opt->no_analyze) return 0;
  struct siox_kb_thread *k = calloc(1, sizeof *k);
  if (!k || !(k->conninfo = strdup(conninfo))) return free(k), -ENOMEM;
  k->idle_s = s->opt->analyze_idle_s;
  k->every_s = s->opt->analyze_every_s;
  pthread_mutex_init(&k->mu, NULL);
  pthread_cond_init(&k->cv, NULL);
  if (pthread_create(&k->thread, NULL, run, k) != 0) {
    free(k->conninfo);
    free(k);
    return -EAGAIN;
  }
  s->kb = k;
  return 0;
}

void siox_kb_thread_stop(struct siox_server *s) {
  struct siox_kb_thread *k = s->kb;
  if (!k) return;
  /* A long analysis must not hold up the server's exit: cancel the running
   * query, and again every 100 ms, since an analysis is many queries. */
  for (;;) {
    char why[128];
    pthread_mutex_lock(&k->mu);
    k->stop = 1;
    pthread_cond_signal(&k->cv);
    if (k->cancel) PQcancel(k->cancel, why, sizeof why);
    pthread_mutex_unlock(&k->mu);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 100 * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    if (pthread_timedjoin_np(k->thread, NULL, &until) == 0) break;
  }
  pthread_mutex_destroy(&k->mu);
  pthread_cond_destroy(&k->cv);
  free(k->conninfo);
  free(k);
  s->kb = NULL;
}
