/*
 * Who may read the warehouse (schema 011_roles_rls.sql): siox-server gives
 * every Unix user whose process it stored a login role of the same name,
 * so that peer authentication on the embedded cluster's socket lets `siox`
 * run by that user in as that role, and row-level security shows the user
 * their own rows. Members of --admin-group get siox_admin (every row); the
 * Unix users that own the cluster (root, postgres, the server's own user)
 * are its superusers. After the matcher links a user's activity to a
 * server-side one (a brick, a device), a grant pass makes that activity and
 * everything causally below it readable by the user (siox_activity_grants).
 *
 * The pass runs as a job on the database thread every ROLES_PERIOD_MS, so
 * role creation never blocks the loop and never races ingest's connection.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server.h"

#define ROLES_PERIOD_MS 1000
#define MAX_SKIPPED 256 /* uids without a passwd entry, not looked up again */

struct siox_roles {
  uv_timer_t timer;
  struct siox_server *srv;
  int pending, closed, off;      /* off: the database refused CREATE ROLE */
  uid_t skipped[MAX_SKIPPED];
  size_t n_skipped;
};

struct roles_job {
  struct siox_job base;
  struct siox_roles *r;
};

/* Every causal link from one uid's activity to another uid's makes the
 * child, and everything below it (explicit children, further links),
 * readable by the parent's owner; so does a link from an activity already
 * granted (a brick's write to its device). A pass is seeded by the links
 * stored since the last one (grant_queue.c: $1 parents, $2 children), of
 * which only those that pass these tests are looked up in causal_links
 * (the OFFSET keeps that probe after the tests): a link withdrawn before
 * the pass grants nothing. Or by every link (start, reconnect, overflow).
 * ON CONFLICT keeps it idempotent. The recursion looks children up by
 * index, one level at a time. */
#define SEED(LINKS)                                                                           \
  "   SELECT pp.uid, l.parent_aid, l.child_aid FROM " LINKS                                   \
  "     JOIN processes pp ON pp.proc_id = (l.parent_aid >> 32)::integer"                     \
  "     JOIN processes pc ON pc.proc_id = (l.child_aid >> 32)::integer"                      \
  "    WHERE pc.uid <> pp.uid"                                                                \
  "   UNION ALL"                                                                              \
  "   SELECT x.uid, l.parent_aid, l.child_aid FROM " LINKS                                    \
  "     JOIN siox_activity_grants x ON x.aid = l.parent_aid"
#define GRANTS(SEED_SQL)                                                                      \
  "INSERT INTO siox_activity_grants (uid, aid)"                                               \
  " WITH RECURSIVE seed(uid, aid) AS (" SEED_SQL "),"                                         \
  " g(uid, aid) AS ("                                                                         \
  "   SELECT uid, aid FROM seed"                                                              \
  "   UNION"                                                                                  \
  "   SELECT g.uid, e.child_aid FROM g, LATERAL ("                                            \
  "     SELECT a.aid AS child_aid FROM activities a WHERE a.parent_aid = g.aid"               \
  "     UNION ALL SELECT l.child_aid FROM causal_links l WHERE l.parent_aid = g.aid) e)"      \
  " SELECT uid, aid FROM g ON CONFLICT DO NOTHING"

static const char grants_new_sql[] = GRANTS(
    "SELECT s.uid, s.child_aid FROM (" SEED("unnest($1::bigint[], $2::bigint[]) l(parent_aid, child_aid)") " OFFSET 0) s"
    " WHERE EXISTS (SELECT 1 FROM causal_links k WHERE k.parent_aid = s.parent_aid AND k.child_aid = s.child_aid)");
static const char grants_all_sql[] = GRANTS("SELECT s.uid, s.child_aid FROM (" SEED("causal_links l") ") s");

/* One grant pass over the links stored since the last one. */
static void grant_pass(struct siox_db *db) {
  struct siox_grant_queue *q = &db->grants;
  int all = q->all;
  if (!all && q->committed == 0) return;
  char *par = NULL, *chi = NULL;
  size_t n = 0;
  if (!all && siox_grant_queue_arrays(q, &par, &chi, &n) != 0) return; /* kept for the next pass */
  const char *p[] = {par, chi};
  PGresult *res = siox_db_query(db->conn, all ? grants_all_sql : grants_new_sql, all ? 0 : 2, p);
  if (res) siox_grant_queue_taken(q, n, all);
  PQclear(res);
  free(par), free(chi);
}

/* 1 when user (name, primary gid) is in group, else 0. */
static int in_group(const char *name, gid_t gid, const char *group) {
  if (!group || !*group) return 0;
  char buf[16384];
  struct group gr, *res = NULL;
  if (getgrnam_r(group, &gr, buf, sizeof buf, &res) != 0 || !res) return 0;
  if (gr.gr_gid == gid) return 1;
  for (char **m = gr.gr_mem; m && *m; m++)
    if (strcmp(*m, name) == 0) return 1;
  return 0;
}

/* The Unix users that own the embedded cluster: its superusers. */
static int owns_cluster(const char *name) {
  char buf[4096];
  struct passwd pw, *res = NULL;
  if (strcmp(name, "root") == 0 || strcmp(name, "postgres") == 0) return 1;
  return getpwuid_r(geteuid(), &pw, buf, sizeof buf, &res) == 0 && res && strcmp(res->pw_name, name) == 0;
}

enum role_kind { ROLE_READER, ROLE_ADMIN, ROLE_SUPER };

static const char *kind_name(enum role_kind k) {
  return k == ROLE_SUPER ? "superuser" : k == ROLE_ADMIN ? "siox_admin" : "siox_reader";
}

/* Creates (or adopts) login role `name` of kind k for uid and records it.
 * Returns 0, -EPERM when the database may not create roles, or -EIO. */
static int ensure_role(PGconn *c, uid_t uid, const char *name, enum role_kind k) {
  char *ident = PQescapeIdentifier(c, name, strlen(name));
  if (!ident) return -ENOMEM;
  const char *p[] = {name};
  PGresult *r = siox_db_query(c, "SELECT 1 FROM pg_roles WHERE rolname = $1", 1, p);
  int rc = r ? 0 : -EIO, exists = r && PQntuples(r) > 0;
  PQclear(r);
  char sql[1024];
  if (rc == 0 && !exists) {
    snprintf(sql, sizeof sql, "CREATE ROLE %s LOGIN%s", ident, k == ROLE_SUPER ? " SUPERUSER" : "");
    r = PQexec(c, sql);
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
      rc = state && strcmp(state, "42501") == 0 ? -EPERM : (siox_log("%s: %s", sql, PQresultErrorMessage(r)), -EIO);
    PQclear(r);
  }
  if (rc == 0 && k != ROLE_SUPER) {
    snprintf(sql, sizeof sql, "GRANT %s TO %s", kind_name(k), ident);
    rc = siox_db_exec(c, sql);
  }
  PQfreemem(ident);
  if (rc != 0) return rc;
  char u[16];
  snprintf(u, sizeof u, "%u", (unsigned)uid);
  const char *q[] = {u, name, k == ROLE_READER ? "f" : "t"};
  r = siox_db_query(c,
                    "INSERT INTO siox_users (uid, role, admin) VALUES ($1, $2, $3)"
                    " ON CONFLICT (uid) DO UPDATE SET role = EXCLUDED.role, admin = EXCLUDED.admin",
                    3, q);
  if (!r) return -EIO;
  PQclear(r);
  if (!exists) siox_log("created warehouse role %s (%s) for uid %u", name, kind_name(k), (unsigned)uid);
  return 0;
}

/* The role of uid, by its passwd entry. -ENOENT: no such user. */
static int role_for_uid(PGconn *c, uid_t uid, const char *admin_group, int embedded) {
  char buf[4096];
  struct passwd pw, *res = NULL;
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) != 0 || !res) return -ENOENT;
  enum role_kind k = embedded && owns_cluster(res->pw_name) ? ROLE_SUPER
                     : in_group(res->pw_name, res->pw_gid, admin_group) ? ROLE_ADMIN
                                                                        : ROLE_READER;
  return ensure_role(c, uid, res->pw_name, k);
}

int siox_roles_prepare(PGconn *c, const char *admin_group, int embedded) {
  int rc = 0;
  if (embedded) {
    rc = role_for_uid(c, geteuid(), admin_group, embedded);
    if (rc == 0 && geteuid() != 0) rc = role_for_uid(c, 0, admin_group, embedded);
  }
  if (rc != 0 || !admin_group || !*admin_group) return rc == -ENOENT ? 0 : rc;
  char buf[16384];
  struct group gr, *res = NULL;
  if (getgrnam_r(admin_group, &gr, buf, sizeof buf, &res) != 0 || !res)
    return siox_log("--admin-group %s: no such group", admin_group), -ENOENT;
  /* Members by their primary group and by the group's list: every passwd
   * entry is asked (at start, on the main thread). */
  char pbuf[4096];
  struct passwd pw, *p = NULL;
  setpwent();
  while (rc == 0 && getpwent_r(&pw, pbuf, sizeof pbuf, &p) == 0 && p)
    if (in_group(p->pw_name, p->pw_gid, admin_group)) rc = role_for_uid(c, p->pw_uid, admin_group, embedded);
  endpwent();
  return rc;
}

static int skipped(const struct siox_roles *r, uid_t uid) {
  for (size_t i = 0; i < r->n_skipped; i++)
    if (r->skipped[i] == uid) return 1;
  return 0;
}

/* Roles for the uids of stored processes that have none yet. */
static void new_users(struct siox_roles *r, PGconn *c) {
  PGresult *res = siox_db_query(
      c, "SELECT DISTINCT uid FROM processes WHERE uid NOT IN (SELECT uid FROM siox_users) AND uid >= 0", 0, NULL);
  const struct siox_server_options *o = r->srv->opt;
  for (int i = 0; res && i < PQntuples(res) && !r->off; i++) {
    uid_t uid = (uid_t)strtoul(PQgetvalue(res, i, 0), NULL, 10);
    if (skipped(r, uid)) continue;
    int rc = role_for_uid(c, uid, o->admin_group, !o->db);
    if (rc == -EPERM) {
      siox_log("the database refuses CREATE ROLE: no login roles for users (create them as members of siox_reader)");
      r->off = 1;
    } else if (rc == -ENOENT && r->n_skipped < MAX_SKIPPED) {
      siox_log("uid %u has no passwd entry: no warehouse role for it", (unsigned)uid);
      r->skipped[r->n_skipped++] = uid;
    }
  }
  PQclear(res);
}

static void roles_run(struct siox_job *j, struct siox_db *db) {
  struct roles_job *rj = (struct roles_job *)j;
  if (!db->conn || PQstatus(db->conn) != CONNECTION_OK) return;
  if (!rj->r->off) new_users(rj->r, db->conn);
  grant_pass(db);
}

static void roles_done(struct siox_job *j, struct siox_db *db) {
  (void)db;
  struct siox_roles *r = ((struct roles_job *)j)->r;
  r->pending = 0;
  if (r->closed) free(r);
  free(j);
}

static void on_tick(uv_timer_t *t) {
  struct siox_roles *r = t->data;
  struct siox_server *s = r->srv;
  if (r->pending) return;
  struct roles_job *j = calloc(1, sizeof *j);
  if (!j) return;
  j->base.run = roles_run;
  j->base.done = roles_done;
  j->r = r;
  r->pending = 1;
  siox_worker_submit(&s->worker, &j->base);
}

int siox_roles_start(struct siox_server *s) {
  struct siox_roles *r = calloc(1, sizeof *r);
  if (!r) return -ENOMEM;
  r->srv = s;
  uv_timer_init(s->loop, &r->timer);
  r->timer.data = r;
  uv_timer_start(&r->timer, on_tick, ROLES_PERIOD_MS, ROLES_PERIOD_MS);
  s->roles = r;
  return 0;
}

/* A job still queued frees r when it comes back (roles_done). */
static void on_timer_closed(uv_handle_t *h) {
  struct siox_roles *r = h->data;
  r->closed = 1;
  if (!r->pending) free(r);
}

void siox_roles_stop(struct siox_server *s) {
  if (!s->roles) return;
  uv_close((uv_handle_t *)&s->roles->timer, on_timer_closed);
  s->roles = NULL;
}
