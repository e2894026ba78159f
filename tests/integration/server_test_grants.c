/*
 * Integration test: server-side rows are visible to a user only through the
 * user's own causal links (issue 9, part 6). A client process of uid 65534
 * (nobody) sends on "obj1" (activity 1) and does something unrelated
 * (activity 2); a brick process of uid 0 receives inside the send (activity
 * 1) with an explicit child, its disk write (3), and serves another request
 * at another time (4, its own root). After the matcher linked S -> R, the
 * server's grant pass must let nobody, connected as themself through the
 * users' socket (peer authentication), read their own two activities plus
 * the brick's R and its child, and nothing else of the brick: not 4, not
 * the brick's global descriptors (paths of every user).
 *
 * The grant pass learns the new links from the database thread, which
 * stored them (siox-server/grant_queue.c; schema 037 took causal_links'
 * link_id away): the link above must come from the in-memory window, and
 * two more cases must be granted too: links of an earlier run (the grants
 * deleted, the server restarted: its first pass reads every link) and a
 * link the SQL matcher stored (a restart with --match-memory off, a second
 * pair on "obj2").
 */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server_harness.h"
#include "siox/siox_ontology.h"
#include "siox_client_wire.h"

#define T0 1700000000000000000LL
#define SEC 1000000000LL

static void client_batch(struct siox_block *b, uint32_t uid) {
  uint32_t p = block_proc(b, 100, "client1", "GlusterFS-client");
  b->processes[p].uid = uid;
  struct siox_block_target *t = siox_block_add_target(b);
  t->proc = p, t->target_id = 1;
  t->hwid = siox_block_strdup(b, "brick1", 6);
  t->swid = siox_block_strdup(b, "GlusterFS-brick", 15);
  block_act(b, p, 1, T0, T0 + 10 * 1000000);
  block_act(b, p, 2, T0 + 5 * SEC, T0 + 5 * SEC + 1000);
  struct siox_block_descriptor *d = block_desc(b, p, SIOX_DESC_SEND, 1, 1, SIOX_ATTR_TEST_HANDLE, "obj1", 4);
  d->offset = 0, d->length = 65536;
}

static void brick_batch(struct siox_block *b) {
  uint32_t p = block_proc(b, 200, "brick1", "GlusterFS-brick");
  b->processes[p].uid = 0;
  block_act(b, p, 1, T0 + 2000000, T0 + 8000000);
  block_act(b, p, 3, T0 + 3000000, T0 + 7000000);
  b->activities[b->n_activities - 1].parent = 1;
  block_act(b, p, 4, T0 + 30 * SEC, T0 + 30 * SEC + 1000);
  struct siox_block_descriptor *d = block_desc(b, p, SIOX_DESC_RECEIVE, 1, 1, SIOX_ATTR_TEST_HANDLE, "obj1", 4);
  d->offset = 0, d->length = 4096;
}

/* The second pair, 60 s later on "obj2": client activity 5 sends, brick
 * activity 5 receives inside it. */
static void second_pair(struct siox_block *b, int brick, uint32_t uid) {
  uint32_t p = brick ? block_proc(b, 200, "brick1", "GlusterFS-brick") : block_proc(b, 100, "client1", "GlusterFS-client");
  b->processes[p].uid = uid;
  int64_t s = T0 + 60 * SEC;
  if (brick) block_act(b, p, 5, s + 2000000, s + 8000000);
  else block_act(b, p, 5, s, s + 10 * 1000000);
  struct siox_block_descriptor *d =
      block_desc(b, p, brick ? SIOX_DESC_RECEIVE : SIOX_DESC_SEND, 5, 1, SIOX_ATTR_TEST_HANDLE, "obj2", 4);
  d->offset = 0, d->length = 4096;
}

static void send_one(int port, uint64_t daemon, const char *host, uint64_t seq, struct siox_block *b) {
  int fd = cli_connect(port);
  CHECK(cli_hello(fd, daemon, host, NULL) == (long long)seq - 1, "hello");
  CHECK(cli_batch(fd, daemon, seq, 0, 20000, b) == 0, "send");
  CHECK(cli_wait_ack(fd, seq, 60000) == (long long)seq, "ack");
  close(fd);
}

/* Waits up to 20 s for want grants; returns how many there are. */
static long long wait_grants(PGconn *c, long long want) {
  long long n = 0;
  for (int i = 0; c && i < 200 && (n = harness_scalar(c, "SELECT count(*) FROM siox_activity_grants")) < want; i++)
    usleep(100000);
  return n;
}

/* Runs sql as Unix user pw through DIR/conninfo (a forked child that drops
 * to the user, so peer authentication names that user) and returns the
 * first value as a number, or -1. */
static long long as_user(const struct harness *h, const struct passwd *pw, const char *sql) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) _exit(3);
    PGconn *c = harness_db(h);
    long long v = c ? harness_scalar(c, sql) : -1;
    dprintf(fds[1], "%lld", v);
    _exit(0);
  }
  close(fds[1]);
  char buf[32] = "";
  ssize_t n = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  waitpid(pid, NULL, 0);
  return n > 0 ? strtoll(buf, NULL, 10) : -1;
}

int main(int argc, char **argv) {
  struct passwd *pw = getpwnam("nobody");
  if (geteuid() != 0 || !pw) return puts("SKIP: needs root and a user nobody"), 77;
  struct passwd nobody = *pw;
  struct harness h;
  const char *const args[] = {"--match-ms", "200", NULL};
  if (harness_setup(&h, argc, argv, NULL, args) != 0) return 1;
  struct siox_block b;
  siox_block_init(&b);
  brick_batch(&b);
  send_one(h.port, 2, "brick1", 1, &b);
  siox_block_free(&b);
  siox_block_init(&b);
  client_batch(&b, nobody.pw_uid);
  send_one(h.port, 1, "client1", 1, &b);
  siox_block_free(&b);
  PGconn *c = harness_db(&h);
  long long n = wait_grants(c, 2);
  CHECK(n == 2, "the brick's R and its child granted to nobody (%lld grants)", n);
  CHECK(server_counter(h.port, "links_memory") == 1, "the link came from the in-memory window");
  /* The embedded cluster's backend is local: its COPY of the link counts. */
  CHECK(server_counter(h.port, "match_cpu_us") > 0, "the window's CPU time is counted (match_cpu_us %lld)",
        server_counter(h.port, "match_cpu_us"));
  CHECK(harness_scalar(c, "SELECT count(*) FROM activities") == 5, "root (superuser) sees all 5 activities");
  long long seen = as_user(&h, &nobody,
                           "SELECT sum(CASE WHEN p.pid = 100 THEN 100 ELSE 0 END + CASE WHEN p.pid = 200 THEN"
                           " (1 << (a.aid & 255)::integer) ELSE 0 END) FROM activities a JOIN processes p USING (proc_id)");
  /* 2 own (100 each) + brick's aids 1 and 3 (2 + 8); 4 (16) must be absent. */
  CHECK(seen == 210, "nobody reads own 1, 2 and the brick's 1 and 3 only (code %lld, want 210)", seen);
  CHECK(as_user(&h, &nobody, "SELECT count(*) FROM causal_edges") == 2, "nobody's edges: the link and the brick's");
  CHECK(as_user(&h, &nobody, "SELECT count(*) FROM descriptors WHERE scope_key = ''") == 0,
        "global descriptors (every user's paths) hidden");
  CHECK(harness_scalar(c, "SELECT count(*) FROM descriptors WHERE scope_key = ''") > 0, "there are global ones");

  /* Links of an earlier run: granted by the next start's first pass. */
  CHECK(harness_scalar(c, "WITH d AS (DELETE FROM siox_activity_grants RETURNING 1) SELECT count(*) FROM d") == 2, "grants deleted");
  PQfinish(c);
  const char *const sql_only[] = {"--match-ms", "200", "--match-memory", "off", NULL};
  CHECK(harness_stop(&h) == 0, "clean stop");
  CHECK(harness_start(&h, sql_only) == 0, "restart with --match-memory off");
  c = harness_db(&h);
  CHECK((n = wait_grants(c, 2)) == 2, "an earlier run's link granted again after a start (%lld grants)", n);

  /* A link the SQL matcher stored. */
  siox_block_init(&b);
  second_pair(&b, 1, 0);
  send_one(h.port, 2, "brick1", 2, &b);
  siox_block_free(&b);
  siox_block_init(&b);
  second_pair(&b, 0, nobody.pw_uid);
  send_one(h.port, 1, "client1", 2, &b);
  siox_block_free(&b);
  CHECK((n = wait_grants(c, 3)) == 3, "the SQL matcher's link granted too (%lld grants)", n);
  CHECK(server_counter(h.port, "links_memory") == 0 && server_counter(h.port, "links_implicit") == 1,
        "that link came from the SQL matcher");
  CHECK(as_user(&h, &nobody, "SELECT count(*) FROM activities WHERE aid & 255 = 5") == 2,
        "nobody reads both ends of the second pair");
  PQfinish(c);
  return harness_finish(&h, "server_grants");
}
