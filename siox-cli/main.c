/*
 * `siox`: the user's window on the warehouse and the running daemons. main.c
 * reads the global options, picks the subcommand and hands over; the
 * subcommands live in cmd_*.c, one per file, each with its manual page.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct siox_cmd *const commands[] = {&siox_cmd_graph, &siox_cmd_top, &siox_cmd_blame,
                                                  &siox_cmd_status, &siox_cmd_run,
                                                  &siox_cmd_anomalies, &siox_cmd_capacity,
                                                  &siox_cmd_hints, &siox_cmd_workload,
                                                  &siox_cmd_replay, &siox_cmd_export, &siox_cmd_jobs,
                                                  &siox_cmd_summary, &siox_cmd_web};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char main_help[] =
    "NAME\n"
    "  siox - explore and explain I/O activity recorded by SIOX\n"
    "\n"
    "SYNOPSIS\n"
    "  siox [--data-dir DIR | --db CONNINFO] [--json] COMMAND [ARGS...]\n"
    "  siox help [COMMAND]\n"
    "  siox COMMAND --help\n"
    "\n"
    "DESCRIPTION\n"
    "  SIOX records what every layer of the I/O stack (HDF5, MPI-IO, POSIX, the\n"
    "  file-system client, storage servers, devices) does for one call and links\n"
    "  those activities into causal trees in a PostgreSQL warehouse. This command\n"
    "  shows those trees, finds slow calls and says which component made them slow.\n"
    "\n"
    "  Activities are named by their global activity id (AID), a decimal integer:\n"
    "  (process id in the warehouse << 32) | activity number in that process.\n"
    "\n"
    "COMMANDS\n"
    "%s"
    "\n"
    "GLOBAL OPTIONS (accepted before or after COMMAND)\n" SIOX_GLOBAL_HELP
    "  --version        print the version and exit\n"
    "\n"
    "WAREHOUSE\n"
    "  The warehouse is found, in this order: --db CONNINFO; --data-dir DIR (reads\n"
    "  the one-line conninfo siox-server writes to DIR/conninfo); $SIOX_DB; the\n"
    "  default data dir " SIOX_DEFAULT_DATA_DIR ".\n"
    "\n"
    "ENVIRONMENT\n"
    "  SIOX_DB       libpq conninfo of the warehouse (when no option names one)\n"
    "  SIOX_SOCKET   the node daemon's socket, for `siox status` and `siox run`\n"
    "\n"
    "EXIT STATUS\n"
    "  0 success; 1 failure (activity not found, warehouse or daemon unreachable,\n"
    "  a part of `siox status` down); 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox top -n 5 --job 4711 --layer MPI-IO   the five slowest MPI-IO calls of a job\n"
    "  siox blame 4294967299                     why was this call slow?\n"
    "  siox graph 4294967299 --format dot | dot -Tsvg > call.svg\n"
    "  siox run -- mpirun -np 4 ./app out.h5      trace an MPI job through every layer\n"
    "  siox --db 'host=/run/pg dbname=siox' status --json\n"
    "\n"
    "  Run `siox help COMMAND` for a command's manual page.\n";

static void print_main_help(void) {
  char list[4096] = ""; /* one line per command */
  size_t off = 0;
  for (size_t i = 0; i < NCOMMANDS; i++)
    off += (size_t)snprintf(list + off, sizeof(list) - off, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
  printf(main_help, list);
}

static const struct siox_cmd *find_command(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i]->name, name) == 0) return commands[i];
  return NULL;
}

int siox_cli_usage(const struct siox_cmd *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, cmd ? "siox %s: " : "siox: ", cmd ? cmd->name : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  if (cmd)
    fprintf(stderr, "\nTry 'siox help %s'.\n", cmd->name);
  else
    fprintf(stderr, "\nTry 'siox --help'.\n");
  return SIOX_EXIT_USAGE;
}

int siox_cli_help(const struct siox_cmd *cmd) {
  fputs(cmd->help, stdout);
  fputs("\nGLOBAL OPTIONS\n" SIOX_GLOBAL_HELP, stdout);
  return SIOX_EXIT_OK;
}

int siox_cli_common_opt(struct siox_cli *cli, const struct siox_cmd *cmd, int c, char **argv) {
  switch (c) {
  case SIOX_OPT_DATA_DIR: cli->data_dir = optarg; return -1;
  case SIOX_OPT_DB: cli->db = optarg; return -1;
  case SIOX_OPT_JSON: cli->json = true; return -1;
  case 'h': return cmd ? siox_cli_help(cmd) : (print_main_help(), SIOX_EXIT_OK);
  case ':': return siox_cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
  default: return siox_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
  }
}

int siox_cli_parse_long(const char *s, long min, long max, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < min || v > max) return -EINVAL;
  *out = v;
  return 0;
}

int siox_cli_parse_aid(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  /* strtoll would accept leading blanks and a sign; an id has neither. */
  if (*s < '0' || *s > '9') return -EINVAL;
  long long v = strtoll(s, &end, 10);
  if (errno || *end || v <= 0) return -EINVAL;
  *out = v;
  return 0;
}

/* `siox help [COMMAND]` */
static int run_help(int argc, char **argv) {
  if (argc < 2) {
    print_main_help();
    return SIOX_EXIT_OK;
  }
  const struct siox_cmd *cmd = find_command(argv[1]);
  if (!cmd) return siox_cli_usage(NULL, "no command '%s'", argv[1]);
  return siox_cli_help(cmd);
}

int main(int argc, char **argv) {
  static const struct option opts[] = {SIOX_GLOBAL_LONGOPTS, {"version", no_argument, NULL, 'V'}, {0}};
  struct siox_cli cli = {0};
  int c;
  opterr = 0; /* we word the errors ourselves */
  while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
    if (c == 'V') {
      printf("siox " SIOX_VERSION "\n");
      return SIOX_EXIT_OK;
    }
    int rc = siox_cli_common_opt(&cli, NULL, c, argv);
    if (rc >= 0) return rc;
  }
  if (optind >= argc) return siox_cli_usage(NULL, "no command given");
  const char *name = argv[optind];
  if (strcmp(name, "help") == 0) return run_help(argc - optind, argv + optind);
  const struct siox_cmd *cmd = find_command(name);
  if (!cmd) return siox_cli_usage(NULL, "no command '%s'", name);
  int sub_argc = argc - optind;
  char **sub_argv = argv + optind;
  optind = 0; /* glibc: full reset for the subcommand's own getopt loop */
  return cmd->run(&cli, cmd, sub_argc, sub_argv);
}
