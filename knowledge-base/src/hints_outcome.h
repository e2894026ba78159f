/*
 * Judging applied hint sets against the warehouse (hints_outcome.c):
 * private to the knowledge base; siox_kb.h has the public entry.
 */
#ifndef SIOX_KB_HINTS_OUTCOME_H
#define SIOX_KB_HINTS_OUTCOME_H

#include <libpq-fe.h>
#include <stddef.h>

#include "findings.h"

/* Judges the sets job j applied at its opens and, when it applied none
 * (a run without hints adds to the comparison), the live and experiment
 * sets of its application (exe and args) with runs to compare. Sets
 * *withdrawn_own to 1 when a set j applied is withdrawn now or was before
 * (its data then shows the failed set at work: no new set is made from
 * it). Returns the number of sets judged, or -1. */
int kb_judge_for_job(PGconn *c, const struct fnd_job *j, int *withdrawn_own, char *err, size_t errcap);

#endif
