/*
 * siox-server's command line: the options agreed in the team brief plus a
 * few tuning knobs. Parsing is pure (no I/O) so that it can be unit tested.
 */
#ifndef SIOX_SERVER_OPTIONS_H
#define SIOX_SERVER_OPTIONS_H

#define SIOX_SERVER_DEFAULT_LISTEN "127.0.0.1:7410"
#define SIOX_SERVER_DEFAULT_DATA_DIR "/var/lib/siox/server"
#define SIOX_SERVER_SHARDS_MAX 127 /* libsiox-warehouse's SIOX_WH_SHARDS_MAX */

/* --auth: how a daemon's Hello proves who it is (auth.c). */
enum siox_auth_mode { SIOX_AUTH_MUNGE, SIOX_AUTH_TOKEN, SIOX_AUTH_NONE };

struct siox_server_options {
  char host[256];
  int port;
  const char *data_dir;   /* points into argv or a default */
  const char *db;         /* NULL: embedded PostgreSQL */
  const char *db_passfile; /* libpq passfile for --db (NULL: libpq's default) */
  const char *admin_group; /* members get siox_admin (NULL: none) */
  const char *token_file; /* --auth token: DAEMON_ID TOKEN lines */
  enum siox_auth_mode auth; /* default munge; --token-file alone selects token */
  const char *munge_socket; /* NULL: libmunge's default socket */
  const char *tls_cert, *tls_key; /* both or neither: TLS on every connection */
  int insecure;           /* --insecure: allow plaintext beyond loopback */
  const char *pid_file;
  const char *pg_bindir;  /* NULL: pg_config --bindir, then the Debian path */
  int match_ms;           /* implicit-link matcher period */
  int late_ms;            /* after-parent window: how late a receive may start (0: off) */
  int match_memory;       /* --match-memory: link at ingest in memory (1, default) or only in SQL */
  int match_window_ms;    /* --match-window-ms: data time the in-memory window keeps */
  int analyze_idle_s;     /* kb_thread.c: a job quiet this long has ended */
  int analyze_every_s;    /* kb_thread.c: re-analyse a running job this often */
  int no_analyze;         /* --no-analyze: no analysis thread */
  int memory_mb;          /* --memory-mb: limits.c's bound */
  int shard, nshards;     /* --shard K/N: this warehouse is shard K of N (0: no shard) */
  int coordinator;        /* --coordinator: build and keep the coordinator database */
  const char *shard_db[SIOX_SERVER_SHARDS_MAX]; /* --shard-db CONNINFO, in order given */
  int n_shard_db;
  /* --shard-peer J=CONNINFO: shard J's database, where this shard forwards
   * the remote calls J owns (forward.c); index J, NULL: not given. */
  const char *shard_peer[SIOX_SERVER_SHARDS_MAX + 1];
  int n_shard_peer;
  int help;
};


/* Fills o from argv. Returns 0, or -EINVAL with a message in err. */
int siox_server_options_parse(int argc, char **argv, struct siox_server_options *o, char *err, unsigned errcap);

/* The --help text. */
extern const char siox_server_usage[];

#endif
