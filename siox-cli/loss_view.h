/*
 * How `siox status` and `siox graph` show a trace's completeness: one text
 * line or one JSON object from a struct siox_wh_loss (warehouse_loss.c).
 */
#ifndef SIOX_CLI_LOSS_VIEW_H
#define SIOX_CLI_LOSS_VIEW_H

#include <json-c/json.h>
#include <stdio.h>

#include "warehouse.h"

/* "made M, stored S (P%); dropped: client buffer A, client exit B, daemon
 * spool C, daemon validation D; unaccounted U" to f, after `label`. */
void siox_loss_text(FILE *f, const char *label, const struct siox_wh_loss *l);
/* A new JSON object with the same figures (caller owns it). */
json_object *siox_loss_json(const struct siox_wh_loss *l);

#endif
