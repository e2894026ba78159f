/*
 * Authenticated daemons (server runs the default --auth munge with the
 * harness's private munged):
 * - the hijack: daemon A stores batch 1; then connections claiming A's id
 *   with no credential, a garbage one, a valid one made for another daemon
 *   id or host, A's own credential replayed, and a valid one of another uid,
 *   each followed by a Batch with a huge seq, are all refused; A's next
 *   batches are all stored;
 * - two live sessions of one new daemon id under different uids: the second
 *   is refused even before any batch made the warehouse row;
 * - a StatusRequest before authentication gets no counters;
 * - 1,000 Hellos with random ids, unauthenticated and authenticated without
 *   a batch, leave no `daemons` row; A's row records its owner.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hello_cred.h"
#include "server_harness.h"
#include "siox_frame.h"

#define A_ID 77
#define A_HOST "nodeA"
#define PER 100
#define HUGE_SEQ 1000000000ull
#define RANDOM_HELLOS 1000
#define OTHER_UID 65534 /* nobody */

static struct harness srv;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static char *hello_cred(uint64_t id, const char *host) {
  char payload[SIOX_CRED_PAYLOAD_MAX];
  int n = siox_hello_cred_payload(payload, sizeof payload, id, host, now_ns());
  return n > 0 ? cli_munge(payload, (size_t)n) : NULL;
}

/* A valid credential for (id, host) encoded by uid OTHER_UID (a child that
 * drops root), or NULL when we cannot change uid (not root). */
static char *hello_cred_as_other_uid(uint64_t id, const char *host) {
  int p[2];
  if (getuid() != 0 || pipe(p) != 0) return NULL;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    char *c = setgid(OTHER_UID) == 0 && setuid(OTHER_UID) == 0 ? hello_cred(id, host) : NULL;
    if (c && write(p[1], c, strlen(c)) < 0) _exit(1);
    _exit(c ? 0 : 1);
  }
  close(p[1]);
  char buf[4096];
  size_t n = 0;
  for (ssize_t r; n < sizeof buf - 1 && (r = read(p[0], buf + n, sizeof buf - 1 - n)) > 0;) n += (size_t)r;
  close(p[0]);
  int st = 1;
  waitpid(pid, &st, 0);
  buf[n] = '\0';
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 && n ? strdup(buf) : NULL;
}

static void batch_of(struct siox_block *b, uint64_t seq) {
  siox_block_init(b);
  block_spmd(b, 500, 1, A_HOST, 1 + (seq - 1) * PER, PER, 1700000000000000000LL + (int64_t)seq * 1000000);
}

/* Hello with the given credential/token on a new connection; when it is
 * accepted (it must not be), tries the hijack: a Batch with a huge seq.
 * Returns 1 when refused. */
static int refused(uint64_t id, const char *host, const char *cred, const char *token) {
  int fd = cli_connect(srv.port);
  Siox__Hello m = SIOX__HELLO__INIT;
  m.daemon_id = id, m.hostname = (char *)host, m.version = 1;
  if (cred) m.munge_cred.data = (uint8_t *)cred, m.munge_cred.len = strlen(cred);
  if (token) m.token.data = (uint8_t *)token, m.token.len = strlen(token);
  long long acked = cli_hello_msg(fd, &m);
  if (acked >= 0) {
    struct siox_block b;
    batch_of(&b, 1);
    cli_batch(fd, id, HUGE_SEQ, 0, 1000, &b);
    cli_wait_ack(fd, HUGE_SEQ, 20000);
    siox_block_free(&b);
  }
  close(fd);
  return acked < 0;
}

static void send_a(int fd, uint64_t seq) {
  struct siox_block b;
  batch_of(&b, seq);
  CHECK(cli_batch(fd, A_ID, seq, 0, 1000, &b) == 0, "send batch %llu", (unsigned long long)seq);
  CHECK(cli_wait_ack(fd, seq, 60000) == (long long)seq, "ack of A's batch %llu", (unsigned long long)seq);
  siox_block_free(&b);
}

static void test_hijack(PGconn *db) {
  int a = cli_connect(srv.port);
  char *a_cred = hello_cred(A_ID, A_HOST);
  Siox__Hello m = SIOX__HELLO__INIT;
  m.daemon_id = A_ID, m.hostname = A_HOST, m.version = 1;
  if (a_cred) m.munge_cred.data = (uint8_t *)a_cred, m.munge_cred.len = strlen(a_cred);
  CHECK(cli_hello_msg(a, &m) == 0, "A's Hello accepted");
  send_a(a, 1);
  close(a);

  CHECK(refused(A_ID, A_HOST, NULL, NULL), "Hello without a credential refused");
  CHECK(refused(A_ID, A_HOST, NULL, "guess"), "Hello with a token instead of a credential refused");
  CHECK(refused(A_ID, A_HOST, "MUNGE:garbage:", NULL), "garbage credential refused");
  char *other_id = hello_cred(A_ID + 1, A_HOST), *other_host = hello_cred(A_ID, "nodeB");
  CHECK(other_id && refused(A_ID, A_HOST, other_id, NULL), "credential made for another daemon id refused");
  CHECK(other_host && refused(A_ID, A_HOST, other_host, NULL), "credential made for another host refused");
  CHECK(refused(A_ID, A_HOST, a_cred, NULL), "A's credential replayed refused");
  char *nobody = hello_cred_as_other_uid(A_ID, A_HOST);
  if (getuid() == 0) CHECK(nobody && refused(A_ID, A_HOST, nobody, NULL), "A's id claimed by another uid refused");
  CHECK(harness_log_has(&srv, "belongs to munge uid"), "the ownership refusal is logged");
  free(other_id), free(other_host), free(a_cred), free(nobody);

  a = cli_connect(srv.port);
  CHECK(cli_hello(a, A_ID, A_HOST, NULL) == 1, "A reconnects: acked_seq still 1");
  for (uint64_t s = 2; s <= 5; s++) send_a(a, s);
  close(a);
  CHECK(harness_scalar(db, "SELECT count(*) FROM activities") == 5 * PER, "every batch of A stored");
  CHECK(harness_scalar(db, "SELECT acked_seq FROM daemons WHERE daemon_id = 77") == 5, "acked_seq 5");
  char q[256];
  snprintf(q, sizeof q,
           "SELECT count(*) FROM daemons WHERE daemon_id = 77 AND owner_auth = 'munge' AND owner_uid = %u"
           " AND owner_host <> ''", (unsigned)getuid());
  CHECK(harness_scalar(db, q) == 1, "A's row records its owner (munge, uid %u)", (unsigned)getuid());
}

/* Two sessions of a daemon id that has stored nothing yet. */
static void test_live_rival(void) {
  if (getuid() != 0) return; /* needs a second uid */
  int first = cli_connect(srv.port);
  CHECK(cli_hello(first, 88, "nodeC", NULL) == 0, "first session of 88 accepted");
  char *nobody = hello_cred_as_other_uid(88, "nodeC");
  CHECK(nobody && refused(88, "nodeC", nobody, NULL), "second identity for 88 refused while the first is live");
  free(nobody);
  close(first);
}

static void test_status(void) {
  int fd = cli_connect(srv.port);
  Siox__StatusReply *r = cli_status(fd, 0);
  CHECK(r && r->n_counters == 1 && status_counter(r, "db_ok") == 1, "unauthenticated status: db_ok alone (%zu counters)",
        r ? r->n_counters : 0);
  CHECK(status_counter(r, "activities_ingested") < 0 && status_counter(r, "connections") < 0, "no counters revealed");
  if (r) siox__status_reply__free_unpacked(r, NULL);
  r = cli_status(fd, 1);
  CHECK(status_counter(r, "activities_ingested") == 5 * PER, "signed status shows the counters");
  if (r) siox__status_reply__free_unpacked(r, NULL);
  close(fd);
  fd = cli_connect(srv.port);
  CHECK(cli_hello(fd, A_ID, A_HOST, NULL) == 5, "Hello");
  r = cli_status(fd, 0);
  CHECK(status_counter(r, "batches_ingested") == 5, "an authenticated session sees the counters");
  if (r) siox__status_reply__free_unpacked(r, NULL);
  close(fd);
}

static void test_random_ids(PGconn *db) {
  long long before = harness_scalar(db, "SELECT count(*) FROM daemons");
  int accepted = 0, unauth_accepted = 0;
  for (int i = 0; i < RANDOM_HELLOS; i++) {
    uint64_t id;
    if (getrandom(&id, sizeof id, 0) != sizeof id) id = (uint64_t)rand();
    id >>= 1; /* a bigint column */
    int fd = cli_connect(srv.port);
    Siox__Hello m = SIOX__HELLO__INIT;
    m.daemon_id = id, m.hostname = "random", m.version = 1;
    unauth_accepted += cli_hello_msg(fd, &m) >= 0;
    close(fd);
    fd = cli_connect(srv.port);
    accepted += cli_hello(fd, id ^ 1, "random", NULL) == 0;
    close(fd);
  }
  CHECK(unauth_accepted == 0, "%d unauthenticated Hellos accepted", unauth_accepted);
  CHECK(accepted == RANDOM_HELLOS, "%d of %d authenticated Hellos accepted", accepted, RANDOM_HELLOS);
  CHECK(harness_scalar(db, "SELECT count(*) FROM daemons") == before, "no daemons rows made by Hellos (before %lld)",
        before);
}

int main(int argc, char **argv) {
  if (harness_setup(&srv, argc, argv, NULL, NULL) != 0) return 1;
    PGconn *db = harness_db(&srv);
  CHECK(db != NULL, "db");
  if (db) {
    test_hijack(db);
    test_live_rival();
    test_status();
    test_random_ids(db);
  }
  PQfinish(db);
  return harness_finish(&srv, "server_auth");
}
