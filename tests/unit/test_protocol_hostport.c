/* protocol/hostport.c: the HOST:PORT notation of every address option
 * (server --listen, daemon --server lists, siox status --server, siox web
 * --listen). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "siox_hostport.h"

static int parse(const char *s, char *host, size_t cap, int *port) {
  return siox_hostport_parse(s, strlen(s), host, cap, port);
}

static void accepted(void **state) {
  (void)state;
  char host[64];
  int port = -1;
  assert_int_equal(parse("127.0.0.1:7410", host, sizeof host, &port), 0);
  assert_string_equal(host, "127.0.0.1");
  assert_int_equal(port, 7410);
  assert_int_equal(parse("[::1]:7410", host, sizeof host, &port), 0);
  assert_string_equal(host, "::1");
  assert_int_equal(parse("server.example:0", host, sizeof host, &port), 0); /* the caller refuses 0 if it must */
  assert_string_equal(host, "server.example");
  assert_int_equal(port, 0);
  assert_int_equal(parse("h:65535", host, sizeof host, &port), 0);
  assert_int_equal(port, 65535);
}

static void rejected(void **state) {
  (void)state;
  char host[8];
  int port = 42;
  const char *bad[] = {"host", ":80", "h:", "h:99999", "h:65536", "h:12x", "h:-1", "h: 80", "::1:80", "[]:80",
                       "toolonghost:80", "[::1:80", "h:123456"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_int_equal(parse(bad[i], host, sizeof host, &port), -EINVAL);
    assert_int_equal(port, 42); /* nothing written on failure */
  }
}

/* An entry of a comma-separated list: only its n bytes count. */
static void list_entry(void **state) {
  (void)state;
  const char *list = "a:1,[fe80::2]:22,c:3";
  char host[64];
  int port;
  assert_int_equal(siox_hostport_parse(list + 4, 12, host, sizeof host, &port), 0);
  assert_string_equal(host, "fe80::2");
  assert_int_equal(port, 22);
  assert_int_equal(siox_hostport_parse(list, 3, host, sizeof host, &port), 0);
  assert_string_equal(host, "a");
  assert_int_equal(port, 1);
  assert_int_equal(siox_hostport_parse(list, 2, host, sizeof host, &port), -EINVAL); /* "a:" */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(accepted),
      cmocka_unit_test(rejected),
      cmocka_unit_test(list_entry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
