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
 * Pure: cmd_blame.c fetches the siblings (warehouse_collective.c).
 */
#ifndef SIOX_CLI_BLAME_COLLECTIVE_H
#define SIOX_CLI_BLAME_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blame.h"

/* One sibling of a collective call, as the warehouse returns it. */
struct siox_sibling {
  int64_t aid;
  int32_t pid;
  int64_t start_ns, end_ns;
  int64_t io_ns; /* time of its own POSIX children (0: it made no I/O) */
};

/* The deepest activity on blame's path that is a collective call (its
 * mpi/collective attribute is 1), or NULL. */
const struct siox_act *siox_collective_on_path(const struct siox_blame *b);

/* The sibling the collective call c waited for (index into s), or -1 when
 * none overlaps c and made I/O. */
long siox_collective_pick(const struct siox_act *c, const struct siox_sibling *s, size_t n);

#endif
