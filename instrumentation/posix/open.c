/*
 * New and vanishing descriptors: at open the POSIX layer names the file
 * (posix/path -> posix/fd), asks a FUSE file system for the GlusterFS gfid
 * (posix/path -> glusterfs/gfid, README.md link 1) and makes the fd's table
 * entry; dup maps fd -> fd; close releases the fd. Metadata calls on a
 * GlusterFS file send its gfid to the file-system client (sxp__file_send).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "path.h"
#include "posix.h"

#define FUSE_SUPER_MAGIC 0x65735546

/* The directory a relative path is resolved against: the cwd, or dirfd's
 * path. Returns 0 or -1 when it cannot be known. */
static int base_dir(int dirfd, char *out, size_t cap) {
  if (dirfd == AT_FDCWD) return getcwd(out, cap) ? 0 : -1;
  struct sxp_ofd *o = sxp_fd_ofd(dirfd);
  if (o && o->pathlen && o->pathlen < cap) {
    memcpy(out, o->path, o->pathlen + 1);
    return 0;
  }
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
  ssize_t n = readlink(link, out, cap - 1);
  if (n <= 0 || out[0] != '/') return -1;
  out[n] = '\0';
  return 0;
}

/* Writes the posix/path value of (dirfd, path) to out[PATH_MAX]. */
static int abs_path(int dirfd, const char *path, char *out) {
  char base[PATH_MAX];
  if (path && path[0] != '/' && base_dir(dirfd, base, sizeof base) < 0) return -1;
  return sxp_path_normalise(base, path, out, PATH_MAX) > 0 ? 0 : -1;
}

/* The devices (st_dev + 1) of the GlusterFS mounts this process opened
 * files on: a stat there, and any unlink once there is one, also asks for
 * the file's gfid to link to the client's fop (sxp__path_send). A few
 * mounts at most; a full table forgets nothing, it only stops learning. */
#define GLUSTER_DEVS 8
static _Atomic uint64_t gluster_devs[GLUSTER_DEVS];

static void remember_dev(int fd) {
  struct stat st;
  if (syscall(SYS_fstat, fd, &st) < 0) return; /* the real call: fstat is wrapped */
  uint64_t v = (uint64_t)st.st_dev + 1;
  for (int i = 0; i < GLUSTER_DEVS; i++) {
    uint64_t cur = 0;
    if (atomic_compare_exchange_strong(&gluster_devs[i], &cur, v) || cur == v) return;
  }
}

int sxp__gluster_dev(uint64_t dev) {
  for (int i = 0; i < GLUSTER_DEVS; i++) {
    uint64_t cur = atomic_load_explicit(&gluster_devs[i], memory_order_relaxed);
    if (cur == 0) return 0;
    if (cur == dev + 1) return 1;
  }
  return 0;
}

int sxp__gluster_seen(void) { return atomic_load_explicit(&gluster_devs[0], memory_order_relaxed) != 0; }

/* On a GlusterFS FUSE mount, stores the gfid in o. The getxattr goes to the
 * glusterfs process, which answers this virtual attribute itself. */
static void fuse_check(struct sxp_ofd *o, int fd) {
  struct statfs sf;
  if (fstatfs(fd, &sf) < 0 || sf.f_type != FUSE_SUPER_MAGIC) return;
  char s[64];
  ssize_t n = o->pathlen ? getxattr(o->path, "glusterfs.gfid.string", s, sizeof s)
                         : fgetxattr(fd, "glusterfs.gfid.string", s, sizeof s);
  if (n > 0 && sxp_gfid_parse(s, (size_t)n, o->gfid) == 0) {
    atomic_fetch_or(&o->flags, SXP_OFD_GLUSTER);
    remember_dev(fd);
  }
}

const struct sxp_ofd *sxp__fd_opened(siox_aid aid, int dirfd, const char *path, int fd, int flags) {
  char abs[PATH_MAX];
  int known = path && abs_path(dirfd, path, abs) == 0;
  uint32_t f = (flags & O_APPEND) ? SXP_OFD_APPEND : 0;
  uint64_t pos = (flags & O_APPEND) ? SXP_POS_UNKNOWN : 0;
  if (SXP_REAL(lseek)(fd, 0, SEEK_CUR) < 0) f |= SXP_OFD_NOSEEK;
  struct sxp_ofd *o = sxp_ofd_create(known ? abs : NULL, pos, f);
  if (o) fuse_check(o, fd);
  if (known) {
    siox_desc p = siox_desc_str(SIOX_ATTR_POSIX_PATH, abs);
    siox_desc d = siox_desc_int(SIOX_ATTR_POSIX_FD, fd);
    siox_activity_attr_str(aid, SIOX_ATTR_POSIX_PATH, abs);
    siox_descriptor_map(sxp__reg.node[SXP_NODE_POSIX], aid, &p, &d);
    if (o && (sxp_ofd_flags(o) & SXP_OFD_GLUSTER)) {
      siox_desc g = siox_desc_bytes(SIOX_ATTR_GLUSTERFS_GFID, o->gfid, sizeof o->gfid);
      siox_descriptor_map(sxp__reg.node[SXP_NODE_POSIX], aid, &p, &g);
    }
  }
  if (!o || sxp_fd_attach(fd, o) < 0) return NULL;
  return known ? o : NULL;
}

void sxp__gfid_send(siox_aid aid, const uint8_t gfid[16]) {
  siox_desc g = siox_desc_bytes(SIOX_ATTR_GLUSTERFS_GFID, gfid, 16);
  /* Length 0: the whole file, "no byte range" to the server's matcher. */
  siox_descriptor_send(aid, sxp__reg.gluster, &g, 0, 0);
}

void sxp__path_send(siox_aid aid, int dirfd, const char *path) {
  char abs[PATH_MAX], s[64];
  uint8_t gfid[16];
  if (!path || abs_path(dirfd, path, abs) < 0) return;
  ssize_t n = getxattr(abs, "glusterfs.gfid.string", s, sizeof s);
  if (n > 0 && sxp_gfid_parse(s, (size_t)n, gfid) == 0) sxp__gfid_send(aid, gfid);
}

void sxp__file_send(siox_aid aid, const struct sxp_ofd *o) {
  if (o && (atomic_load(&o->flags) & SXP_OFD_GLUSTER)) sxp__gfid_send(aid, o->gfid);
}

void sxp__path_attr(siox_aid aid, int dirfd, const char *path) {
  char abs[PATH_MAX];
  if (path && abs_path(dirfd, path, abs) == 0) siox_activity_attr_str(aid, SIOX_ATTR_POSIX_PATH, abs);
}

void sxp__fd_released(siox_aid aid, int fd) {
  siox_desc d = siox_desc_int(SIOX_ATTR_POSIX_FD, fd);
  siox_descriptor_release(sxp__reg.node[SXP_NODE_POSIX], aid, &d);
}

void sxp__fd_duped(siox_aid aid, int oldfd, int newfd) {
  sxp_fd_dup(oldfd, newfd);
  if (!aid) return;
  siox_desc a = siox_desc_int(SIOX_ATTR_POSIX_FD, oldfd);
  siox_desc b = siox_desc_int(SIOX_ATTR_POSIX_FD, newfd);
  siox_descriptor_map(sxp__reg.node[SXP_NODE_POSIX], aid, &a, &b);
}
