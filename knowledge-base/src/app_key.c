/*
 * Application identity and file patterns: the keys under which findings and
 * hint sets are stored and looked up (siox_kb.h).
 */
#include <ctype.h>
#include <string.h>

#include <siox/siox_kb.h>

uint64_t siox_kb_args_hash(const char *args) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64: fixed, portable, no seed */
  for (const unsigned char *p = (const unsigned char *)args; p && *p; p++) h = (h ^ *p) * 0x100000001b3ull;
  return h;
}

int siox_kb_file_pattern(const char *path, char *out, size_t cap) {
  size_t n = 0;
  for (const char *p = path; *p; p++) {
    if (isdigit((unsigned char)*p)) {
      while (isdigit((unsigned char)p[1])) p++;
      if (n + 1 >= cap) return -1;
      out[n++] = '#';
      continue;
    }
    if (n + 1 >= cap) return -1;
    out[n++] = *p;
  }
  if (cap == 0) return -1;
  out[n] = '\0';
  return (int)n;
}
