/* Unit test: siox-daemon's server routing (siox-daemon/route.c): the
 * --server list's syntax, and that entry (daemon id mod count) is picked,
 * deterministically, for the documented rule. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "daemon.h"

static void test_list_syntax(void **state) {
  (void)state;
  assert_int_equal(daemon_server_check("127.0.0.1:7410"), 0);
  assert_int_equal(daemon_server_check("a:1,b:2,[::1]:3"), 0);
  assert_int_equal(daemon_server_count("a:1,b:2,[::1]:3"), 3);
  static const char *const bad[] = {"", "a", "a:", ":1", "a:0", "a:65536", "a:1,", ",a:1", "a:1,,b:2", "a:-1", "[]:1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_int_equal(daemon_server_check(bad[i]), -EINVAL);
  char host[256];
  int port;
  assert_int_equal(daemon_server_entry("a:1,b:2,[::1]:3", 2, host, sizeof host, &port), 0);
  assert_string_equal(host, "::1");
  assert_int_equal(port, 3);
  assert_int_equal(daemon_server_entry("a:1,b:2", 2, host, sizeof host, &port), -EINVAL);
}

/* Entry (id mod N), whatever the id's size: the rule an admin computes. */
static void test_route_by_id(void **state) {
  (void)state;
  struct daemon_config c;
  memset(&c, 0, sizeof c);
  c.server_list = "s0:10,s1:11,s2:12";
  static const uint64_t ids[] = {3, 4, 5, 0xffffffffffffffffull, 0x8000000000000001ull, 1};
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
    assert_int_equal(daemon_route(&c, ids[i]), 0);
    int want = (int)(ids[i] % 3);
    char h[8];
    snprintf(h, sizeof h, "s%d", want);
    assert_string_equal(c.server_host, h);
    assert_int_equal(c.server_port, 10 + want);
  }
  c.server_list = "only:7410";
  assert_int_equal(daemon_route(&c, 12345), 0);
  assert_string_equal(c.server_host, "only");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_list_syntax),
      cmocka_unit_test(test_route_by_id),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
