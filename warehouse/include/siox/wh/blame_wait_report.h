/* Blame's waiting step in words and JSON (blame_wait_report.c). */
#ifndef SIOX_WH_BLAME_WAIT_REPORT_H
#define SIOX_WH_BLAME_WAIT_REPORT_H

#include <json-c/json.h>
#include <stdio.h>

#include "blame_wait.h"

/* The breakdown at the resource, the component's operations, the kind's model. */
void siox_blame_wait_text(FILE *f, const struct siox_blame_wait *o, const struct siox_act *root);
/* Adds class, decided_by, resource, breakdown, kind_model, interfering_jobs to out. */
void siox_blame_wait_json(json_object *out, const struct siox_blame_wait *o);

#endif
