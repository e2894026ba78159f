/*
 * Blame through a collective call (README.md "Collective calls"). In a
 * collective write (MPI_File_write_all, _write_at_all, H5Dwrite over them)
 * ROMIO's aggregator ranks make the pwrites for every rank; a rank that is
 * no aggregator spends its call in MPI communication, waiting for them.
 * Its time reaches the storage through the server's implicit link from its
 * call (a remote-call send of its byte range) to the aggregator's pwrite,
 * which blame's walk follows like any other child. When that link is
 * missing (the range was unknown, the aggregator's POSIX layer was off,
 * OMPIO returned before the pwrite and the late link lost to a better
 * candidate), the call reaches no shared resource. Then blame follows the
 * call's siblings: the same collective of the other ranks of the job.
 *
 * RULE (siox_collective_pick): a sibling is a call of the same layer and
 * name in another process of the same job (and of the same file, when the
 * call sent its range) whose interval overlaps the call's. Of the siblings
 * that made I/O themselves (POSIX children: an aggregator), the one
 * overlapping the call longest is followed (the aggregator of this round
 * of the collective, not of the round before or after); ties: more I/O
 * time, then the lower aid. Siblings without I/O waited too and explain
 * nothing. The rule applies only when the call's own tree reached no
 * shared resource: its own link, where it exists, is the evidence.
 * Pure but for the fetch callbacks: blame_sibling.c runs these with the
 * siblings from the warehouse (warehouse_collective.c).
 */
#ifndef SIOX_CLI_BLAME_COLLECTIVE_H
#define SIOX_CLI_BLAME_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blame.h"
#include "blame_unlinked.h"
#include "waiting.h"

/* One sibling of a collective call, as the warehouse returns it. */
struct siox_sibling {
  int64_t aid;
  int32_t pid;
  char host[64]; /* its process's host */
  int64_t start_ns, end_ns;
  int64_t io_ns; /* time of its own POSIX children (0: it made no I/O) */
};

/* The deepest activity on blame's path that is a collective call (its
 * mpi/collective attribute is 1), or NULL. */
const struct siox_act *siox_collective_on_path(const struct siox_blame *b);

/* The sibling the collective call c waited for (index into s), or -1 when
 * none overlaps c and made I/O. */
long siox_collective_pick(const struct siox_act *c, const struct siox_sibling *s, size_t n);

/* ---- waiting in a collective ------------------------------------------ */
/* A collective call that reached no component itself (no activity below an
 * implicit link under it), such as the MPI_File_set_view HDF5 makes after
 * each H5Dwrite, spends its time waiting for the ranks of the job that have
 * not called it yet: the slowest rank's cause is the call's cause.
 *
 * RULE (siox_collective_wait_ns): an instant t of waiting collective c
 * counts as waiting for the resource when, at t, the resource served a
 * request whose origin process (pid and host) is a sibling of c that had
 * not yet entered its c (t < the sibling's start): the call waited in c for
 * a rank the resource was holding up. Only instants of the call's unlinked
 * stretches count (linked time is the component's own, already charged).
 * Requests of other processes, other jobs, and ranks that had already
 * arrived explain nothing here. Collective: the mpi/collective attribute,
 * or the MPI-IO calls collective by definition (open, close, set_view,
 * set_size, set_info, set_atomicity, preallocate, sync). */
bool siox_collective_call(const struct siox_act *a);

/* The waiting collectives in root's tree (collective calls with no
 * component below them), the first cap of them into out (out may be NULL
 * with cap 0); their number, all of them even beyond cap (as snprintf:
 * call again with an out that large). */
size_t siox_collective_waits(const struct siox_act *root, const struct siox_act **out, size_t cap);

/* Into *ns, the nanoseconds of collective c's waiting charged to the
 * resource whose service is served[0..nserved) (waiting.h: origins with
 * pid and host), given c's siblings s[0..n), within the stretches of u.
 * 0, or -ENOMEM (then *ns is 0 and means nothing: fail, do not judge). */
int siox_collective_wait_ns(const struct siox_act *c, const struct siox_sibling *s, size_t n,
                            const struct siox_served *served, size_t nserved, const struct siox_unlinked *u,
                            int64_t *ns);

/* The siblings of waiting collective c into a malloc'd *s (freed by the
 * caller, also on error) and *n: 0, or negative errno. */
typedef int (*siox_sibling_fetch_fn)(void *ctx, const struct siox_act *c, struct siox_sibling **s, size_t *n);

/* Into *ns, the sum of siox_collective_wait_ns over EVERY waiting
 * collective in root's tree (siox_collective_waits, no cap), with the
 * siblings of each from fetch. 0, -ENOMEM, or fetch's error (the sum is
 * then partial: fail, do not judge with it). */
int siox_collective_waited(const struct siox_act *root, const struct siox_served *served, size_t nserved,
                           const struct siox_unlinked *u, siox_sibling_fetch_fn fetch, void *ctx, int64_t *ns);

#endif
