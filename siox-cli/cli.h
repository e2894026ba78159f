/*
 * The `siox` command: what main.c and the subcommands (cmd_*.c) share. main.c
 * parses the global options and dispatches; each subcommand parses its own
 * options (the global ones are accepted there too), queries the warehouse or
 * the daemons, and prints text or JSON.
 */
#ifndef SIOX_CLI_H
#define SIOX_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#define SIOX_DEFAULT_DATA_DIR "/var/lib/siox/server"
#define SIOX_DEFAULT_SOCKET "/run/siox/daemon.sock"
#define SIOX_DEFAULT_SERVER "127.0.0.1:7410"

enum siox_exit {
  SIOX_EXIT_OK = 0,
  SIOX_EXIT_FAIL = 1,  /* not found, unreachable, a part of status is down */
  SIOX_EXIT_USAGE = 2, /* bad command line */
};

/* Options every subcommand accepts, before or after its name. */
struct siox_cli {
  const char *data_dir; /* --data-dir: warehouse conninfo from DIR/conninfo */
  const char *db;       /* --db: a libpq conninfo */
  bool json;            /* --json */
};

struct siox_cmd {
  const char *name;
  const char *summary; /* one line for `siox --help` */
  const char *help;    /* the full manual page of the subcommand */
  int (*run)(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv);
};

extern const struct siox_cmd siox_cmd_graph, siox_cmd_top, siox_cmd_blame, siox_cmd_status, siox_cmd_run;
extern const struct siox_cmd siox_cmd_anomalies, siox_cmd_capacity;
extern const struct siox_cmd siox_cmd_hints;
extern const struct siox_cmd siox_cmd_workload, siox_cmd_replay;
extern const struct siox_cmd siox_cmd_export;
extern const struct siox_cmd siox_cmd_jobs, siox_cmd_summary, siox_cmd_web;

enum { SIOX_OPT_DATA_DIR = 0x100, SIOX_OPT_DB, SIOX_OPT_JSON };
#define SIOX_GLOBAL_LONGOPTS                                                                                  \
  {"data-dir", required_argument, NULL, SIOX_OPT_DATA_DIR}, {"db", required_argument, NULL, SIOX_OPT_DB},     \
      {"json", no_argument, NULL, SIOX_OPT_JSON}, {"help", no_argument, NULL, 'h'}
/* The help text of the global options, shared by every manual page. */
#define SIOX_GLOBAL_HELP                                                                                      \
  "  --data-dir DIR   read the warehouse's libpq conninfo from DIR/conninfo, written by\n"                    \
  "                   siox-server (default " SIOX_DEFAULT_DATA_DIR ")\n"                                       \
  "  --db CONNINFO    connect to this PostgreSQL warehouse instead (libpq conninfo or URI)\n"                 \
  "  --json           print JSON instead of text\n"                                                          \
  "  -h, --help       print this manual page\n"

/* Handles what every subcommand's getopt loop shares: global options, -h and
 * getopt's errors. Returns -1 when the option was handled (continue parsing),
 * else the exit status to return now. */
int siox_cli_common_opt(struct siox_cli *cli, const struct siox_cmd *cmd, int c, char **argv);

/* Prints "siox CMD: <message>" and a hint to stderr; returns SIOX_EXIT_USAGE. */
int siox_cli_usage(const struct siox_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints a subcommand's manual page to stdout; returns SIOX_EXIT_OK. */
int siox_cli_help(const struct siox_cmd *cmd);

/* Parses a global activity id: a decimal integer > 0 with nothing after it.
 * 0 or -EINVAL. */
int siox_cli_parse_aid(const char *s, int64_t *out);

/* Parses a decimal integer in [min, max]. 0 or -EINVAL. */
int siox_cli_parse_long(const char *s, long min, long max, long *out);

#endif
