/*
 * Plots for the `siox` subcommands, drawn by gnuplot (Debian gnuplot-nox):
 * each plot leaves its data (NAME.dat), its script (NAME.gp) and the image
 * (NAME.png or NAME.svg) in one directory, so a user can restyle it.
 */
#ifndef SIOX_CLI_PLOT_GNUPLOT_H
#define SIOX_CLI_PLOT_GNUPLOT_H

#include <stddef.h>

enum siox_plot_style { SIOX_PLOT_LINES, SIOX_PLOT_POINTS };

struct siox_plot_series {
  const char *title; /* legend entry */
  const double *x, *y;
  size_t n;
};

struct siox_plot {
  const char *dir;    /* where the files go (created if missing) */
  const char *name;   /* file stem */
  const char *format; /* "png" or "svg" */
  const char *title, *xlabel, *ylabel;
  enum siox_plot_style style;
};

/* One x/y plot with a line or point set per series. Returns 0, or -1 with a
 * reason in err (gnuplot missing or failing included). */
int siox_plot_xy(const struct siox_plot *p, const struct siox_plot_series *s, size_t ns, char *err, size_t errcap);

/* A bar chart: two bars per label (e.g. now and projected), values y1, y2,
 * with a horizontal reference line at ref (skipped when ref <= 0). */
int siox_plot_bars(const struct siox_plot *p, const char *const *labels, const double *y1, const char *t1,
                   const double *y2, const char *t2, size_t n, double ref, char *err, size_t errcap);

#endif
