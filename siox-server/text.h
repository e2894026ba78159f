/*
 * Strings from daemons are bytes; the warehouse stores UTF-8 text. Every
 * string goes through siox_text_clean before it reaches PostgreSQL so that
 * one odd file name cannot make a whole batch fail.
 */
#ifndef SIOX_TEXT_H
#define SIOX_TEXT_H

#include <stddef.h>

/* Replaces, in place, every NUL byte and every byte that is not part of a
 * valid UTF-8 sequence with '?'. Returns how many bytes were replaced. */
size_t siox_text_clean(char *s, size_t len);

#endif
