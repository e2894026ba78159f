/*
 * A job's I/O activities in memory, with their file and rank resolved
 * (wh_job_acts.c), shared by the job summary and the heatmap.
 */
#ifndef SIOX_WH_JOB_H
#define SIOX_WH_JOB_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "siox/siox_wh.h"

#define WHJ_NONE INT64_MIN /* an attribute the activity does not carry */

enum whj_op { WHJ_META, WHJ_READ, WHJ_WRITE, WHJ_SEEK };

struct whj_act {
  int64_t aid, parent; /* parent 0: none */
  int32_t proc, rank;
  uint16_t layer; /* index in whj.layers */
  uint8_t op;     /* enum whj_op */
  bool own_file;  /* the file came from the activity's own descriptors */
  bool top;       /* no explicit parent: a call the application made itself */
  const char *name; /* borrowed from the query result */
  int64_t start_ns, end_ns;
  int64_t offset, bytes, fd, stdio, coll; /* WHJ_NONE when absent; bytes: moved */
  const char *path, *sent_path;
  int32_t file;          /* index in whj.files, -1 unknown */
  int64_t file_from_ns;  /* start of the child the file was taken from */
};

struct whj {
  PGresult *res;
  struct whj_act *a; /* ordered by (proc, start_ns, aid) */
  size_t n;
  char **files; /* borrowed from res */
  size_t nfiles, capfiles;
  const char *layers[16]; /* swids, borrowed */
  size_t nlayers;
  int32_t nranks;
  int64_t uid, first_ns, last_ns;
  int nprocs;
};

/* Loads job's activities of the I/O layers and resolves files and ranks.
 * 0, -ENOENT, -EINVAL (several owners), -EIO, -ENOMEM; err says why. */
int whj_load(PGconn *c, const char *job, struct whj *j, char *err, size_t errlen);
void whj_free(struct whj *j);

/* 0 when job's processes are one user's and there is one; -ENOENT (none
 * visible), -EINVAL (several owners), -EIO; err says why. */
int whj_one_owner(PGconn *c, const char *job, char *err, size_t errlen);

/* The documents of siox_wh_job_summary and siox_wh_job_heatmap (bins in
 * 1..4096) from a loaded job: siox_wh_job_page builds both from one load. */
int whj_summary(const struct whj *j, const char *job, struct json_object **out, char *err, size_t errlen);
int whj_heatmap(const struct whj *j, const char *job, int bins, struct json_object **out, char *err, size_t errlen);

/* The job's summary (when summary is not NULL) and heatmap of bins bins
 * (when heatmap is not NULL), from job_aggregates when it holds them for the
 * job's activities as they are now, else computed from one load and stored
 * (wh_job_cache.c). 0 or whj_load's errors; on error nothing is returned. */
int whj_docs(PGconn *c, const char *job, struct json_object **summary, int bins, struct json_object **heatmap,
             char *err, size_t errlen);

/* The operation a call's name says it is, by these patterns (POSIX
 * extended regular expressions, which PostgreSQL's ~ reads the same, so
 * `siox jobs`'s SQL and the summary classify alike), tried in this order:
 * seek; not data (readdir, readlink, pthread_*); read; write; else meta. A
 * read or write is a data access only when it says how many bytes moved. */
#define WHJ_RE_SEEK "seek"
#define WHJ_RE_NOT_DATA "readdir|readlink|thread"
#define WHJ_RE_READ "read|fgets|scanf|getc"
#define WHJ_RE_WRITE "write|printf|puts|putc"
enum whj_op whj_classify(const char *name);

#endif
