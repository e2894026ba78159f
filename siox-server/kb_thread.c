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

#include "server.h"

struct siox_kb_thread {
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;
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

static void *run(void *arg) {
  struct siox_kb_thread *k = arg;
  PGconn *c = NULL;
  char err[512];
  while (!nap(k)) {
    if (!c || PQstatus(c) != CONNECTION_OK) {
      if (c) PQfinish(c);
      if (!(c = siox_db_connect(k->conninfo, 0))) continue; /* the database is away: retry next period */
    }
    int n = siox_kb_analyze_pending(c, k->idle_s, k->every_s, err, sizeof err);
    if (n < 0) siox_log("analysis: %s", err);
    else if (n > 0) siox_log("analysis: %d job(s) analysed", n);
  }
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
  pthread_mutex_lock(&k->mu);
  k->stop = 1;
  pthread_cond_signal(&k->cv);
  pthread_mutex_unlock(&k->mu);
  pthread_join(k->thread, NULL);
  pthread_mutex_destroy(&k->mu);
  pthread_cond_destroy(&k->cv);
  free(k->conninfo);
  free(k);
  s->kb = NULL;
}
