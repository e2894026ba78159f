/*
 * posix/path values: the POSIX layer names files by the absolute, normalised
 * path the application used (see instrumentation/README.md), so that the
 * server can join them with what MPI-IO and GlusterFS report.
 */
#include <errno.h>
#include <string.h>

#include "path.h"

/* Appends the components of s to out[0..*len), folding "." and "..". */
static int fold(const char *s, char *out, size_t cap, size_t *len) {
  while (*s) {
    while (*s == '/') s++;
    const char *e = s;
    while (*e && *e != '/') e++;
    size_t n = (size_t)(e - s);
    if (n == 0 || (n == 1 && s[0] == '.')) {
      /* nothing to add */
    } else if (n == 2 && s[0] == '.' && s[1] == '.') {
      while (*len > 0 && out[*len - 1] != '/') (*len)--;
      if (*len > 0) (*len)--; /* the slash before the dropped component */
    } else {
      if (*len + 1 + n + 1 > cap) return -ENAMETOOLONG;
      out[(*len)++] = '/';
      memcpy(out + *len, s, n);
      *len += n;
    }
    s = e;
  }
  return 0;
}

int sxp_path_normalise(const char *base, const char *path, char *out, size_t cap) {
  if (!path || !*path || cap < 2) return cap < 2 ? -ENAMETOOLONG : -EINVAL;
  size_t len = 0;
  int rc = 0;
  if (path[0] != '/') {
    if (!base || base[0] != '/') return -EINVAL;
    rc = fold(base, out, cap, &len);
  }
  if (rc == 0) rc = fold(path, out, cap, &len);
  if (rc < 0) return rc;
  if (len == 0) out[len++] = '/';
  out[len] = '\0';
  return (int)len;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int sxp_gfid_parse(const char *s, size_t len, uint8_t out[16]) {
  if (len > 36 && s[36] == '\0') len = 36;
  if (len != 36) return -EINVAL;
  size_t k = 0;
  for (size_t i = 0; i < 36;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (s[i++] != '-') return -EINVAL;
      continue;
    }
    int hi = hexval(s[i]), lo = hexval(s[i + 1]);
    if (hi < 0 || lo < 0) return -EINVAL;
    out[k++] = (uint8_t)(hi << 4 | lo);
    i += 2;
  }
  return 0;
}
