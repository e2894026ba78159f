/*
 * gnuplot back end of the `siox` plots (see plot_gnuplot.h): writes the data
 * and a script, then runs gnuplot on them as a child process (no shell) and
 * checks that it produced the image.
 */
#include "plot_gnuplot.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int fail(char *err, size_t errcap, const char *what, const char *path) {
  if (err && errcap) snprintf(err, errcap, "%s %s: %s", what, path, strerror(errno));
  return -1;
}

/* A gnuplot single-quoted string: only the quote itself needs doubling. */
static void put_str(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc(*s, f);
  }
  fputc('\'', f);
}

static FILE *open_in(const struct siox_plot *p, const char *ext, char *path, size_t cap, char *err, size_t errcap) {
  if (mkdir(p->dir, 0755) != 0 && errno != EEXIST) {
    fail(err, errcap, "cannot create", p->dir);
    return NULL;
  }
  snprintf(path, cap, "%s/%s.%s", p->dir, p->name, ext);
  FILE *f = fopen(path, "w");
  if (!f) fail(err, errcap, "cannot write", path);
  return f;
}

static void put_header(FILE *f, const struct siox_plot *p) {
  int svg = strcmp(p->format, "svg") == 0;
  fprintf(f, "set terminal %s size 1000,600\nset output ", svg ? "svg dynamic" : "pngcairo");
  char out[1024];
  snprintf(out, sizeof out, "%s.%s", p->name, svg ? "svg" : "png");
  put_str(f, out);
  fputs("\nset title ", f);
  put_str(f, p->title);
  fputs("\nset xlabel ", f);
  put_str(f, p->xlabel);
  fputs("\nset ylabel ", f);
  put_str(f, p->ylabel);
  fputs("\nset grid\nset key below\nset datafile separator '\\t'\n", f);
}

/* Runs gnuplot NAME.gp inside dir and checks that the image exists. */
static int run_gnuplot(const struct siox_plot *p, char *err, size_t errcap) {
  char script[1024], image[1024];
  snprintf(script, sizeof script, "%s/%s.gp", p->dir, p->name);
  snprintf(image, sizeof image, "%s/%s.%s", p->dir, p->name, strcmp(p->format, "svg") == 0 ? "svg" : "png");
  pid_t pid;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addchdir_np(&fa, p->dir);
  char *argv[] = {"gnuplot", (char *)(strrchr(script, '/') + 1), NULL};
  int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    errno = rc;
    return fail(err, errcap, "cannot run gnuplot (install Debian's gnuplot-nox) for", script);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  struct stat sb;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || stat(image, &sb) != 0 || sb.st_size == 0) {
    if (err && errcap) snprintf(err, errcap, "gnuplot failed on %s (no %s); see its messages above", script, image);
    return -1;
  }
  return 0;
}

int siox_plot_xy(const struct siox_plot *p, const struct siox_plot_series *s, size_t ns, char *err, size_t errcap) {
  char path[1024];
  FILE *d = open_in(p, "dat", path, sizeof path, err, errcap);
  if (!d) return -1;
  /* One data block per series, separated by two blank lines (gnuplot index). */
  for (size_t i = 0; i < ns; i++) {
    for (size_t k = 0; k < s[i].n; k++) fprintf(d, "%.9g\t%.9g\n", s[i].x[k], s[i].y[k]);
    fputs(s[i].n ? "\n\n" : "nan\tnan\n\n\n", d);
  }
  if (fclose(d) != 0) return fail(err, errcap, "cannot write", path);
  FILE *f = open_in(p, "gp", path, sizeof path, err, errcap);
  if (!f) return -1;
  put_header(f, p);
  fputs("plot ", f);
  for (size_t i = 0; i < ns; i++) {
    char dat[600];
    snprintf(dat, sizeof dat, "%s.dat", p->name);
    fputs(i ? ", \\\n     " : "", f);
    put_str(f, dat);
    fprintf(f, " index %zu using 1:2 with %s title ", i, p->style == SIOX_PLOT_LINES ? "linespoints pt 7 ps 0.5" : "points pt 7");
    put_str(f, s[i].title);
  }
  fputc('\n', f);
  if (fclose(f) != 0) return fail(err, errcap, "cannot write", path);
  return run_gnuplot(p, err, errcap);
}

int siox_plot_bars(const struct siox_plot *p, const char *const *labels, const double *y1, const char *t1,
                   const double *y2, const char *t2, size_t n, double ref, char *err, size_t errcap) {
  char path[1024], dat[600];
  FILE *d = open_in(p, "dat", path, sizeof path, err, errcap);
  if (!d) return -1;
  for (size_t i = 0; i < n; i++) {
    /* Tabs separate the columns: a label with a tab would shift them. */
    char lab[320];
    snprintf(lab, sizeof lab, "%s", labels[i]);
    for (char *c = lab; *c; c++)
      if (*c == '\t' || *c == '\n') *c = ' ';
    fprintf(d, "%s\t%.9g\t%.9g\n", lab, y1[i], y2[i]);
  }
  if (fclose(d) != 0) return fail(err, errcap, "cannot write", path);
  FILE *f = open_in(p, "gp", path, sizeof path, err, errcap);
  if (!f) return -1;
  put_header(f, p);
  fputs("set style data histogram\nset style histogram clustered gap 1\nset style fill solid 0.7 border -1\n"
        "set xtics rotate by -30\nset yrange [0:*]\n", f);
  if (ref > 0) fprintf(f, "set arrow from graph 0, first %.9g to graph 1, first %.9g nohead dt 2 lw 2\n", ref, ref);
  snprintf(dat, sizeof dat, "%s.dat", p->name);
  fputs("plot ", f);
  put_str(f, dat);
  fputs(" using 2:xtic(1) title ", f);
  put_str(f, t1);
  fputs(", '' using 3 title ", f);
  put_str(f, t2);
  fputc('\n', f);
  if (fclose(f) != 0) return fail(err, errcap, "cannot write", path);
  return run_gnuplot(p, err, errcap);
}
