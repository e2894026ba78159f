/*
 * How `siox status` and `siox graph` show a trace's completeness: one text
 * line from a struct siox_wh_loss (warehouse_loss.c; the JSON object is
 * siox_wh_loss_json's).
 */
#ifndef SIOX_CLI_LOSS_VIEW_H
#define SIOX_CLI_LOSS_VIEW_H

#include <stdio.h>

#include "documents.h"

/* "made M, stored S (P%); dropped: client buffer A, client exit B, daemon
 * spool C, daemon validation D; unaccounted U" to f, after `label`. */
void siox_loss_text(FILE *f, const char *label, const struct siox_wh_loss *l);

#endif
