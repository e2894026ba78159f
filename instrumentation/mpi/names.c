/*
 * Text the layer derives once per open: the file name as POSIX will see it
 * (the descriptor both layers must agree on, see instrumentation/README.md)
 * and the hints in effect as key=value;... for the mpi/hints attribute.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mpi_layer.h"

/* ROMIO accepts "ufs:/path", "nfs:/path", ...: the prefix names a driver,
 * not part of the file name. A prefix is 2+ letters so "C:" never matches. */
static const char *strip_driver(const char *name) {
  const char *c = strchr(name, ':');
  if (!c || c - name < 2) return name;
  for (const char *p = name; p < c; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return name;
  return c + 1;
}

/* Appends component [s, s+n) to out at *len, resolving "." and "..". */
static int push_component(char *out, size_t size, size_t *len, const char *s, size_t n) {
  if (n == 0 || (n == 1 && s[0] == '.')) return 0;
  if (n == 2 && s[0] == '.' && s[1] == '.') {
    while (*len > 1 && out[*len - 1] != '/') (*len)--;
    if (*len > 1) (*len)--;
    out[*len] = 0;
    return 0;
  }
  if (*len + 1 + n + 1 > size) return -1;
  if (*len > 1) out[(*len)++] = '/';
  memcpy(out + *len, s, n);
  *len += n;
  out[*len] = 0;
  return 0;
}

/* Lexical normalisation only: symlinks are not resolved, because the
 * application (and so the POSIX layer) sees the name it gave. */
int siox__mpi_path_normalise(const char *name, char *out, size_t size) {
  char joined[4096];
  name = strip_driver(name);
  if (name[0] == '/') {
    if (snprintf(joined, sizeof joined, "%s", name) >= (int)sizeof joined) return -1;
  } else {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return -1;
    if (snprintf(joined, sizeof joined, "%s/%s", cwd, name) >= (int)sizeof joined) return -1;
  }
  if (size < 2) return -1;
  size_t len = 1;
  out[0] = '/';
  out[1] = 0;
  for (const char *p = joined; *p;) {
    while (*p == '/') p++;
    const char *e = p;
    while (*e && *e != '/') e++;
    if (push_component(out, size, &len, p, (size_t)(e - p)) < 0) return -1;
    p = e;
  }
  return (int)len;
}

void siox__mpi_info_format(MPI_Info info, char *out, size_t size) {
  int nkeys = 0;
  size_t len = 0;
  out[0] = 0;
  if (info == MPI_INFO_NULL || PMPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS) return;
  for (int i = 0; i < nkeys; i++) {
    char key[MPI_MAX_INFO_KEY + 1], val[256];
    int flag = 0;
    if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS) continue;
    if (PMPI_Info_get(info, key, (int)sizeof val - 1, val, &flag) != MPI_SUCCESS || !flag) continue;
    int n = snprintf(out + len, size - len, "%s%s=%s", len ? ";" : "", key, val);
    if (n < 0 || (size_t)n >= size - len) {
      out[len] = 0; /* keep whole pairs only */
      return;
    }
    len += (size_t)n;
  }
}
