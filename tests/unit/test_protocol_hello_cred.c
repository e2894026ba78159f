/* Unit test: the payloads inside MUNGE credentials (protocol/hello_cred.c):
 * a Hello payload matches only the daemon id and host it was made for, and
 * nothing may follow its time; status payloads are told apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hello_cred.h"

static void test_hello(void **state) {
  (void)state;
  char p[SIOX_CRED_PAYLOAD_MAX];
  int n = siox_hello_cred_payload(p, sizeof p, 0x2a, "node1", 1700000000000000000LL);
  assert_true(n > 0);
  assert_string_equal(p, "siox-hello 1 id=000000000000002a host=node1 t=1700000000000000000");
  assert_true(siox_hello_cred_matches(p, (size_t)n, 0x2a, "node1"));
  assert_false(siox_hello_cred_matches(p, (size_t)n, 0x2b, "node1"));  /* another daemon id */
  assert_false(siox_hello_cred_matches(p, (size_t)n, 0x2a, "node"));   /* a prefix of the host */
  assert_false(siox_hello_cred_matches(p, (size_t)n, 0x2a, "node12")); /* a longer host */
  assert_false(siox_hello_cred_matches(p, (size_t)n - 20, 0x2a, "node1"));
  assert_false(siox_status_cred_matches(p, (size_t)n));
  const char *tail = "siox-hello 1 id=000000000000002a host=node1 t=17 host=evil";
  assert_false(siox_hello_cred_matches(tail, strlen(tail), 0x2a, "node1"));
  const char *empty = "siox-hello 1 id=000000000000002a host=node1 t=";
  assert_false(siox_hello_cred_matches(empty, strlen(empty), 0x2a, "node1"));
  assert_false(siox_hello_cred_matches(NULL, 0, 0x2a, "node1"));
  char small[16];
  assert_int_equal(siox_hello_cred_payload(small, sizeof small, 1, "h", 1), -1);
}

static void test_status(void **state) {
  (void)state;
  char p[SIOX_CRED_PAYLOAD_MAX];
  int n = siox_status_cred_payload(p, sizeof p, 5);
  assert_true(n > 0);
  assert_true(siox_status_cred_matches(p, (size_t)n));
  assert_false(siox_hello_cred_matches(p, (size_t)n, 0, ""));
  assert_false(siox_status_cred_matches("siox-status 1 t=x", 17));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hello),
      cmocka_unit_test(test_status),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
