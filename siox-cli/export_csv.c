/*
 * `siox export --format csv` (export_out.h): three RFC 4180 tables in a
 * directory, one row per activity, link and attribute value, written as
 * the rows stream in.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "export_out.h"
#include "siox/siox_wh.h"

/* A field, quoted when it holds a separator, a quote or a line break. */
static void field(FILE *f, const char *s, int last) {
  if (strpbrk(s, ",\"\r\n")) {
    fputc('"', f);
    for (; *s; s++) {
      if (*s == '"') fputc('"', f);
      fputc(*s, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
  fputs(last ? "\r\n" : ",", f);
}

static void num(FILE *f, int64_t v, int last) { fprintf(f, "%" PRId64 "%s", v, last ? "\r\n" : ","); }

static void act_row(FILE *f, const struct siox_wh_xact *a) {
  num(f, a->aid, 0), num(f, a->parent_aid, 0), num(f, a->proc_id, 0), field(f, a->host, 0), num(f, a->pid, 0);
  field(f, a->exe, 0), field(f, a->job, 0), num(f, a->node_id, 0), field(f, a->hwid, 0), field(f, a->swid, 0);
  field(f, a->iid, 0), field(f, a->name, 0), num(f, a->start_ns, 0), num(f, a->end_ns, 0);
  num(f, a->end_ns - a->start_ns, 0), num(f, a->err, 0), num(f, a->bytes, 1);
}

static void link_row(FILE *f, const struct siox_wh_xlink *l) {
  num(f, l->parent_aid, 0), num(f, l->child_aid, 0), field(f, l->is_implicit ? "implicit" : "explicit", 0);
  fprintf(f, "%.4f,", l->confidence);
  field(f, l->flags, 1);
}

static void attr_row(FILE *f, const struct siox_wh_xattr *x) {
  num(f, x->aid, 0), field(f, x->name, 0), field(f, x->unit, 0), field(f, x->value, 1);
}

static const char *const file_of[] = {"activities.csv", "links.csv", "attributes.csv"};
static const char *const header_of[] = {
    "aid,parent_aid,proc_id,host,pid,exe,job,node_id,hwid,swid,iid,name,start_ns,end_ns,duration_ns,err,bytes\r\n",
    "parent_aid,child_aid,kind,confidence,flags\r\n", "aid,name,unit,value\r\n"};

static int table(PGconn *c, const char *job, const char *dir, enum siox_wh_export_what what, char *err,
                 size_t errlen) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file_of[what]);
  FILE *f = fopen(path, "w");
  if (!f) {
    int rc = -errno;
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
    return rc;
  }
  fputs(header_of[what], f);
  struct siox_wh_stream *s;
  int rc = siox_wh_export_open(c, what, job, &s, err, errlen);
  const struct siox_wh_xact *a;
  const struct siox_wh_xlink *l;
  const struct siox_wh_xattr *x;
  while (rc == 0 && (rc = siox_wh_stream_next(s, &a, &l, &x, err, errlen)) == 1) {
    if (what == SIOX_WH_EXPORT_ACTIVITIES) act_row(f, a);
    else if (what == SIOX_WH_EXPORT_LINKS) link_row(f, l);
    else attr_row(f, x);
    rc = ferror(f) ? -EIO : 0;
  }
  siox_wh_stream_close(s);
  int bad = ferror(f) | (fclose(f) != 0);
  if (bad && rc >= 0) {
    snprintf(err, errlen, "writing %s failed", path);
    rc = -EIO;
  }
  return rc < 0 ? rc : 0;
}

int siox_export_csv(PGconn *c, const char *job, const char *dir, char *err, size_t errlen) {
  int64_t t0;
  int rc = siox_wh_export_t0(c, job, &t0, err, errlen);
  if (rc == -ENOENT) snprintf(err, errlen, "job '%s' has no activities in the warehouse (see `siox top`)", job);
  if (rc) return rc;
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    rc = -errno;
    snprintf(err, errlen, "cannot create %s: %s", dir, strerror(-rc));
    return rc;
  }
  for (int w = SIOX_WH_EXPORT_ACTIVITIES; w <= SIOX_WH_EXPORT_ATTRIBUTES && rc == 0; w++)
    rc = table(c, job, dir, (enum siox_wh_export_what)w, err, errlen);
  return rc;
}
