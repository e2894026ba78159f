/*
 * siox-example-chain: a small instrumented "I/O stack" in two processes, built
 * on the client C API alone. The parent is an application with a file-system
 * client layer; for every write it makes a remote call (over a socketpair) to
 * a child process playing the storage server, which writes to one of two
 * peer devices. One device can be made slow. This is the workload of the
 * pipeline's integration tests and of the demo:
 *
 *   app:write -> fs-client:write --(remote, descriptor + range)--> server:handle_write -> device:write
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <siox/siox.h>

struct options {
  int writes;
  int slow_device; /* -1: none */
  unsigned slow_us, fast_us;
  uint64_t block;
  const char *object;
  const char *server_object; /* NULL: object; else the server's name of it */
  const char *map_to;        /* set: only report that object is also named map_to */
  const char *server_socket; /* NULL: $SIOX_SOCKET, as the app's */
};

struct request {
  uint64_t index, offset, length;
};

static void usage(FILE *out) {
  fprintf(out,
          "usage: siox-example-chain [OPTIONS]\n"
          "\n"
          "Runs a two-process, three-layer I/O chain instrumented with libsiox-client:\n"
          "app:write -> fs-client:write -> (remote call) server:handle_write -> device:write.\n"
          "The server alternates between devices dev0 and dev1.\n"
          "\n"
          "  -n, --writes N        number of writes (default 20)\n"
          "  -s, --slow-device D   make device D (0 or 1) slow; -1 for none (default 1)\n"
          "      --slow-us US      service time of the slow device (default 20000)\n"
          "      --fast-us US      service time of a normal device (default 1000)\n"
          "  -b, --block BYTES     bytes per write (default 65536)\n"
          "  -o, --object NAME     object name sent as descriptor (default chain-<pid>)\n"
          "      --server-object NAME  the server names the object NAME instead (a second\n"
          "                        global name, as a brick names a gfid the client sent\n"
          "                        as a path): linked only where a mapping joins them\n"
          "      --map-to NAME     run no chain: report only that --object is also named\n"
          "                        NAME (a MAP record, as GlusterFS maps a path to its gfid)\n"
          "      --server-socket P the storage server process reports to the daemon at\n"
          "                        socket P instead (two nodes: its records then reach\n"
          "                        the warehouse through another daemon than the app's)\n"
          "  -h, --help            this text\n"
          "\n"
          "The daemon socket comes from $SIOX_SOCKET. Exit status 0 on success.\n");
}

static int parse_options(int argc, char **argv, struct options *o) {
  static const struct option longs[] = {
      {"writes", required_argument, 0, 'n'}, {"slow-device", required_argument, 0, 's'},
      {"slow-us", required_argument, 0, 'S'}, {"fast-us", required_argument, 0, 'F'},
      {"block", required_argument, 0, 'b'},  {"object", required_argument, 0, 'o'},
      {"server-socket", required_argument, 0, 'P'}, {"server-object", required_argument, 0, 'O'},
      {"map-to", required_argument, 0, 'M'},        {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  *o = (struct options){20, 1, 20000, 1000, 65536, NULL, NULL, NULL, NULL};
  int c;
  while ((c = getopt_long(argc, argv, "n:s:b:o:h", longs, NULL)) != -1) {
    switch (c) {
    case 'n': o->writes = atoi(optarg); break;
    case 's': o->slow_device = atoi(optarg); break;
    case 'S': o->slow_us = (unsigned)strtoul(optarg, NULL, 10); break;
    case 'F': o->fast_us = (unsigned)strtoul(optarg, NULL, 10); break;
    case 'b': o->block = strtoull(optarg, NULL, 10); break;
    case 'o': o->object = optarg; break;
    case 'P': o->server_socket = optarg; break;
    case 'O': o->server_object = optarg; break;
    case 'M': o->map_to = optarg; break;
    case 'h': usage(stdout); exit(0);
    default: usage(stderr); return -1;
    }
  }
  if (o->writes <= 0 || o->slow_device < -1 || o->slow_device > 1 || o->block == 0) {
    fprintf(stderr, "siox-example-chain: bad option value (see --help)\n");
    return -1;
  }
  return 0;
}

static int full_io(int fd, void *buf, size_t len, int writing) {
  char *p = buf;
  while (len > 0) {
    ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

static void sleep_us(unsigned us) {
  struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* ---- the storage server (child process) ---------------------------------- */

struct server_layer {
  siox_type_id handle, dev_write[2];
};

static int server_register(struct server_layer *s) {
  siox_unid server, dev[2];
  int rc = siox_node_register("srv0", "server", NULL, &server);
  rc = rc ? rc : siox_node_register("dev0", "device", NULL, &dev[0]);
  rc = rc ? rc : siox_node_register("dev1", "device", NULL, &dev[1]);
  rc = rc ? rc : siox_edge_register(server, dev[0]);
  rc = rc ? rc : siox_edge_register(server, dev[1]);
  rc = rc ? rc : siox_activity_type_register(server, "handle_write", &s->handle);
  rc = rc ? rc : siox_activity_type_register(dev[0], "write", &s->dev_write[0]);
  rc = rc ? rc : siox_activity_type_register(dev[1], "write", &s->dev_write[1]);
  return rc;
}

static int serve(int sock, const struct options *o, const char *object) {
  struct server_layer s;
  if (server_register(&s) != 0) return 1;
  siox_desc d = siox_desc_str(SIOX_ATTR_TEST_HANDLE, o->server_object ? o->server_object : object);
  struct request rq;
  while (full_io(sock, &rq, sizeof rq, 0) == 0) {
    int dev = (int)(rq.index % 2);
    siox_aid r = siox_activity_start(s.handle);
    siox_descriptor_receive(r, &d, rq.offset, rq.length);
    siox_aid w = siox_activity_start(s.dev_write[dev]);
    siox_activity_attr_u64(w, SIOX_ATTR_IO_OFFSET, rq.offset);
    siox_activity_attr_u64(w, SIOX_ATTR_IO_BYTES, rq.length);
    sleep_us(dev == o->slow_device ? o->slow_us : o->fast_us);
    siox_activity_stop(w);
    siox_activity_stop(r);
    uint8_t ok = 1;
    if (full_io(sock, &ok, 1, 1) != 0) return 1;
  }
  return siox_flush(5000) == 0 ? 0 : 2;
}

/* ---- the application with its file-system client (parent process) -------- */

struct app_layer {
  siox_type_id app_write, fs_write;
  siox_target_id server;
};

static int app_register(struct app_layer *a) {
  char host[256];
  if (gethostname(host, sizeof host) != 0) strcpy(host, "localhost");
  siox_unid app, fs;
  int rc = siox_node_register(host, "app", NULL, &app);
  rc = rc ? rc : siox_node_register(host, "fs-client", NULL, &fs);
  rc = rc ? rc : siox_edge_register(app, fs);
  rc = rc ? rc : siox_activity_type_register(app, "write", &a->app_write);
  rc = rc ? rc : siox_activity_type_register(fs, "write", &a->fs_write);
  rc = rc ? rc : siox_target_register("srv0", "server", &a->server);
  return rc;
}

static int one_write(int sock, const struct app_layer *a, const siox_desc *d, uint64_t i, uint64_t block) {
  struct request rq = {i, i * block, block};
  siox_aid w = siox_activity_start(a->app_write);
  siox_activity_attr_u64(w, SIOX_ATTR_IO_OFFSET, rq.offset);
  siox_activity_attr_u64(w, SIOX_ATTR_IO_BYTES, rq.length);
  siox_aid c = siox_activity_start(a->fs_write);
  siox_activity_attr_u64(c, SIOX_ATTR_IO_OFFSET, rq.offset);
  siox_activity_attr_u64(c, SIOX_ATTR_IO_BYTES, rq.length);
  siox_descriptor_send(c, a->server, d, rq.offset, rq.length);
  uint8_t ok = 0;
  int rc = full_io(sock, &rq, sizeof rq, 1) == 0 && full_io(sock, &ok, 1, 0) == 0 && ok ? 0 : -1;
  if (rc) siox_activity_error(c, EIO);
  siox_activity_stop(c);
  siox_activity_stop(w);
  return rc;
}

static int run_app(int sock, const struct options *o, const char *object) {
  struct app_layer a;
  if (app_register(&a) != 0) return 1;
  siox_desc d = siox_desc_str(SIOX_ATTR_TEST_HANDLE, object);
  for (int i = 0; i < o->writes; i++)
    if (one_write(sock, &a, &d, (uint64_t)i, o->block) != 0) {
      fprintf(stderr, "siox-example-chain: server process went away at write %d\n", i);
      return 1;
    }
  return 0;
}

/* --map-to: a naming layer's one MAP record, from a node of its own. */
static int report_map(const char *object, const char *to) {
  char host[256];
  if (gethostname(host, sizeof host) != 0) strcpy(host, "localhost");
  siox_unid namer;
  siox_desc from = siox_desc_str(SIOX_ATTR_TEST_HANDLE, object), alias = siox_desc_str(SIOX_ATTR_TEST_HANDLE, to);
  int rc = siox_node_register(host, "namer", NULL, &namer);
  rc = rc ? rc : siox_descriptor_map(namer, 0, &from, &alias);
  if (rc == 0) rc = siox_flush(5000);
  printf("siox-example-chain: object %s mapped to %s%s\n", object, to, rc ? " (not reported)" : "");
  return rc ? 1 : 0;
}

int main(int argc, char **argv) {
  struct options o;
  if (parse_options(argc, argv, &o) != 0) return 2;
  char object[64];
  snprintf(object, sizeof object, "%s", o.object ? o.object : "");
  if (!o.object) snprintf(object, sizeof object, "chain-%ld", (long)getpid());
  if (o.map_to) return report_map(object, o.map_to);

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    perror("siox-example-chain: socketpair");
    return 1;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("siox-example-chain: fork");
    return 1;
  }
  if (child == 0) {
    close(sv[0]);
    /* libsiox-client reads SIOX_SOCKET at its first call, which comes
     * after the fork in both processes. */
    if (o.server_socket && setenv("SIOX_SOCKET", o.server_socket, 1) != 0) _exit(1);
    _exit(serve(sv[1], &o, object));
  }
  close(sv[1]);
  int rc = run_app(sv[0], &o, object);
  close(sv[0]);
  int st = 0;
  waitpid(child, &st, 0);
  int flushed = siox_flush(5000);
  struct siox_stats stats;
  siox_stats_get(&stats);
  printf("siox-example-chain: %d writes, object %s, slow device %d; client recorded %llu activities, dropped %llu%s\n",
         o.writes, object, o.slow_device, (unsigned long long)stats.activities, (unsigned long long)stats.dropped,
         flushed ? " (flush to daemon incomplete)" : "");
  if (rc || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
  return flushed ? 3 : 0;
}
