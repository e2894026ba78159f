/*
 * Encoders of `siox export` (export_chrome.c, export_csv.c): each reads the
 * job's rows from libsiox-warehouse's streams and writes them as they
 * come, so memory stays flat (one row, plus one entry per track).
 */
#ifndef SIOX_CLI_EXPORT_OUT_H
#define SIOX_CLI_EXPORT_OUT_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdio.h>

/* Writes job's trace as Chrome trace-event JSON (the object form) to f:
 * one track per process (pid = the warehouse's proc_id) and, inside it, per
 * instrumented layer (tid = node_id: the warehouse has no thread ids);
 * complete ("X") events; a flow ("s"/"f") per causal link, named by its
 * kind and confidence. 0, -ENOENT (no such job), -EIO (err set). */
int siox_export_chrome(PGconn *c, const char *job, FILE *f, char *err, size_t errlen);

/* Writes dir/activities.csv, dir/links.csv, dir/attributes.csv (RFC 4180,
 * a header line each). 0, -ENOENT, -EIO or a negative errno of the files
 * (err set). */
int siox_export_csv(PGconn *c, const char *job, const char *dir, char *err, size_t errlen);

#endif
