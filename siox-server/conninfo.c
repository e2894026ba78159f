/*
 * The conninfo strings of a site database (--db): the server's own (with
 * --db-passfile as libpq's passfile) and the one written to DIR/conninfo
 * for `siox`, which is world-readable and so never holds a password: a user
 * authenticates as themself (peer, their own ~/.pgpass, Kerberos...).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "server.h"

/* Appends key='value' (quotes and backslashes escaped) to out. */
static int append(char *out, size_t cap, size_t *off, const char *key, const char *val) {
  int n = snprintf(out + *off, cap - *off, "%s%s='", *off ? " " : "", key);
  if (n < 0 || (size_t)n >= cap - *off) return -ENAMETOOLONG;
  *off += (size_t)n;
  for (const char *v = val; *v; v++) {
    if (*off + 3 >= cap) return -ENAMETOOLONG;
    if (*v == '\'' || *v == '\\') out[(*off)++] = '\\';
    out[(*off)++] = *v;
  }
  if (*off + 2 >= cap) return -ENAMETOOLONG;
  out[(*off)++] = '\'';
  out[*off] = '\0';
  return 0;
}

int siox_conninfo_rebuild(const char *in, const char *passfile, int keep_secrets, char *out, size_t cap) {
  char *err = NULL;
  PQconninfoOption *opts = PQconninfoParse(in, &err);
  if (!opts) return PQfreemem(err), -EINVAL;
  size_t off = 0;
  int rc = 0, had_password = 0;
  out[0] = '\0';
  for (PQconninfoOption *o = opts; rc == 0 && o->keyword; o++) {
    if (!o->val) continue;
    int secret = strcmp(o->keyword, "password") == 0 || strcmp(o->keyword, "passfile") == 0;
    had_password |= strcmp(o->keyword, "password") == 0;
    if (!secret || keep_secrets) rc = append(out, cap, &off, o->keyword, o->val);
  }
  if (rc == 0 && passfile) rc = append(out, cap, &off, "passfile", passfile);
  PQconninfoFree(opts);
  return rc == 0 && had_password && !keep_secrets ? 1 : rc;
}

int siox_conninfo_write(const char *dir, const char *conninfo) {
  char path[4200], tmp[4300];
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) return -errno;
  snprintf(path, sizeof path, "%s/conninfo", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return -errno;
  fprintf(f, "%s\n", conninfo);
  if (fclose(f) != 0) return -EIO;
  /* No secret in it (siox_conninfo_rebuild), and every user's `siox` reads it. */
  if (chmod(tmp, 0644) != 0 || rename(tmp, path) != 0) return -errno;
  return 0;
}
