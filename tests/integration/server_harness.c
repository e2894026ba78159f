/*
 * Harness for siox-server integration tests and the server benchmark (see
 * server_harness.h): process control of a real server and its embedded
 * PostgreSQL, a minimal daemon-side client, and block builders.
 */
#include "server_harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <munge.h>
#include <sys/random.h>

#include "hello_cred.h"
#include "siox/siox_ontology.h"
#include "siox_frame.h"

const char *harness_munge_socket;

static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr *)&a, &len) != 0)
    return -1;
  close(fd);
  return ntohs(a.sin_port);
}

int harness_init(struct harness *h, const char *server_bin) {
  memset(h, 0, sizeof *h);
  snprintf(h->dir, sizeof h->dir, "/tmp/siox-srvtest-XXXXXX");
  if (!mkdtemp(h->dir)) return -errno;
  chmod(h->dir, 0711); /* the embedded PostgreSQL runs as postgres when we are root */
  snprintf(h->data_dir, sizeof h->data_dir, "%s/data", h->dir);
  snprintf(h->log, sizeof h->log, "%s/server.log", h->dir);
  h->bin = server_bin;
  h->port = free_port();
  if (h->port <= 0) return -EADDRINUSE;
  char mdir[300];
  snprintf(mdir, sizeof mdir, "%s/munge", h->dir);
  if ((h->munged_pid = harness_munged_start(mdir, h->munge_sock, sizeof h->munge_sock)) < 0) return h->munged_pid = 0, -EIO;
  harness_munge_socket = h->munge_sock;
  return 0;
}

pid_t harness_munged_start(const char *dir, char *sock, size_t sock_len) {
  char key[400], log[400], seed[400], pidf[400];
  unsigned char k[128];
  snprintf(key, sizeof key, "%s/munge.key", dir);
  snprintf(log, sizeof log, "%s/munged.log", dir);
  snprintf(seed, sizeof seed, "%s/munged.seed", dir);
  snprintf(pidf, sizeof pidf, "%s/munged.pid", dir);
  snprintf(sock, sock_len, "%s/munge.sock", dir);
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) return -1;
  chmod(dir, 0755); /* munged wants its socket's directory searchable by all */
  int fd = open(key, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || getrandom(k, sizeof k, 0) != (ssize_t)sizeof k || write(fd, k, sizeof k) != (ssize_t)sizeof k)
    return fd >= 0 ? close(fd) : 0, -1;
  close(fd);
  char a_sock[420], a_key[420], a_log[420], a_seed[420], a_pid[420];
  snprintf(a_sock, sizeof a_sock, "--socket=%s", sock);
  snprintf(a_key, sizeof a_key, "--key-file=%s", key);
  snprintf(a_log, sizeof a_log, "--log-file=%s", log);
  snprintf(a_seed, sizeof a_seed, "--seed-file=%s", seed);
  snprintf(a_pid, sizeof a_pid, "--pid-file=%s", pidf);
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY); /* it logs to its log file too */
    if (null >= 0) dup2(null, 2), close(null);
    execlp("munged", "munged", "--foreground", a_sock, a_key, a_log, a_seed, a_pid, (char *)NULL);
    _exit(127);
  }
  for (int i = 0; pid > 0 && i < 100; i++) { /* until the socket exists */
    struct stat st;
    if (stat(sock, &st) == 0) return pid;
    if (waitpid(pid, NULL, WNOHANG) == pid) break;
    usleep(50 * 1000);
  }
  fprintf(stderr, "harness: munged did not start (see %s)\n", log);
  if (pid > 0) kill(pid, SIGTERM), waitpid(pid, NULL, 0);
  return -1;
}

int harness_server_nofile;

long harness_server_kb(const struct harness *h, const char *field) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)h->pid);
  FILE *f = fopen(path, "r");
  long kb = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, field, n) == 0) kb = atol(line + n);
  if (f) fclose(f);
  return kb;
}

static int child_alive(struct harness *h) {
  int st;
  if (h->pid && waitpid(h->pid, &st, WNOHANG) == h->pid) h->pid = 0;
  return h->pid != 0;
}

int harness_start(struct harness *h, const char *const *extra) {
  char listen[64];
  snprintf(listen, sizeof listen, "127.0.0.1:%d", h->port);
  const char *argv[32] = {h->bin, "--listen", listen, "--data-dir", h->data_dir, "--munge-socket", h->munge_sock};
  int n = 7;
  for (; extra && *extra && n < 30; extra++) argv[n++] = *extra;
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(h->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) dup2(fd, 2), close(fd);
    struct rlimit r = {(rlim_t)harness_server_nofile, (rlim_t)harness_server_nofile};
    if (harness_server_nofile > 0) setrlimit(RLIMIT_NOFILE, &r);
    execv(h->bin, (char *const *)argv);
    _exit(127);
  }
  h->pid = pid;
  for (int i = 0; i < 1200 && child_alive(h); i++) { /* initdb may take a while */
    int fd = cli_connect(h->port);
    if (fd >= 0) return close(fd), 0;
    usleep(100 * 1000);
  }
  return -1;
}

int harness_stop(struct harness *h) {
  if (!h->pid) return -1;
  kill(h->pid, SIGTERM);
  for (int i = 0; i < 600; i++) {
    int st;
    if (waitpid(h->pid, &st, WNOHANG) == h->pid) {
      h->pid = 0;
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    usleep(100 * 1000);
  }
  harness_kill9(h);
  return -1;
}

void harness_kill9(struct harness *h) {
  if (!h->pid) return;
  kill(h->pid, SIGKILL);
  waitpid(h->pid, NULL, 0);
  h->pid = 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(path);
}

void harness_cleanup(struct harness *h) {
  if (h->pid) harness_stop(h);
  char path[400];
  snprintf(path, sizeof path, "%s/pg/postmaster.pid", h->data_dir);
  FILE *f = fopen(path, "r");
  long pid = 0;
  if (f && fscanf(f, "%ld", &pid) == 1 && pid > 0 && kill((pid_t)pid, SIGINT) == 0) /* SIGINT: fast shutdown */
    for (int i = 0; i < 300 && kill((pid_t)pid, 0) == 0; i++) usleep(100 * 1000);
  if (f) fclose(f);
  if (h->munged_pid > 0) kill(h->munged_pid, SIGTERM), waitpid(h->munged_pid, NULL, 0), h->munged_pid = 0;
  if (!getenv("SIOX_KEEP_TEST_DIR")) nftw(h->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int harness_failures;

int harness_setup(struct harness *h, int argc, char **argv, const char *token, const char *const *extra) {
  const char *args[32];
  char token_path[300];
  int n = 0;
  if (argc < 2) return fprintf(stderr, "usage: %s SIOX_SERVER_BINARY\n", argv[0]), -1;
  if (harness_init(h, argv[1]) != 0) return fprintf(stderr, "cannot create a test dir\n"), -1;
  if (token) {
    snprintf(token_path, sizeof token_path, "%s/token", h->dir);
    FILE *f = fopen(token_path, "w");
    if (f) fputs(token, f), fclose(f);
    args[n++] = "--token-file", args[n++] = token_path;
    args[n++] = "--auth", args[n++] = "token";
  }
  for (; extra && *extra && n < 31; extra++) args[n++] = *extra;
  args[n] = NULL;
  if (harness_start(h, args) == 0) return 0;
  fprintf(stderr, "cannot start siox-server; its log:\n");
  FILE *log = fopen(h->log, "r");
  for (int ch; log && (ch = fgetc(log)) != EOF;) fputc(ch, stderr);
  if (log) fclose(log);
  harness_cleanup(h);
  return -1;
}

int harness_finish(struct harness *h, const char *name) {
  CHECK(harness_stop(h) == 0, "clean exit");
  harness_cleanup(h);
  if (harness_failures) fprintf(stderr, "%s: %d failure(s)\n", name, harness_failures);
  else printf("%s: ok\n", name);
  return harness_failures ? 1 : 0;
}

PGconn *harness_db(const struct harness *h) {
  char path[400], ci[4096] = "";
  snprintf(path, sizeof path, "%s/conninfo", h->data_dir);
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  if (!fgets(ci, sizeof ci, f)) ci[0] = '\0';
  fclose(f);
  ci[strcspn(ci, "\n")] = '\0';
  PGconn *c = PQconnectdb(ci);
  if (PQstatus(c) != CONNECTION_OK) {
    fprintf(stderr, "harness: %s", PQerrorMessage(c));
    PQfinish(c);
    return NULL;
  }
  return c;
}

int harness_log_has(const struct harness *h, const char *s) {
  FILE *f = fopen(h->log, "r");
  char line[4096];
  int found = 0;
  while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, s) != NULL;
  if (f) fclose(f);
  return found;
}

long long harness_scalar(PGconn *c, const char *sql) {
  PGresult *r = PQexec(c, sql);
  long long v = -1;
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) v = atoll(PQgetvalue(r, 0, 0));
  else fprintf(stderr, "harness: %s: %s", sql, PQresultErrorMessage(r));
  PQclear(r);
  return v;
}

/* ---- client ------------------------------------------------------------------ */

int cli_connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) return close(fd), -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int cli_send_raw(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    c += w, n -= (size_t)w;
  }
  return 0;
}

int cli_send(int fd, uint16_t type, const ProtobufCMessage *m) {
  size_t len = m ? protobuf_c_message_get_packed_size(m) : 0;
  uint8_t *buf = malloc(SIOX_FRAME_HDR_LEN + len);
  if (!buf) return -1;
  siox_frame_hdr_encode(buf, type, (uint32_t)len);
  if (m) protobuf_c_message_pack(m, buf + SIOX_FRAME_HDR_LEN);
  int rc = cli_send_raw(fd, buf, SIOX_FRAME_HDR_LEN + len);
  free(buf);
  return rc;
}

static int recv_all(int fd, void *p, size_t n, int timeout_ms) {
  char *c = p;
  while (n) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int pr = poll(&pfd, 1, timeout_ms);
    if (pr == 0) return -2;
    if (pr < 0 && errno == EINTR) continue;
    ssize_t r = recv(fd, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    c += r, n -= (size_t)r;
  }
  return 0;
}

int cli_recv(int fd, uint16_t *type, uint8_t **payload, uint32_t *len, int timeout_ms) {
  uint8_t hdr[SIOX_FRAME_HDR_LEN];
  struct siox_frame_hdr h;
  const char *why;
  int rc = recv_all(fd, hdr, sizeof hdr, timeout_ms);
  if (rc) return rc;
  if (siox_frame_hdr_decode(hdr, &h, &why) != 0) return -1;
  *payload = malloc(h.length + 1);
  if (!*payload || recv_all(fd, *payload, h.length, timeout_ms) != 0) return free(*payload), -1;
  *type = h.type;
  *len = h.length;
  return 0;
}

char *cli_munge(const void *payload, size_t len) {
  char *cred = NULL;
  munge_ctx_t ctx = munge_ctx_create();
  if (!ctx) return NULL;
  munge_err_t e = harness_munge_socket ? munge_ctx_set(ctx, MUNGE_OPT_SOCKET, harness_munge_socket) : EMUNGE_SUCCESS;
  if (e == EMUNGE_SUCCESS) e = munge_encode(&cred, ctx, payload, (int)len);
  if (e != EMUNGE_SUCCESS) fprintf(stderr, "harness: munge_encode: %s\n", munge_ctx_strerror(ctx)), free(cred), cred = NULL;
  munge_ctx_destroy(ctx);
  return cred;
}

long long cli_hello_msg(int fd, const Siox__Hello *m) {
  uint16_t type;
  uint8_t *p;
  uint32_t len;
  if (cli_send(fd, SIOX_FRAME_HELLO, &m->base) != 0 || cli_recv(fd, &type, &p, &len, 30000) != 0) return -1;
  long long acked = -1;
  Siox__HelloReply *r = type == SIOX_FRAME_HELLO_REPLY ? siox__hello_reply__unpack(NULL, len, p) : NULL;
  if (r) acked = (long long)r->acked_seq, siox__hello_reply__free_unpacked(r, NULL);
  free(p);
  return acked;
}

long long cli_hello(int fd, uint64_t daemon_id, const char *host, const char *token) {
  Siox__Hello m = SIOX__HELLO__INIT;
  m.daemon_id = daemon_id;
  m.hostname = (char *)host;
  m.version = 1;
  char *cred = NULL;
  if (token) {
    m.token.data = (uint8_t *)token, m.token.len = strlen(token);
  } else if (harness_munge_socket) {
    char payload[SIOX_CRED_PAYLOAD_MAX];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int n = siox_hello_cred_payload(payload, sizeof payload, daemon_id, host, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
    if (n > 0 && (cred = cli_munge(payload, (size_t)n))) m.munge_cred.data = (uint8_t *)cred, m.munge_cred.len = strlen(cred);
  }
  long long acked = cli_hello_msg(fd, &m);
  free(cred);
  return acked;
}

Siox__StatusReply *cli_status(int fd, int sign) {
  Siox__StatusRequest q = SIOX__STATUS_REQUEST__INIT;
  char payload[SIOX_CRED_PAYLOAD_MAX], *cred = NULL;
  int n = siox_status_cred_payload(payload, sizeof payload, (int64_t)time(NULL) * 1000000000);
  if (sign && n > 0 && (cred = cli_munge(payload, (size_t)n))) q.munge_cred.data = (uint8_t *)cred, q.munge_cred.len = strlen(cred);
  uint16_t type = 0;
  uint8_t *p = NULL;
  uint32_t len = 0;
  Siox__StatusReply *r = NULL;
  if (cli_send(fd, SIOX_FRAME_STATUS_REQUEST, &q.base) == 0 && cli_recv(fd, &type, &p, &len, 10000) == 0 &&
      type == SIOX_FRAME_STATUS_REPLY)
    r = siox__status_reply__unpack(NULL, len, p);
  free(p);
  free(cred);
  return r;
}

long long status_counter(const Siox__StatusReply *r, const char *name) {
  for (size_t i = 0; r && i < r->n_counters; i++)
    if (strcmp(r->counters[i]->name, name) == 0) return r->counters[i]->value;
  return -1;
}

long long server_counter(int port, const char *name) {
  int fd = cli_connect(port);
  Siox__StatusReply *r = fd >= 0 ? cli_status(fd, 1) : NULL;
  long long v = r ? status_counter(r, name) : -1;
  if (r) siox__status_reply__free_unpacked(r, NULL);
  if (fd >= 0) close(fd);
  return v;
}

int cli_batch(int fd, uint64_t daemon_id, uint64_t seq, int64_t offset_ns, uint64_t unc_ns, const struct siox_block *blk) {
  uint8_t *out;
  size_t out_len, raw;
  if (siox_block_encode(blk, &out, &out_len, &raw) != 0) return -1;
  Siox__Batch m = SIOX__BATCH__INIT;
  m.daemon_id = daemon_id;
  m.seq = seq;
  m.clock_offset_ns = offset_ns;
  m.clock_uncertainty_ns = unc_ns;
  m.activities = (uint32_t)blk->n_activities;
  m.raw_bytes = (uint32_t)raw;
  m.block.data = out;
  m.block.len = out_len;
  int rc = cli_send(fd, SIOX_FRAME_BATCH, &m.base);
  free(out);
  return rc;
}

long long cli_wait_ack(int fd, uint64_t seq, int timeout_ms) {
  for (;;) {
    uint16_t type;
    uint8_t *p;
    uint32_t len;
    int rc = cli_recv(fd, &type, &p, &len, timeout_ms);
    if (rc) return rc;
    long long got = -1;
    if (type == SIOX_FRAME_ACK) {
      Siox__Ack *a = siox__ack__unpack(NULL, len, p);
      if (a) got = (long long)a->seq, siox__ack__free_unpacked(a, NULL);
    } else if (type == SIOX_FRAME_ERROR) {
      Siox__Error *e = siox__error__unpack(NULL, len, p);
      fprintf(stderr, "client: server error: %s\n", e ? e->reason : "?");
      if (e) siox__error__free_unpacked(e, NULL);
    }
    free(p);
    if (got < 0 || (uint64_t)got >= seq) return got;
  }
}

int cli_send_block(int port, uint64_t daemon_id, const char *host, const char *token, uint64_t seq,
                   const struct siox_block *blk) {
  int fd = cli_connect(port);
  if (fd < 0) return -1;
  int ok = cli_hello(fd, daemon_id, host, token) >= 0 && cli_batch(fd, daemon_id, seq, 0, 20000, blk) == 0 &&
           cli_wait_ack(fd, seq, 60000) == (long long)seq;
  close(fd);
  return ok ? 0 : -1;
}

/* ---- blocks ------------------------------------------------------------------ */

void block_spmd(struct siox_block *b, uint32_t pid, uint64_t nonce, const char *host, uint64_t first, uint32_t n,
                int64_t t0) {
  struct siox_block_process *p = siox_block_add_process(b);
  p->pid = pid, p->uid = 1000, p->nonce = nonce;
  p->host = siox_block_strdup(b, host, strlen(host));
  p->exe = siox_block_strdup(b, "/usr/bin/app", 12);
  p->args = siox_block_strdup(b, "app -n 4", 8);
  p->job = siox_block_strdup(b, "job-7", 5);
  uint32_t proc = (uint32_t)(b->n_processes - 1);
  struct siox_block_node *nd = siox_block_add_node(b);
  nd->proc = proc, nd->unid = 1;
  nd->hwid = siox_block_strdup(b, host, strlen(host));
  nd->swid = siox_block_strdup(b, "POSIX", 5);
  nd->iid = siox_block_strdup(b, "", 0);
  struct siox_block_type *t = siox_block_add_type(b);
  t->proc = proc, t->type_id = 1, t->unid = 1;
  t->name = siox_block_strdup(b, "write", 5);
  for (uint32_t i = 0; i < n; i++) {
    struct siox_block_activity *a = siox_block_add_activity(b);
    a->proc = proc, a->type_id = 1, a->aid = first + i;
    a->parent = (i % 10 == 9) ? first + i - 1 : 0;
    a->start_ns = t0 + (int64_t)i * 1000;
    a->end_ns = a->start_ns + 700;
    a->err = (i % 100 == 0) ? 5 : 0;
    struct siox_value *v = siox_block_add_attrs(b, a, 2);
    v[0].attr = SIOX_ATTR_IO_OFFSET, v[0].vtype = SIOX_VT_U64, v[0].v.u64 = (first + i) * 4096;
    v[1].attr = SIOX_ATTR_IO_BYTES, v[1].vtype = SIOX_VT_U64, v[1].v.u64 = 4096;
  }
}

uint8_t *spmd_batch_frame(uint64_t d, uint64_t seq, uint32_t pid, uint32_t per_batch, size_t *len) {
  struct siox_block b;
  siox_block_init(&b);
  block_spmd(&b, pid, d, "benchnode", 1 + (seq - 1) * per_batch, per_batch,
             1700000000000000000LL + (int64_t)seq * 100000000);
  uint8_t *out, *frame = NULL;
  size_t out_len, raw;
  if (siox_block_encode(&b, &out, &out_len, &raw) == 0) {
    Siox__Batch m = SIOX__BATCH__INIT;
    m.daemon_id = d, m.seq = seq, m.activities = per_batch, m.raw_bytes = (uint32_t)raw;
    m.block.data = out, m.block.len = out_len;
    *len = SIOX_FRAME_HDR_LEN + protobuf_c_message_get_packed_size(&m.base);
    frame = malloc(*len);
    if (frame) {
      siox_frame_hdr_encode(frame, SIOX_FRAME_BATCH, (uint32_t)(*len - SIOX_FRAME_HDR_LEN));
      protobuf_c_message_pack(&m.base, frame + SIOX_FRAME_HDR_LEN);
    }
    free(out);
  }
  siox_block_free(&b);
  return frame;
}

uint32_t block_proc(struct siox_block *b, uint32_t pid, const char *host, const char *swid) {
  struct siox_block_process *p = siox_block_add_process(b);
  p->pid = pid, p->nonce = pid;
  p->host = siox_block_strdup(b, host, strlen(host));
  uint32_t proc = (uint32_t)(b->n_processes - 1);
  struct siox_block_node *n = siox_block_add_node(b);
  n->proc = proc, n->unid = 1;
  n->hwid = siox_block_strdup(b, host, strlen(host));
  n->swid = siox_block_strdup(b, swid, strlen(swid));
  n->iid = siox_block_strdup(b, "", 0);
  struct siox_block_type *t = siox_block_add_type(b);
  t->proc = proc, t->type_id = 1, t->unid = 1;
  t->name = siox_block_strdup(b, "WRITE", 5);
  return proc;
}

void block_act(struct siox_block *b, uint32_t proc, uint64_t aid, int64_t start, int64_t end) {
  struct siox_block_activity *a = siox_block_add_activity(b);
  a->proc = proc, a->type_id = 1, a->aid = aid, a->start_ns = start, a->end_ns = end;
  siox_block_add_attrs(b, a, 0);
}

struct siox_block_descriptor *block_desc(struct siox_block *b, uint32_t proc, uint32_t kind, uint64_t aid,
                                         uint32_t node, uint32_t attr, const void *val, size_t len) {
  struct siox_block_descriptor *d = siox_block_add_descriptor(b);
  d->proc = proc, d->kind = kind, d->aid = aid, d->node = node, d->nvalues = 1;
  d->values[0].attr = attr;
  d->values[0].vtype = siox_attr_lookup(attr)->type;
  siox_block_set_bytes(b, &d->values[0], val, len);
  return d;
}
