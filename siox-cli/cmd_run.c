/*
 * `siox run -- CMD ...`: the launcher in front of an application. It puts the
 * chosen layers' wrapper libraries into LD_PRELOAD and SIOX_SOCKET into the
 * environment (and onto mpirun's -x list), checks that the node daemon is
 * there to receive the records, then replaces itself with CMD.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"

#ifndef SIOX_RUN_LIBDIR
#define SIOX_RUN_LIBDIR "lib" /* install libdir, relative to the prefix */
#endif
#define EXIT_CANNOT_EXEC 127

static const char help[] =
    "NAME\n"
    "  siox run - run a program (or an MPI job) with SIOX instrumentation\n"
    "\n"
    "SYNOPSIS\n"
    "  siox run [--layers LIST] [--socket PATH] [--libdir DIR] [--no-check] [--hints]\n"
    "           [--]\n"
    "           CMD [ARGS...]\n"
    "\n"
    "DESCRIPTION\n"
    "  Sets up the environment so that CMD, and every process it starts, records\n"
    "  its I/O with SIOX, then executes CMD in place of itself (the exit status is\n"
    "  CMD's). Nothing in CMD needs to be rebuilt.\n"
    "\n"
    "  LD_PRELOAD    gets the wrapper library of each chosen layer, after any\n"
    "                entries already there (a sanitizer runtime must stay first);\n"
    "                a library already listed is not added twice.\n"
    "  SIOX_SOCKET   is set to the daemon socket.\n"
    "  SIOX_HINTS    is set to 1 with --hints.\n"
    "\n"
    "  The libraries are looked up next to the siox binary: the build tree layout\n"
    "  (BUILD/siox-cli/siox -> BUILD/instrumentation/LAYER/libsiox-LAYER.so), then\n"
    "  the install layout (PREFIX/bin/siox -> PREFIX/" SIOX_RUN_LIBDIR "/libsiox-LAYER.so),\n"
    "  unless --libdir (or $SIOX_LIBDIR) names the directory.\n"
    "\n"
    "  MPI: when CMD is mpirun, mpiexec or orterun (OpenMPI), the environment of\n"
    "  mpirun already reaches ranks on this node; for ranks on other nodes siox run\n"
    "  also adds `-x LD_PRELOAD -x SIOX_SOCKET` (and `-x SIOX_JOB_ID`, `-x SIOX_HINTS`\n"
    "  and `-x SIOX_HINTS_TIMEOUT_MS` when set) to\n"
    "  mpirun's options, unless the command line already exports them. Each node\n"
    "  needs its own siox-daemon on the same socket path.\n"
    "\n"
    "  Before anything runs, siox run connects to the daemon's socket. When no\n"
    "  daemon answers it says so and exits 1: the program's records would be\n"
    "  buffered and then dropped. --no-check runs CMD anyway.\n"
    "\n"
    "OPTIONS\n"
    "  --layers LIST    comma-separated layers to instrument, any of posix, mpi,\n"
    "                   hdf5 (default posix,mpi,hdf5). The preload order is always\n"
    "                   hdf5, mpi, posix (upper layers first).\n"
    "  --socket PATH    the node daemon's socket (default $SIOX_SOCKET, else\n"
    "                   " SIOX_DEFAULT_SOCKET ")\n"
    "  --libdir DIR     take libsiox-LAYER.so from DIR\n"
    "  --no-check       do not check that the daemon is running\n"
    "  --hints          apply the knowledge base's MPI-IO hints: at each\n"
    "                   MPI_File_open, rank 0 asks the daemon for the hints\n"
    "                   suggested for this program and file (see `siox hints`)\n"
    "                   and every rank adds them to its MPI_Info; keys the\n"
    "                   program set itself are never overridden. A daemon that\n"
    "                   does not answer within $SIOX_HINTS_TIMEOUT_MS (default\n"
    "                   200 ms) delays the open by no more than that. Needs the\n"
    "                   mpi layer. What was applied is recorded on the open\n"
    "                   (mpi/hints_applied, mpi/hint_set, mpi/hints_status).\n"
    "  --               ends siox's options; everything after it is CMD\n"
    "\n"
    "ENVIRONMENT\n"
    "  SIOX_SOCKET  default daemon socket\n"
    "  SIOX_LIBDIR  default for --libdir\n"
    "  SIOX_JOB_ID  passed on to the ranks (the job the activities are filed under)\n"
    "  SIOX_HINTS   1: apply hints (what --hints sets)\n"
    "  SIOX_HINTS_TIMEOUT_MS  bound on the hint query at each open (default 200)\n"
    "\n"
    "EXIT STATUS\n"
    "  CMD's exit status once it runs; 1 no daemon at the socket, or a layer's\n"
    "  library not found; 2 bad command line; 127 CMD could not be executed.\n"
    "\n"
    "EXAMPLES\n"
    "  siox run -- ./a.out input.dat\n"
    "  siox run --layers posix -- dd if=/dev/zero of=/mnt/gluster/f bs=1M count=4\n"
    "  SIOX_JOB_ID=run42 siox run --layers posix,mpi,hdf5 -- \\\n"
    "      mpirun -np 4 ./simulation out.h5\n"
    "  siox run --hints -- mpirun -np 4 --mca io romio321 ./simulation out.h5\n"
    "  siox run --socket /tmp/siox.sock --no-check -- make check\n";

/* Upper layers first: HDF5 calls MPI-IO, which calls POSIX. */
static const char *const known_layers[] = {"hdf5", "mpi", "posix"};
#define NLAYERS (sizeof(known_layers) / sizeof(known_layers[0]))

struct run_args {
  bool want[NLAYERS];
  const char *socket, *libdir;
  bool check, hints;
  char **cmd; /* NULL-terminated, points into argv */
};

static int parse_layers(const char *list, bool want[NLAYERS]) {
  char buf[256];
  if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf) return -EINVAL;
  memset(want, 0, NLAYERS * sizeof *want);
  int n = 0;
  for (char *save = NULL, *l = strtok_r(buf, ",", &save); l; l = strtok_r(NULL, ",", &save)) {
    size_t i = 0;
    while (i < NLAYERS && strcmp(known_layers[i], l) != 0) i++;
    if (i == NLAYERS) return -EINVAL;
    want[i] = true;
    n++;
  }
  return n ? 0 : -EINVAL;
}

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct run_args *a) {
  enum { OPT_LAYERS = 0x200, OPT_SOCKET, OPT_LIBDIR, OPT_NO_CHECK, OPT_HINTS };
  static const struct option opts[] = {{"layers", required_argument, NULL, OPT_LAYERS},
                                       {"socket", required_argument, NULL, OPT_SOCKET},
                                       {"libdir", required_argument, NULL, OPT_LIBDIR},
                                       {"no-check", no_argument, NULL, OPT_NO_CHECK},
                                       {"hints", no_argument, NULL, OPT_HINTS},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  const char *env = getenv("SIOX_SOCKET"), *libenv = getenv("SIOX_LIBDIR");
  int c, rc;
  a->socket = env && *env ? env : SIOX_DEFAULT_SOCKET;
  a->libdir = libenv && *libenv ? libenv : NULL;
  a->check = true;
  parse_layers("posix,mpi,hdf5", a->want);
  /* '+': stop at CMD, so that CMD's own options are not taken for ours. */
  while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
    if (c == OPT_LAYERS) {
      if (parse_layers(optarg, a->want) < 0)
        return siox_cli_usage(self, "bad --layers '%s' (a comma-separated list of posix, mpi, hdf5)", optarg);
    } else if (c == OPT_SOCKET) {
      a->socket = optarg;
    } else if (c == OPT_LIBDIR) {
      a->libdir = optarg;
    } else if (c == OPT_NO_CHECK) {
      a->check = false;
    } else if (c == OPT_HINTS) {
      a->hints = true;
    } else if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) {
      return rc;
    }
  }
  if (optind >= argc) return siox_cli_usage(self, "no command to run");
  a->cmd = argv + optind;
  return -1;
}

/* ---- finding the libraries --------------------------------------------- */

/* Writes DIR/libsiox-LAYER.so into out when that file exists. 0 or -ENOENT. */
static int try_lib(char *out, size_t len, const char *dir, const char *sub, const char *layer) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s%s/libsiox-%s.so", dir, sub, layer) >= (int)sizeof path) return -ENAMETOOLONG;
  if (access(path, R_OK) != 0) return -ENOENT;
  if (!realpath(path, out) || strlen(out) >= len) return -ENOENT;
  return 0;
}

/* The library of one layer: --libdir, else the build tree, else the install
 * layout, both relative to this binary. 0 or -ENOENT. */
static int find_lib(const struct run_args *a, const char *layer, char out[PATH_MAX]) {
  if (a->libdir) return try_lib(out, PATH_MAX, a->libdir, "", layer);
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return -ENOENT;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return -ENOENT;
  strcpy(slash, "/.."); /* exe's dir is siox-cli/ (build) or bin/ (install) */
  char sub[64];
  snprintf(sub, sizeof sub, "/instrumentation/%s", layer);
  if (try_lib(out, PATH_MAX, exe, sub, layer) == 0) return 0;
  return try_lib(out, PATH_MAX, exe, "/" SIOX_RUN_LIBDIR, layer);
}

/* Appends lib to the colon/space separated list unless it is already there. */
static int preload_add(char *list, size_t len, const char *lib) {
  size_t n = strlen(lib);
  for (const char *p = strstr(list, lib); p; p = strstr(p + 1, lib))
    if ((p == list || p[-1] == ':' || p[-1] == ' ') && (p[n] == 0 || p[n] == ':' || p[n] == ' ')) return 0;
  size_t used = strlen(list);
  if (used + 1 + n + 1 > len) return -ENAMETOOLONG;
  snprintf(list + used, len - used, "%s%s", used ? ":" : "", lib);
  return 0;
}

static int set_preload(const struct run_args *a, const struct siox_cmd *self) {
  static char list[8 * PATH_MAX];
  const char *old = getenv("LD_PRELOAD");
  snprintf(list, sizeof list, "%s", old ? old : "");
  for (size_t i = 0; i < NLAYERS; i++) {
    char lib[PATH_MAX];
    if (!a->want[i]) continue;
    if (find_lib(a, known_layers[i], lib) < 0) {
      fprintf(stderr, "siox %s: cannot find libsiox-%s.so (%s); name its directory with --libdir\n", self->name,
              known_layers[i], a->libdir ? a->libdir : "next to the siox binary");
      return -ENOENT;
    }
    if (preload_add(list, sizeof list, lib) < 0) return -ENAMETOOLONG;
  }
  return setenv("LD_PRELOAD", list, 1) == 0 ? 0 : -errno;
}

/* ---- the daemon -------------------------------------------------------- */

/* Connects to the daemon's socket and hangs up. 0 or negative errno. */
static int daemon_probe(const char *path) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof sa.sun_path) return -ENAMETOOLONG;
  strcpy(sa.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 ? 0 : -errno;
  close(fd);
  return rc;
}

/* ---- mpirun ------------------------------------------------------------ */

static bool is_mpirun(const char *cmd) {
  const char *base = strrchr(cmd, '/');
  base = base ? base + 1 : cmd;
  return strncmp(base, "mpirun", 6) == 0 || strncmp(base, "mpiexec", 7) == 0 || strcmp(base, "orterun") == 0;
}

/* Does mpirun's command line already export VAR (-x VAR or -x VAR=...)? */
static bool exports(char **cmd, const char *var) {
  size_t n = strlen(var);
  for (int i = 1; cmd[i] && cmd[i + 1]; i++)
    if (strcmp(cmd[i], "-x") == 0 && strncmp(cmd[i + 1], var, n) == 0 && (cmd[i + 1][n] == 0 || cmd[i + 1][n] == '='))
      return true;
  return false;
}

/* mpirun with "-x VAR" inserted after argv[0] for each variable not yet
 * exported; the caller owns the returned array (the strings are argv's or
 * static), NULL on allocation failure. */
static char **mpirun_argv(char **cmd) {
  static char *const vars[] = {"LD_PRELOAD", "SIOX_SOCKET", "SIOX_JOB_ID", "SIOX_HINTS", "SIOX_HINTS_TIMEOUT_MS"};
  enum { NVARS = sizeof vars / sizeof vars[0] };
  int n = 0;
  while (cmd[n]) n++;
  char **out = calloc((size_t)n + 2 * NVARS + 1, sizeof *out);
  if (!out) return NULL;
  int k = 0;
  out[k++] = cmd[0];
  for (size_t v = 0; v < NVARS; v++) {
    if (exports(cmd, vars[v]) || !getenv(vars[v])) continue;
    out[k++] = "-x";
    out[k++] = vars[v];
  }
  for (int i = 1; i < n; i++) out[k++] = cmd[i];
  return out;
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct run_args a = {0};
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  if (a.check && (rc = daemon_probe(a.socket)) < 0) {
    fprintf(stderr,
            "siox run: no SIOX daemon is running at %s (%s).\n"
            "  Start one with `siox-daemon --socket %s`, point to it with --socket or\n"
            "  $SIOX_SOCKET, or pass --no-check to run without one (records are then\n"
            "  buffered and dropped).\n",
            a.socket, strerror(-rc), a.socket);
    return SIOX_EXIT_FAIL;
  }
  if (set_preload(&a, self) < 0) return SIOX_EXIT_FAIL;
  if (setenv("SIOX_SOCKET", a.socket, 1) != 0) return SIOX_EXIT_FAIL;
  if (a.hints && setenv("SIOX_HINTS", "1", 1) != 0) return SIOX_EXIT_FAIL;
  char **cmd = is_mpirun(a.cmd[0]) ? mpirun_argv(a.cmd) : a.cmd;
  if (!cmd) return SIOX_EXIT_FAIL;
  execvp(cmd[0], cmd);
  fprintf(stderr, "siox run: cannot run %s: %s\n", cmd[0], strerror(errno));
  return EXIT_CANNOT_EXEC;
}

const struct siox_cmd siox_cmd_run = {
    .name = "run",
    .summary = "run a program or MPI job with SIOX instrumentation preloaded",
    .help = help,
    .run = run,
};
