/*
 * Anonymized file names: "fileN" (N = the file id) plus the original
 * extension, which says what kind of data it was (.h5, .dat) without naming
 * the user, project or directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl_model.h"

int siox_wl_anonymize(siox_workload *w) {
  for (size_t i = 0; i < w->nfiles; i++) {
    const char *base = strrchr(w->files[i], '/');
    base = base ? base + 1 : w->files[i];
    const char *dot = strrchr(base, '.');
    /* an extension is short and alphanumeric; anything else could carry a name */
    size_t el = dot && dot != base ? strlen(dot) : 0;
    for (size_t k = 1; k < el; k++)
      if (!((dot[k] >= 'a' && dot[k] <= 'z') || (dot[k] >= 'A' && dot[k] <= 'Z') || (dot[k] >= '0' && dot[k] <= '9')))
        el = 0;
    if (el > 8) el = 0;
    char buf[64];
    snprintf(buf, sizeof(buf), "file%zu%.*s", i, (int)el, el ? dot : "");
    char *s = strdup(buf);
    if (!s) return -ENOMEM;
    free(w->files[i]);
    w->files[i] = s;
  }
  return 0;
}
