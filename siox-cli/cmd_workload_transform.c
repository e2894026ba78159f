/*
 * `siox workload transform`: a workload file changed the way a what-if about
 * the application asks (more or fewer ranks, file per process), written as a
 * workload file that `siox replay` runs and `siox capacity` predicts. The
 * transformations live in libsiox-workload (wl_transform.c); this file
 * parses and writes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd_workload_transform.h"
#include "siox_workload.h"

struct targs {
  const char *in, *out;
  long ranks;
  int fpp;
};

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct targs *a) {
  enum { OPT_RANKS = 0x200, OPT_FPP };
  static const struct option opts[] = {{"ranks", required_argument, NULL, OPT_RANKS},
                                       {"file-per-process", no_argument, NULL, OPT_FPP},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc;
  optind = 0; /* glibc: full reset (argv was shifted) */
  while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
    switch (c) {
    case 'o': a->out = optarg; break;
    case OPT_FPP: a->fpp = 1; break;
    case OPT_RANKS:
      if (siox_cli_parse_long(optarg, 1, 1 << 20, &a->ranks) < 0)
        return siox_cli_usage(self, "--ranks takes a count from 1 to %d, not '%s'", 1 << 20, optarg);
      break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (optind != argc - 1) return siox_cli_usage(self, "transform takes one workload FILE");
  a->in = argv[optind];
  if (!a->out) return siox_cli_usage(self, "transform needs -o FILE");
  if (!a->ranks && !a->fpp) return siox_cli_usage(self, "transform needs --ranks N or --file-per-process");
  return -1;
}

int siox_workload_transform_run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct targs a = {0};
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  char err[1024] = "";
  siox_workload *w = NULL, *x = NULL;
  int e = siox_wl_read_path(a.in, &w, err, sizeof err);
  /* Ranks first: the copies of a per-process file then split like the others. */
  if (!e && a.ranks && !(e = siox_wl_scale_ranks(w, (uint32_t)a.ranks, &x, err, sizeof err)))
    siox_wl_free(w), w = x;
  if (!e && a.fpp && !(e = siox_wl_file_per_process(w, &x, err, sizeof err))) siox_wl_free(w), w = x;
  if (e) {
    fprintf(stderr, "siox workload: %s: %s\n", a.in, e == -ENOMEM ? "out of memory" : err);
    siox_wl_free(w);
    return SIOX_EXIT_FAIL;
  }
  FILE *f = strcmp(a.out, "-") == 0 ? stdout : fopen(a.out, "w");
  if (!f) {
    fprintf(stderr, "siox workload: %s: %s\n", a.out, strerror(errno));
    siox_wl_free(w);
    return SIOX_EXIT_FAIL;
  }
  e = siox_wl_write(w, f);
  if (f != stdout && fclose(f)) e = -EIO;
  if (e) fprintf(stderr, "siox workload: writing %s failed\n", a.out);
  else fprintf(stderr, "%s: %u ranks, %zu files, %zu operations\n", a.out, siox_wl_ranks(w), siox_wl_nfiles(w),
               siox_wl_nrecs(w));
  siox_wl_free(w);
  return e ? SIOX_EXIT_FAIL : SIOX_EXIT_OK;
}
