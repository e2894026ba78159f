/* Unit test: siox-server command line (siox-server/options.c): defaults,
 * every agreed option, HOST:PORT forms, and rejection of bad input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "options.h"
#include "shard_owner.h"

static int parse(struct siox_server_options *o, int argc, const char **argv) {
  char err[256];
  return siox_server_options_parse(argc, (char **)argv, o, err, sizeof err);
}

static void test_defaults(void **state) {
  (void)state;
  struct siox_server_options o;
  const char *argv[] = {"siox-server", NULL};
  assert_int_equal(parse(&o, 1, argv), 0);
  assert_string_equal(o.host, "127.0.0.1");
  assert_int_equal(o.port, 7410);
  assert_string_equal(o.data_dir, "/var/lib/siox/server");
  assert_null(o.db);
  assert_null(o.token_file);
  assert_int_equal(o.match_ms, 500);
  assert_int_equal(o.late_ms, 2000);
}

static void test_all_options(void **state) {
  (void)state;
  struct siox_server_options o;
  const char *argv[] = {"siox-server", "--listen", "0.0.0.0:9000", "--data-dir", "/d", "--db", "dbname=x",
                        "--token-file", "/t", "--pid-file", "/p", "--match-ms", "50", "--pg-bindir", "/b", NULL};
  assert_int_equal(parse(&o, 15, argv), 0);
  assert_string_equal(o.host, "0.0.0.0");
  assert_int_equal(o.port, 9000);
  assert_string_equal(o.data_dir, "/d");
  assert_string_equal(o.db, "dbname=x");
  assert_string_equal(o.token_file, "/t");
  assert_string_equal(o.pid_file, "/p");
  assert_string_equal(o.pg_bindir, "/b");
  assert_int_equal(o.match_ms, 50);
  const char *help[] = {"siox-server", "--help", NULL};
  assert_int_equal(parse(&o, 2, help), 0);
  assert_true(o.help);
}

static void test_late_ms(void **state) {
  (void)state;
  struct siox_server_options o;
  const char *a[] = {"siox-server", "--late-ms", "500", NULL};
  assert_int_equal(parse(&o, 3, a), 0);
  assert_int_equal(o.late_ms, 500);
  const char *off[] = {"siox-server", "--late-ms", "0", NULL};
  assert_int_equal(parse(&o, 3, off), 0);
  assert_int_equal(o.late_ms, 0);
  const char *neg[] = {"siox-server", "--late-ms", "-1", NULL};
  assert_int_not_equal(parse(&o, 3, neg), 0);
  const char *big[] = {"siox-server", "--late-ms", "60001", NULL};
  assert_int_not_equal(parse(&o, 3, big), 0);
}

/* --auth: munge by default, token implied by --token-file alone, and the
 * combinations that cannot work refused; TLS files go in pairs. */
static void test_auth_tls(void **state) {
  (void)state;
  struct siox_server_options o;
  const char *def[] = {"siox-server", NULL};
  assert_int_equal(parse(&o, 1, def), 0);
  assert_int_equal(o.auth, SIOX_AUTH_MUNGE);
  const char *tok[] = {"siox-server", "--token-file", "/t", NULL};
  assert_int_equal(parse(&o, 3, tok), 0);
  assert_int_equal(o.auth, SIOX_AUTH_TOKEN);
  const char *none[] = {"siox-server", "--auth", "none", "--munge-socket", "/m", NULL};
  assert_int_equal(parse(&o, 5, none), 0);
  assert_int_equal(o.auth, SIOX_AUTH_NONE);
  assert_string_equal(o.munge_socket, "/m");
  const char *notok[] = {"siox-server", "--auth", "token", NULL};
  assert_int_not_equal(parse(&o, 3, notok), 0);
  const char *bad[] = {"siox-server", "--auth", "kerberos", NULL};
  assert_int_not_equal(parse(&o, 3, bad), 0);
  const char *half[] = {"siox-server", "--tls-cert", "/c", NULL};
  assert_int_not_equal(parse(&o, 3, half), 0);
  const char *tls[] = {"siox-server", "--tls-cert", "/c", "--tls-key", "/k", "--insecure", NULL};
  assert_int_equal(parse(&o, 6, tls), 0);
  assert_string_equal(o.tls_cert, "/c");
  assert_string_equal(o.tls_key, "/k");
  assert_true(o.insecure);
}

/* --memory-mb: a sane default, bounds below which a batch cannot be decoded. */
static void test_memory_mb(void **state) {
  (void)state;
  struct siox_server_options o;
  const char *none[] = {"siox-server", NULL};
  assert_int_equal(parse(&o, 1, none), 0);
  assert_int_equal(o.memory_mb, 512);
  const char *a[] = {"siox-server", "--memory-mb", "2048", NULL};
  assert_int_equal(parse(&o, 3, a), 0);
  assert_int_equal(o.memory_mb, 2048);
  const char *small[] = {"siox-server", "--memory-mb", "255", NULL}; /* a 64k batch needs a 32 MiB slot */
  assert_int_not_equal(parse(&o, 3, small), 0);
  const char *junk[] = {"siox-server", "--memory-mb", "1G", NULL};
  assert_int_not_equal(parse(&o, 3, junk), 0);
}

/* Issue 9: the --db password file and the admin group; a passfile makes
 * no sense for the embedded cluster (peer authentication). */
static void test_access_options(void **state) {
  (void)state;
  struct siox_server_options o;
  const char *argv[] = {"siox-server", "--db", "dbname=x", "--db-passfile", "/pw", "--admin-group", "adm", NULL};
  assert_int_equal(parse(&o, 7, argv), 0);
  assert_string_equal(o.db_passfile, "/pw");
  assert_string_equal(o.admin_group, "adm");
  const char *nodb[] = {"siox-server", "--db-passfile", "/pw", NULL};
  assert_int_equal(parse(&o, 3, nodb), -EINVAL);
  const char *none[] = {"siox-server", NULL};
  assert_int_equal(parse(&o, 1, none), 0);
  assert_null(o.db_passfile);
  assert_null(o.admin_group);
}

static void test_rejects(void **state) {
  (void)state;
  struct siox_server_options o;
  const char *a[] = {"siox-server", "--listen", "nope", NULL};
  assert_int_not_equal(parse(&o, 3, a), 0);
  const char *b[] = {"siox-server", "--bogus", NULL};
  assert_int_not_equal(parse(&o, 2, b), 0);
  const char *c[] = {"siox-server", "extra", NULL};
  assert_int_not_equal(parse(&o, 2, c), 0);
  const char *d[] = {"siox-server", "--match-ms", "0", NULL};
  assert_int_not_equal(parse(&o, 3, d), 0);
  const char *e[] = {"siox-server", "--data-dir", NULL};
  assert_int_not_equal(parse(&o, 2, e), 0);
}

/* --shard K/N, --coordinator with repeated --shard-db, and their misuse. */
static void test_shards(void **state) {
  (void)state;
  struct siox_server_options o;
  const char *a[] = {"siox-server", "--shard", "2/3", NULL};
  assert_int_equal(parse(&o, 3, a), 0);
  assert_int_equal(o.shard, 2);
  assert_int_equal(o.nshards, 3);
  const char *none[] = {"siox-server", NULL};
  assert_int_equal(parse(&o, 1, none), 0);
  assert_int_equal(o.shard, 0);
  assert_int_equal(o.coordinator, 0);
  const char *c[] = {"siox-server", "--coordinator", "--shard-db", "host=/a dbname=siox", "--shard-db", "host=/b", NULL};
  assert_int_equal(parse(&o, 6, c), 0);
  assert_int_equal(o.coordinator, 1);
  assert_int_equal(o.n_shard_db, 2);
  assert_string_equal(o.shard_db[1], "host=/b");
  static const char *const bad[] = {"0/3", "4/3", "1/0", "1/128", "3", "/3", "1/", "a/b", "1/3x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *b[] = {"siox-server", "--shard", bad[i], NULL};
    assert_int_equal(parse(&o, 3, b), -EINVAL);
  }
  const char *lone[] = {"siox-server", "--coordinator", NULL};
  assert_int_equal(parse(&o, 2, lone), -EINVAL);
  const char *stray[] = {"siox-server", "--shard-db", "host=/a", NULL};
  assert_int_equal(parse(&o, 3, stray), -EINVAL);
  const char *both[] = {"siox-server", "--coordinator", "--shard-db", "host=/a", "--shard", "1/2", NULL};
  assert_int_equal(parse(&o, 6, both), -EINVAL);
}

/* --shard-peer J=CONNINFO: per J once, only with --shard, J in the site
 * and not this shard. */
static void test_shard_peers(void **state) {
  (void)state;
  struct siox_server_options o;
  const char *a[] = {"siox-server", "--shard", "2/3", "--shard-peer", "1=host=/a dbname=siox", "--shard-peer",
                     "3=host=/c", NULL};
  assert_int_equal(parse(&o, 7, a), 0);
  assert_int_equal(o.n_shard_peer, 2);
  assert_string_equal(o.shard_peer[1], "host=/a dbname=siox");
  assert_null(o.shard_peer[2]);
  assert_string_equal(o.shard_peer[3], "host=/c");
  const char *none[] = {"siox-server", "--shard", "2/3", NULL};
  assert_int_equal(parse(&o, 3, none), 0);
  assert_int_equal(o.n_shard_peer, 0);
  static const char *const bad[][2] = {{"2/3", "2=host=/b"}, {"2/3", "4=host=/d"}, {"2/3", "0=host=/a"},
                                       {"2/3", "1="},         {"2/3", "host=/a"},   {"2/3", "x=host=/a"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    const char *b[] = {"siox-server", "--shard", bad[i][0], "--shard-peer", bad[i][1], NULL};
    assert_int_equal(parse(&o, 5, b), -EINVAL);
  }
  const char *twice[] = {"siox-server", "--shard", "2/3", "--shard-peer", "1=host=/a", "--shard-peer", "1=host=/b", NULL};
  assert_int_equal(parse(&o, 7, twice), -EINVAL);
  const char *alone[] = {"siox-server", "--shard-peer", "1=host=/a", NULL};
  assert_int_equal(parse(&o, 3, alone), -EINVAL);
  const char *partial[] = {"siox-server", "--shard", "2/3", "--shard-peer", "1=host=/a", NULL};
  assert_int_equal(parse(&o, 5, partial), -EINVAL); /* shard 3's calls would never leave */
}

/* The owner rule is the documented hash: FNV-1a 64 of "TYPE\x1fVALUE",
 * mod N, plus 1 (values computed with Python; 12 is test/handle, as
 * integration_shard_links computes them). */
static void test_shard_owner(void **state) {
  (void)state;
  assert_int_equal(siox_shard_owner(25, "file-0", 1), 1);
  for (int n = 1; n <= 127; n++) {
    int k = siox_shard_owner(7, "00112233445566778899aabbccddeeff", n);
    assert_true(k >= 1 && k <= n);
  }
  assert_int_equal(siox_shard_owner(12, "file-0", 3), 2);
  assert_int_equal(siox_shard_owner(12, "file-1", 3), 3);
  assert_int_equal(siox_shard_owner(12, "file-2", 3), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_all_options),
      cmocka_unit_test(test_late_ms),
      cmocka_unit_test(test_auth_tls),
      cmocka_unit_test(test_memory_mb),
      cmocka_unit_test(test_access_options),
      cmocka_unit_test(test_rejects),
      cmocka_unit_test(test_shards),
      cmocka_unit_test(test_shard_peers),
      cmocka_unit_test(test_shard_owner),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
