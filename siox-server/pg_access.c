/*
 * Who may connect to the embedded cluster. Two unix sockets:
 *   DIR/pg/run   inside the private data directory: the server's own
 *   DIR/socket   world-connectable (socket 0777, directory 0755): users
 * and peer authentication on both, rewritten on every start so that an
 * existing cluster is upgraded: the Unix users that own the cluster (root,
 * postgres, the server's own user) may log in as the superuser postgres
 * (ident map siox_server); everybody else only into database siox, as the
 * role named after their Unix user (created by roles.c), where row-level
 * security shows them their own rows.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server.h"

#define ACCESS_MARKER "# --- siox-server access ---"

static const char hba_text[] =
    "# Written by siox-server on every start (siox-server/pg_access.c); edits are lost.\n"
    "# The Unix users that own the cluster: as the superuser postgres.\n"
    "local all postgres peer map=siox_server\n"
    "# Everybody: into the warehouse as the role of their own name.\n"
    "local siox all peer\n";

static int chown_pg(const char *path) {
  if (geteuid() != 0) return 0;
  struct passwd *pw = getpwnam("postgres");
  if (!pw) return -ESRCH;
  return chown(path, pw->pw_uid, pw->pw_gid) == 0 ? 0 : -errno;
}

/* DIR, the parent of pg->dir (DIR/pg). */
static void data_dir_of(const struct siox_pg *pg, char *out, size_t cap) {
  snprintf(out, cap, "%s", pg->dir);
  char *slash = strrchr(out, '/');
  if (slash && slash != out) *slash = '\0';
}

void siox_pg_users_socket_dir(const struct siox_pg *pg, char *out, size_t cap) {
  char dir[4096];
  data_dir_of(pg, dir, sizeof dir);
  snprintf(out, cap, "%s/socket", dir);
}

/* Writes text to DIR/pg/name, owned by postgres, mode 0600. */
static int write_pg_file(const struct siox_pg *pg, const char *name, const char *text) {
  char path[4200], tmp[4300];
  snprintf(path, sizeof path, "%s/%s", pg->dir, name);
  snprintf(tmp, sizeof tmp, "%s.siox-tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return -errno;
  fputs(text, f);
  if (fclose(f) != 0) return unlink(tmp), -EIO;
  int rc = chmod(tmp, 0600) == 0 ? chown_pg(tmp) : -errno;
  if (rc == 0 && rename(tmp, path) != 0) rc = -errno;
  if (rc != 0) unlink(tmp);
  return rc;
}

static int write_ident(const struct siox_pg *pg) {
  char text[1024], buf[4096];
  struct passwd pw, *me = NULL;
  int n = snprintf(text, sizeof text,
                   "# Written by siox-server on every start; edits are lost.\n"
                   "siox_server root postgres\nsiox_server postgres postgres\n");
  if (getpwuid_r(geteuid(), &pw, buf, sizeof buf, &me) == 0 && me && geteuid() != 0)
    snprintf(text + n, sizeof text - (size_t)n, "siox_server %s postgres\n", me->pw_name);
  return write_pg_file(pg, "pg_ident.conf", text);
}

/* Appends the socket settings to postgresql.conf once; later lines win
 * over the first settings block's private-only socket. */
static int write_socket_conf(const struct siox_pg *pg, const char *sockdir) {
  char path[4200], line[512];
  snprintf(path, sizeof path, "%s/postgresql.conf", pg->dir);
  FILE *f = fopen(path, "r+");
  if (!f) return -errno;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, ACCESS_MARKER, strlen(ACCESS_MARKER)) == 0) return fclose(f), 0;
  fprintf(f, "\n" ACCESS_MARKER "\nunix_socket_directories = '%s/run,%s'\nunix_socket_permissions = 0777\n", pg->dir,
          sockdir);
  return fclose(f) == 0 ? 0 : -EIO;
}

int siox_pg_access_write(const struct siox_pg *pg) {
  char sockdir[4200];
  siox_pg_users_socket_dir(pg, sockdir, sizeof sockdir);
  int rc = mkdir(sockdir, 0755) == 0 || errno == EEXIST ? 0 : -errno;
  if (rc == 0 && chmod(sockdir, 0755) != 0) rc = -errno;
  if (rc == 0) rc = chown_pg(sockdir);
  if (rc == 0) rc = write_pg_file(pg, "pg_hba.conf", hba_text);
  if (rc == 0) rc = write_ident(pg);
  if (rc == 0) rc = write_socket_conf(pg, sockdir);
  if (rc != 0) siox_log("cannot set up the cluster's access rules in %s: %s", pg->dir, strerror(-rc));
  return rc;
}

int siox_pg_access_ready(const struct siox_pg *pg) {
  char sockdir[4200], sock[4300];
  struct stat st;
  siox_pg_users_socket_dir(pg, sockdir, sizeof sockdir);
  snprintf(sock, sizeof sock, "%s/.s.PGSQL.5432", sockdir);
  return stat(sock, &st) == 0 && S_ISSOCK(st.st_mode);
}
