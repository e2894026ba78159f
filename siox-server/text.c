/*
 * UTF-8 scrubbing of daemon-supplied strings (see text.h), applied by the
 * ingest path before names, paths and attribute values enter the warehouse.
 */
#include "text.h"

/* Length of the valid UTF-8 sequence starting at s (<= n bytes), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  unsigned min;
  if (c >= 0x01 && c < 0x80) return 1;
  if (c >= 0xc2 && c < 0xe0) len = 2, min = 0x80;
  else if (c >= 0xe0 && c < 0xf0) len = 3, min = 0x800;
  else if (c >= 0xf0 && c < 0xf5) len = 4, min = 0x10000;
  else return 0;
  if (len > n) return 0;
  unsigned cp = c & (0x3f >> (len - 1));
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  /* Overlong forms, surrogates and code points past U+10FFFF are invalid. */
  if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  return len;
}

size_t siox_text_clean(char *s, size_t len) {
  size_t bad = 0;
  for (size_t i = 0; i < len;) {
    size_t n = utf8_seq((const unsigned char *)s + i, len - i);
    if (n == 0) {
      s[i++] = '?';
      bad++;
    } else {
      i += n;
    }
  }
  return bad;
}
