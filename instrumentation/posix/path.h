/*
 * Pure helpers of the POSIX layer: turning the path an application passed
 * into the absolute, normalised posix/path descriptor value, and reading the
 * GlusterFS gfid string into its 16 raw bytes. No system calls.
 */
#ifndef SIOX_POSIX_PATH_H
#define SIOX_POSIX_PATH_H

#include <stddef.h>
#include <stdint.h>

/* Writes to out (cap bytes) the absolute, lexically normalised form of path
 * resolved against base (an absolute directory; ignored when path is
 * absolute): repeated and trailing slashes, "." and ".." are folded, ".."
 * never climbs above "/". Symbolic links are not resolved: the value is the
 * name as the application sees it. Returns the length, or -EINVAL (empty
 * path, relative base), or -ENAMETOOLONG when out is too small. */
int sxp_path_normalise(const char *base, const char *path, char *out, size_t cap);

/* Parses a gfid string "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (as
 * getxattr("glusterfs.gfid.string") returns it, NUL or not) of len bytes
 * into 16 bytes. Returns 0 or -EINVAL. */
int sxp_gfid_parse(const char *s, size_t len, uint8_t out[16]);

#endif
