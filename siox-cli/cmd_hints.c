/*
 * `siox hints`: how should I run it next time? Shows what the knowledge
 * base's analyses found in a job (or for an application) and the MPI-IO
 * hint sets they suggested, with each key's rationale; can run the analysis
 * now and export a set as a ROMIO hints file (ROMIO_HINTS).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <siox/siox_kb.h>
#include <siox/siox_kb_advice.h>

#include "json_out.h"
#include "session.h"
#include "warehouse.h"

static const char help[] =
    "NAME\n"
    "  siox hints - findings and suggested MPI-IO hints of a job or an application\n"
    "\n"
    "SYNOPSIS\n"
    "  siox hints (--job J | --app EXE) [--analyze] [--all] [--json]\n"
    "             [--export romio [--output FILE]]\n"
    "\n"
    "DESCRIPTION\n"
    "  siox-server analyses every job from its causal graph when the job ends (and\n"
    "  every --analyze-every seconds while it runs): MPI-IO calls with the POSIX\n"
    "  operations they caused, the POSIX and stdio layers. It records FINDINGS,\n"
    "  each with a severity (info, warning, critical), evidence (counts, bytes,\n"
    "  share of I/O time, example AIDs for `siox blame` / `siox graph`) and the\n"
    "  expected gain, and per application (executable + hash of its arguments)\n"
    "  and file pattern (digits become #) a HINT SET for ROMIO (component\n"
    "  romio321) whose values come from the data:\n"
    "    romio_ds_write/read, ind_wr/rd_buffer_size  from a cost model of the file\n"
    "        system fitted to the job's POSIX operations (latency = a + b * bytes):\n"
    "        one operation per piece against data-sieving windows read (and written\n"
    "        back), for several buffer sizes; the cheapest wins\n"
    "    romio_cb_write/read, cb_buffer_size, cb_nodes  from the collective calls'\n"
    "        sizes per round and the job's node count\n"
    "  Findings also cover small, misaligned, random requests, contention on a\n"
    "  shared file, rank imbalance and stragglers, metadata-heavy phases and\n"
    "  stdio used for bulk data. With SIOX_HINTS=1 (`siox run --hints`) the MPI-IO\n"
    "  layer applies the newest set at MPI_File_open; keys the program sets win.\n"
    "\n"
    "  OUTCOMES. Every applied set is measured: when a run is analysed, the runs of\n"
    "  the same application (executable and arguments) that applied the set (their\n"
    "  opens recorded mpi/hint_set) are compared with the comparable runs that\n"
    "  applied none (same number of processes, bytes on the file pattern within\n"
    "  4x): time per byte in the MPI-IO data calls on files of the pattern, median\n"
    "  over runs, without / with = the speedup, with a 95 % bootstrap interval\n"
    "  (runs, then calls, resampled). Each set shows it (\"measured: ...\") or\n"
    "  \"not measured yet\", and over how many runs. A set whose whole interval is\n"
    "  below 1 is WITHDRAWN: never served again, the set it superseded is served\n"
    "  again (or none), and the evidence is kept (--app lists withdrawn sets). A\n"
    "  set whose prediction rests on a value the data could not determine (e.g.\n"
    "  the per-byte cost when one operation size was seen) is an EXPERIMENT: no gain\n"
    "  is claimed, it is applied until a run with it has been judged, then kept\n"
    "  (measured faster) or withdrawn (slower or within noise).\n"
    "\n"
    "OPTIONS\n"
    "  --job J          the findings of job J (processes.job, or proc:ID) and the\n"
    "                   hint sets its analysis produced\n"
    "  --app EXE        the live and the withdrawn hint sets of executable EXE (any\n"
    "                   arguments) and the findings of its most recently analysed job\n"
    "  --analyze        analyse job J now (needs --job), e.g. right after it ended,\n"
    "                   instead of waiting for siox-server's analysis thread\n"
    "  --all            with --app, superseded hint sets too\n"
    "  --export romio   write the hint set with the largest expected gain as a ROMIO\n"
    "                   hints file (one 'key value' per line) to stdout or --output;\n"
    "                   withdrawn sets are never exported\n"
    "  --output FILE    where --export writes\n"
    SIOX_GLOBAL_HELP
    "\n"
    "  --json prints {job, app, findings [{kind, severity, file_pattern, summary,\n"
    "  evidence, expected_gain_s, hint_set_id}], hint_sets [{hint_set_id, exe, args,\n"
    "  file_pattern, component, hints, rationale, evidence, expected_gain_s,\n"
    "  source_job, superseded, created_at, status (live, experiment, withdrawn),\n"
    "  status_reason, outcome (null: not measured yet; else {verdict (faster,\n"
    "  slower, no_change, not_measured), speedup, ci_low, ci_high, per (byte,\n"
    "  call), runs_with, runs_without, calls_with, calls_without, jobs_with,\n"
    "  jobs_without})}]}.\n"
    "\n"
    "EXIT STATUS\n"
    "  0 answered (also when nothing was found); 1 unknown job, no hint set to\n"
    "  export, analysis failed or warehouse unreachable; 2 bad command line.\n"
    "\n"
    "EXAMPLES\n"
    "  siox hints --job 4711 --analyze\n"
    "  siox hints --app /opt/app/bin/sim --export romio --output sim.hints\n"
    "  ROMIO_HINTS=sim.hints mpirun --mca io romio321 -np 64 /opt/app/bin/sim\n";

struct hints_args {
  const char *job, *app, *output;
  int analyze, all, export_romio;
};

static int parse(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv, struct hints_args *a) {
  enum { OPT_JOB = 0x200, OPT_APP, OPT_ANALYZE, OPT_ALL, OPT_EXPORT, OPT_OUTPUT };
  static const struct option opts[] = {{"job", required_argument, NULL, OPT_JOB},
                                       {"app", required_argument, NULL, OPT_APP},
                                       {"analyze", no_argument, NULL, OPT_ANALYZE},
                                       {"all", no_argument, NULL, OPT_ALL},
                                       {"export", required_argument, NULL, OPT_EXPORT},
                                       {"output", required_argument, NULL, OPT_OUTPUT},
                                       SIOX_GLOBAL_LONGOPTS,
                                       {0}};
  int c, rc;
  *a = (struct hints_args){0};
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
    case OPT_JOB: a->job = optarg; break;
    case OPT_APP: a->app = optarg; break;
    case OPT_ANALYZE: a->analyze = 1; break;
    case OPT_ALL: a->all = 1; break;
    case OPT_OUTPUT: a->output = optarg; break;
    case OPT_EXPORT:
      if (strcmp(optarg, "romio") != 0) return siox_cli_usage(self, "--export knows only 'romio', not '%s'", optarg);
      a->export_romio = 1;
      break;
    default:
      if ((rc = siox_cli_common_opt(cli, self, c, argv)) >= 0) return rc;
    }
  }
  if (optind < argc) return siox_cli_usage(self, "unexpected argument '%s'", argv[optind]);
  if (!a->job == !a->app) return siox_cli_usage(self, "give exactly one of --job J or --app EXE");
  if (a->job && !a->job[0]) return siox_cli_usage(self, "--job needs a job id");
  if (a->analyze && !a->job) return siox_cli_usage(self, "--analyze needs --job");
  if (a->output && !a->export_romio) return siox_cli_usage(self, "--output goes with --export romio");
  return -1;
}

static json_object *parse_json(const char *text) {
  json_object *o = json_tokener_parse(text);
  return o ? o : json_object_new_object();
}

static json_object *findings_json(const struct siox_kb_advice *a) {
  json_object *arr = json_object_new_array();
  for (size_t i = 0; i < a->nfindings; i++) {
    const struct siox_kb_finding *f = &a->findings[i];
    json_object *o = json_object_new_object();
    siox_json_str(o, "kind", f->kind);
    siox_json_str(o, "severity", f->severity);
    siox_json_str(o, "file_pattern", f->file_pattern);
    siox_json_str(o, "summary", f->summary);
    json_object_object_add(o, "evidence", parse_json(f->evidence_json));
    siox_json_dbl(o, "expected_gain_s", f->expected_gain_s);
    json_object_object_add(o, "hint_set_id", f->hint_set_id ? json_object_new_int64(f->hint_set_id) : NULL);
    json_object_array_add(arr, o);
  }
  return arr;
}

static json_object *sets_json(const struct siox_kb_advice *a) {
  json_object *arr = json_object_new_array();
  for (size_t i = 0; i < a->nsets; i++) {
    const struct siox_kb_hint_set *h = &a->sets[i];
    json_object *o = json_object_new_object();
    siox_json_int(o, "hint_set_id", h->id);
    siox_json_str(o, "exe", h->exe);
    siox_json_str(o, "args", h->args);
    siox_json_str(o, "file_pattern", h->file_pattern);
    siox_json_str(o, "component", h->component);
    json_object_object_add(o, "hints", parse_json(h->hints_json));
    json_object_object_add(o, "rationale", parse_json(h->rationale_json));
    json_object_object_add(o, "evidence", parse_json(h->evidence_json));
    siox_json_dbl(o, "expected_gain_s", h->expected_gain_s);
    siox_json_str(o, "source_job", h->source_job);
    json_object_object_add(o, "superseded", json_object_new_boolean(h->superseded));
    siox_json_str(o, "created_at", h->created_at);
    siox_json_str(o, "status", h->status);
    siox_json_str(o, "status_reason", h->status_reason);
    json_object_object_add(o, "outcome", h->outcome_json[0] ? parse_json(h->outcome_json) : NULL);
    json_object_array_add(arr, o);
  }
  return arr;
}

static void print_findings(const struct siox_kb_advice *a) {
  if (a->nfindings == 0) printf("No findings.\n");
  for (size_t i = 0; i < a->nfindings; i++) {
    const struct siox_kb_finding *f = &a->findings[i];
    printf("[%s] %s%s%s\n    %s\n", f->severity, f->kind, f->file_pattern[0] ? "  " : "", f->file_pattern,
           f->summary);
    if (f->expected_gain_s > 0) printf("    expected gain: %.3f s\n", f->expected_gain_s);
  }
}

/* "measured: ..." of a set: its outcome (schema 016) or "not measured yet". */
static void print_outcome(const char *text) {
  json_object *o = text[0] ? parse_json(text) : NULL, *v;
  const char *verdict = o && json_object_object_get_ex(o, "verdict", &v) ? json_object_get_string(v) : "not_measured";
  long with = o && json_object_object_get_ex(o, "runs_with", &v) ? (long)json_object_get_int64(v) : 0;
  long without = o && json_object_object_get_ex(o, "runs_without", &v) ? (long)json_object_get_int64(v) : 0;
  if (!strcmp(verdict, "not_measured")) {
    printf("  measured: not measured yet (%ld run%s with it, %ld comparable without)\n", with, with == 1 ? "" : "s",
           without);
  } else {
    double sp = json_object_object_get_ex(o, "speedup", &v) ? json_object_get_double(v) : NAN;
    double lo = json_object_object_get_ex(o, "ci_low", &v) ? json_object_get_double(v) : NAN;
    double hi = json_object_object_get_ex(o, "ci_high", &v) ? json_object_get_double(v) : NAN;
    const char *per = json_object_object_get_ex(o, "per", &v) ? json_object_get_string(v) : "byte";
    printf("  measured: speedup %.2fx, 95%% interval [%.2f, %.2f] (%s: time per %s in the affected MPI-IO calls,\n"
           "            runs without / with), over %ld run%s with it and %ld without\n",
           sp, lo, hi, !strcmp(verdict, "faster") ? "faster" : !strcmp(verdict, "slower") ? "SLOWER" : "within noise",
           per, with, with == 1 ? "" : "s", without);
  }
  json_object_put(o);
}

static void print_sets(const struct siox_kb_advice *a) {
  if (a->nsets == 0) {
    printf("\nNo hint sets.\n");
    return;
  }
  for (size_t i = 0; i < a->nsets; i++) {
    const struct siox_kb_hint_set *s = &a->sets[i];
    const char *status = s->status, *reason = s->status_reason;
    int experiment = !strcmp(status, "experiment"), withdrawn = !strcmp(status, "withdrawn");
    printf("\nHint set %lld for %s (%s), file pattern %s%s\n  from job %s, ", (long long)s->id, s->component, s->exe,
           s->file_pattern, withdrawn ? " (WITHDRAWN)" : s->superseded ? " (superseded)" : "", s->source_job);
    /* An experiment's prediction rests on a value the data did not
     * determine: no gain is claimed for it. */
    if (experiment) printf("expected gain unknown\n  status: experiment, applied to one run and then judged: %s\n", reason);
    else printf("expected gain %.3f s\n  status: %s%s%s\n", s->expected_gain_s, status, reason[0] ? ": " : "", reason);
    print_outcome(s->outcome_json);
    json_object *h = parse_json(s->hints_json), *why = parse_json(s->rationale_json), *w;
    json_object_object_foreach(h, key, val) {
      printf("  %-22s %s\n", key, json_object_get_string(val));
      if (json_object_object_get_ex(why, key, &w)) printf("      because %s\n", json_object_get_string(w));
    }
    json_object_put(h);
    json_object_put(why);
  }
}

/* The first row of s (the largest expected gain, or the newest) as "key
 * value" lines: the format ROMIO reads from the file named by ROMIO_HINTS. */
static int export_romio(const struct siox_kb_advice *a, const char *output) {
  const struct siox_kb_hint_set *row = NULL;
  int n = 0;
  for (size_t i = 0; i < a->nsets; i++) {
    if (!strcmp(a->sets[i].status, "withdrawn")) continue; /* measured worse: never exported */
    if (!row) row = &a->sets[i];
    n++;
  }
  if (!row) {
    fprintf(stderr, "siox hints: no hint set to export\n");
    return SIOX_EXIT_FAIL;
  }
  if (n > 1)
    fprintf(stderr, "siox hints: %d hint sets; exporting set %lld (file pattern %s, largest expected gain)\n", n,
            (long long)row->id, row->file_pattern);
  FILE *out = output ? fopen(output, "w") : stdout;
  if (!out) {
    fprintf(stderr, "siox hints: cannot write %s: %s\n", output, strerror(errno));
    return SIOX_EXIT_FAIL;
  }
  json_object *h = parse_json(row->hints_json);
  json_object_object_foreach(h, key, val) fprintf(out, "%s %s\n", key, json_object_get_string(val));
  json_object_put(h);
  int bad = ferror(out);
  if (output && fclose(out) != 0) bad = 1;
  if (bad) fprintf(stderr, "siox hints: writing %s failed\n", output ? output : "stdout");
  return bad ? SIOX_EXIT_FAIL : SIOX_EXIT_OK;
}

static int show(struct siox_cli *cli, PGconn *c, const struct hints_args *a) {
  struct siox_kb_advice adv;
  char err[1024] = "out of memory";
  enum siox_kb_advice_of of = a->job ? SIOX_KB_ADVICE_JOB : a->all ? SIOX_KB_ADVICE_APP_ALL : SIOX_KB_ADVICE_APP;
  if (siox_kb_advice_load(c, of, a->job ? a->job : a->app, &adv, err, sizeof err) != 0) {
    fprintf(stderr, "siox hints: %s\n", err);
    return SIOX_EXIT_FAIL;
  }
  int rc;
  if (a->export_romio) {
    rc = export_romio(&adv, a->output);
  } else if (cli->json) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "job", a->job ? json_object_new_string(a->job)
                                            : adv.nfindings ? json_object_new_string(adv.findings[0].job) : NULL);
    json_object_object_add(o, "app", a->app ? json_object_new_string(a->app) : NULL);
    json_object_object_add(o, "findings", findings_json(&adv));
    json_object_object_add(o, "hint_sets", sets_json(&adv));
    rc = siox_json_print(o) == 0 ? SIOX_EXIT_OK : SIOX_EXIT_FAIL;
  } else {
    if (a->job) printf("Job %s: %zu finding%s.\n", a->job, adv.nfindings, adv.nfindings == 1 ? "" : "s");
    else printf("Application %s: findings of its latest analysed job%s%s.\n", a->app, adv.nfindings ? " " : "",
                adv.nfindings ? adv.findings[0].job : " (none)");
    print_findings(&adv);
    print_sets(&adv);
    rc = SIOX_EXIT_OK;
  }
  siox_kb_advice_free(&adv);
  return rc;
}

static int run(struct siox_cli *cli, const struct siox_cmd *self, int argc, char **argv) {
  struct hints_args a;
  int rc = parse(cli, self, argc, argv, &a);
  if (rc >= 0) return rc;
  struct siox_wh *wh;
  if ((rc = siox_cli_open(cli, &wh)) != SIOX_EXIT_OK) return rc;
  PGconn *c = siox_wh_pg(wh);
  char err[1024] = "";
  int exists = a.job ? siox_wh_job_exists(c, a.job, err, sizeof err) : 1;
  if (exists <= 0) {
    if (exists == 0) fprintf(stderr, "siox hints: no job '%s' in the warehouse\n", a.job);
    else fprintf(stderr, "siox hints: %s\n", err);
    rc = SIOX_EXIT_FAIL;
  } else if (a.analyze && siox_kb_analyze_job(c, a.job, err, sizeof err) < 0) {
    fprintf(stderr, "siox hints: %s\n", err);
    rc = SIOX_EXIT_FAIL;
  } else {
    rc = show(cli, c, &a);
  }
  siox_wh_close(wh);
  return rc;
}

const struct siox_cmd siox_cmd_hints = {"hints", "show findings and suggested MPI-IO hints, export ROMIO hints",
                                        help, run};
