/*
 * What the knowledge base advises (advice.c): the findings of a job's
 * analysis and the MPI-IO hint sets they suggested, as `siox hints` and
 * `siox web` present them. Reads only the kb_* tables.
 */
#ifndef SIOX_KB_ADVICE_H
#define SIOX_KB_ADVICE_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Strings are borrowed from the advice; *_json are JSON texts. */
struct siox_kb_finding {
  const char *kind, *severity, *file_pattern, *summary, *evidence_json, *job;
  double expected_gain_s;
  int64_t hint_set_id; /* 0: none */
};

struct siox_kb_hint_set {
  int64_t id;
  const char *exe, *args, *file_pattern, *component;
  const char *hints_json, *rationale_json, *evidence_json;
  double expected_gain_s;
  const char *source_job, *created_at;
  bool superseded;
  const char *status, *status_reason; /* status: live, experiment, withdrawn */
  const char *outcome_json;           /* "" not measured yet */
};

enum siox_kb_advice_of {
  SIOX_KB_ADVICE_JOB,     /* key: a job; its findings and the sets they refer to */
  SIOX_KB_ADVICE_APP,     /* key: an executable; the findings of its latest analysed job, its live and withdrawn sets */
  SIOX_KB_ADVICE_APP_ALL, /* as APP, with superseded sets, newest first */
};

struct siox_kb_advice {
  struct siox_kb_finding *findings; /* most severe, then largest gain, first */
  size_t nfindings;
  struct siox_kb_hint_set *sets; /* JOB, APP: largest expected gain first (APP: withdrawn last) */
  size_t nsets;
  PGresult *res[2]; /* the strings' owners */
};

/* Loads the advice for key. out is the caller's (siox_kb_advice_free).
 * 0, -EIO (err set), -ENOMEM. */
int siox_kb_advice_load(PGconn *c, enum siox_kb_advice_of of, const char *key, struct siox_kb_advice *out, char *err,
                        size_t errcap);
void siox_kb_advice_free(struct siox_kb_advice *a);

#endif
