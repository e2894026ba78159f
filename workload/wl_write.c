/*
 * Writes a workload in the line-oriented text format of README.md: a header
 * naming the format, version and form, the job, the file table, one line per
 * record (trace) or per counter row (characterization), and an `end` line
 * with the counts, so that a reader tells a complete file from a cut one.
 */
#include <errno.h>
#include <inttypes.h>

#include "wl_model.h"

/* Names go to the end of their line; %XX-escape what would break the line
 * structure (control characters, DEL) and '%' itself. */
static void put_escaped(FILE *f, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x20 || *p == 0x7f || *p == '%')
      fprintf(f, "%%%02X", *p);
    else
      fputc(*p, f);
  }
}

static void put_header(const siox_workload *w, FILE *f) {
  fprintf(f, "siox-workload %d %s\n", SIOX_WL_VERSION,
          w->form == SIOX_WL_TRACE ? "trace" : "characterization");
  fputs("job ", f);
  put_escaped(f, w->job);
  fprintf(f, "\nranks %" PRIu32 "\n", w->ranks);
  for (size_t i = 0; i < w->nfiles; i++) {
    fprintf(f, "file %zu ", i);
    put_escaped(f, w->files[i]);
    fputc('\n', f);
  }
}

static void put_rec(FILE *f, const struct siox_wl_rec *r) {
  fprintf(f, "r %" PRIu32 " %s ", r->rank, siox_wl_op_name((int)r->op));
  if (r->fid == SIOX_WL_NOFILE)
    fputc('-', f);
  else
    fprintf(f, "%" PRIu32, r->fid);
  fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64, r->offset, r->bytes, r->gap_ns, r->dur_ns);
  if (r->op == SIOX_WL_MPI_VIEW) fprintf(f, " %" PRIu64, r->extent);
  fputc('\n', f);
}

static void put_dir(FILE *f, char d, const struct siox_wl_dir *x) {
  fprintf(f, " %c_count=%" PRIu64 " %c_bytes=%" PRIu64 " %c_coll=%" PRIu64 " %c_seq=%" PRIu64 " %c_consec=%" PRIu64,
          d, x->count, d, x->bytes, d, x->coll, d, x->seq, d, x->consec);
  fprintf(f, " %c_hist=", d);
  for (int i = 0; i < SIOX_WL_HIST_BINS; i++) fprintf(f, "%s%" PRIu64, i ? "," : "", x->hist[i]);
  fprintf(f, " %c_common=", d);
  int any = 0;
  for (int i = 0; i < SIOX_WL_COMMON; i++)
    if (x->common_count[i]) fprintf(f, "%s%" PRIu64 ":%" PRIu64, any++ ? "," : "", x->common_size[i], x->common_count[i]);
  if (!any) fputc('-', f);
  fprintf(f, " %c_first=%" PRIu64 " %c_max_end=%" PRIu64 " %c_time_ns=%" PRId64, d, x->first_offset, d, x->max_end, d,
          x->time_ns);
}

static void put_counters(FILE *f, const struct siox_wl_counters *c) {
  fprintf(f, "c %" PRIu32 " %" PRIu32 " mpi=%d opens=%" PRIu64 " closes=%" PRIu64 " mpi_opens=%" PRIu64
             " mpi_closes=%" PRIu64 " seeks=%" PRIu64 " stats=%" PRIu64 " fsyncs=%" PRIu64 " meta_ns=%" PRId64,
          c->rank, c->fid, c->mpi, c->opens, c->closes, c->mpi_opens, c->mpi_closes, c->seeks, c->stats, c->fsyncs,
          c->meta_ns);
  put_dir(f, 'r', &c->rd);
  put_dir(f, 'w', &c->wr);
  fputc('\n', f);
}

int siox_wl_write(const siox_workload *w, FILE *f) {
  put_header(w, f);
  size_t rows = 0;
  if (w->form == SIOX_WL_TRACE) {
    for (size_t i = 0; i < w->nrecs; i++) put_rec(f, &w->recs[i]);
    rows = w->nrecs;
  } else {
    for (uint32_t r = 0; r < w->ranks; r++) {
      if (!w->rank_set || !w->rank_set[r]) continue;
      const struct siox_wl_rank *k = &w->rank_info[r];
      fprintf(f, "rank %" PRIu32 " ops=%" PRIu64 " barriers=%" PRIu64 " compute_ns=%" PRId64 " io_ns=%" PRId64 "\n",
              k->rank, k->ops, k->barriers, k->compute_ns, k->io_ns);
      rows++;
    }
    for (size_t i = 0; i < w->nctr; i++) put_counters(f, &w->ctr[i]);
    rows += w->nctr;
  }
  fprintf(f, "end %zu %zu\n", w->nfiles, rows);
  return fflush(f) || ferror(f) ? -EIO : 0;
}
