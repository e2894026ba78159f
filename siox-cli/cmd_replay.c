/*
 * `siox replay FILE`: runs siox-replay (workload/replay_main.c) under mpirun
 * with one process per rank of the workload. Only the launch is here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "siox_workload.h"

static const char help[] =
    "NAME\n"
    "  siox replay - execute a workload file on a real file system\n"
    "\n"
    "SYNOPSIS\n"
    "  siox replay FILE [--ranks N] [--dir PATH] [--generator exact|characterization]\n"
    "              [--no-gaps] [--mpirun CMD] [--dry-run]\n"
    "\n"
    "DESCRIPTION\n"
    "  Launches siox-replay, an MPI program, as `CMD -np N siox-replay ...`: every\n"
    "  MPI rank executes the stream of the same rank of FILE (written by `siox\n"
    "  workload extract`) with the same operations, sizes, offsets, compute gaps\n"
    "  and synchronization (collective MPI-IO calls, barriers), in PATH. It prints\n"
    "  the bytes read and written per file, the operations and I/O time per rank,\n"
    "  and the job's I/O time (the slowest rank's time inside the calls) next to\n"
    "  the recorded one. See `siox-replay --help` for its output and files.\n"
    "\n"
    "  To trace the replay itself: siox run -- siox replay FILE ...\n"
    "\n"
    "OPTIONS\n"
    "  --ranks N         MPI processes to start (default: the ranks of FILE; a trace\n"
    "                    replays only with exactly that many)\n"
    "  --dir PATH        directory to replay in (default: the current one)\n"
    "  --generator G     exact (the recorded stream; default for a trace) or\n"
    "                    characterization (a stream synthesized from the counters;\n"
    "                    the only one for a characterization file)\n"
    "  --no-gaps         skip the compute gaps\n"
    "  --mpirun CMD      the MPI launcher and its options, split at blanks\n"
    "                    (default: $SIOX_MPIRUN, else mpirun), e.g. 'mpirun --oversubscribe'\n"
    "  --dry-run         print the command instead of running it\n"
    "\n"
    "ENVIRONMENT\n"
    "  SIOX_MPIRUN       the launcher, when --mpirun is not given\n"
    "  SIOX_REPLAY       the siox-replay program (default: next to siox, then $PATH)\n"
    "\n"
    "EXIT STATUS\n"
    "  siox-replay's: 0 replayed; 1 FILE rejected (truncated, foreign, rank count)\n"
    "  or an operation failed; 2 bad command line; 127 the launcher could not be run.\n"
    "\n"
    "EXAMPLES\n"
    "  siox replay job4711.wl --dir /mnt/gluster/replay\n"
    "  siox replay job4711.wlc --dir /dev/shm/r --ranks 4\n";

struct args {
  const char *file, *dir, *gen, *mpirun;
  long ranks;
  int no_gaps, dry;
};

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct args *a) {
  enum { OPT_RANKS = 0x200, OPT_DIR, OPT_GEN, OPT_NOGAPS, OPT_MPIRUN, OPT_DRY };
  static const struct option opts[] = {{"ranks", required_argument, NULL, OPT_RANKS},
                                       {"dir", required_argument, NULL, OPT_DIR},
                                       {"generator", required_argument, NULL, OPT_GEN},
                                       {"no-gaps", no_argument, NULL, OPT_NOGAPS},
                                       {"mpirun", required_argument, NULL, OPT_MPIRUN},
                                       {"dry-run", no_argument, NULL, OPT_DRY},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case OPT_RANKS:
      if (siox_cli_parse_long(optarg, 1, 1 << 24, &a->ranks))
        return siox_cli_usage(self, "--ranks needs a number from 1 to 16777216, not '%s'", optarg);
      break;
    case OPT_DIR: a->dir = optarg; break;
    case OPT_GEN:
      if (strcmp(optarg, "exact") && strcmp(optarg, "characterization"))
        return siox_cli_usage(self, "--generator takes exact or characterization, not '%s'", optarg);
      a->gen = optarg;
      break;
    case OPT_NOGAPS: a->no_gaps = 1; break;
    case OPT_MPIRUN: a->mpirun = optarg; break;
    case OPT_DRY: a->dry = 1; break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (optind != argc - 1) return siox_cli_usage(self, optind < argc ? "give one workload FILE" : "no workload FILE");
  a->file = argv[optind];
  return -1;
}

/* siox-replay: $SIOX_REPLAY, next to this program (installed), the build
 * tree's workload/ (build/siox-cli/siox), else from $PATH. */
static void find_replay(char out[PATH_MAX]) {
  const char *env = getenv("SIOX_REPLAY");
  if (env && *env) {
    snprintf(out, PATH_MAX, "%s", env);
    return;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    snprintf(out, PATH_MAX, "%.*s/siox-replay", PATH_MAX - 16, exe);
    if (access(out, X_OK) == 0) return;
    snprintf(out, PATH_MAX, "%.*s/../workload/siox-replay", PATH_MAX - 32, exe);
    if (access(out, X_OK) == 0) return;
  }
  snprintf(out, PATH_MAX, "siox-replay");
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct args a = {.mpirun = getenv("SIOX_MPIRUN")};
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  if (!a.mpirun || !*a.mpirun) a.mpirun = "mpirun";
  /* the file is read here once to size the job and to reject a bad file
   * before any MPI process starts */
  siox_workload *w;
  char err[1024];
  if (siox_wl_read_path(a.file, &w, err, sizeof(err))) {
    fprintf(stderr, "siox replay: %s\n", err);
    return SIOX_EXIT_FAIL;
  }
  if (!a.ranks) a.ranks = siox_wl_ranks(w);
  siox_wl_free(w);
  char replay[PATH_MAX], np[24];
  find_replay(replay);
  snprintf(np, sizeof(np), "%ld", a.ranks);
  const char *cmd[48];
  int k = 0;
  char *launcher = strdup(a.mpirun); /* split at blanks: "mpirun --oversubscribe" */
  if (!launcher) return SIOX_EXIT_FAIL;
  for (char *save, *t = strtok_r(launcher, " \t", &save); t && k < 32; t = strtok_r(NULL, " \t", &save)) cmd[k++] = t;
  if (k == 0) return siox_cli_usage(self, "--mpirun needs a command");
  cmd[k++] = "-np";
  cmd[k++] = np;
  cmd[k++] = replay;
  if (a.dir) cmd[k++] = "--dir", cmd[k++] = a.dir;
  if (a.gen) cmd[k++] = "--generator", cmd[k++] = a.gen;
  if (a.no_gaps) cmd[k++] = "--no-gaps";
  cmd[k++] = a.file;
  cmd[k] = NULL;
  if (a.dry) {
    for (int i = 0; i < k; i++) printf("%s%s", i ? " " : "", cmd[i]);
    printf("\n");
    free(launcher);
    return SIOX_EXIT_OK;
  }
  fflush(NULL);
  execvp(cmd[0], (char *const *)cmd);
  fprintf(stderr, "siox replay: cannot run %s: %s\n", cmd[0], strerror(errno));
  free(launcher);
  return 127;
}

const struct siox_cmd siox_cmd_replay = {
    .name = "replay", .summary = "execute a workload file under MPI (siox-replay)", .help = help, .run = run};
