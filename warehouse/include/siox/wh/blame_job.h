/*
 * `siox blame --job J` (README.md "Job-level blame"): sums the per-call
 * attribution over the job's slowest calls: each call's time at its
 * resource (own service, and the queued time when the resource is at
 * fault) is charged to that component with the call's class; queued time
 * behind other jobs to those jobs; the rest is unexplained. Pure.
 */
#ifndef SIOX_CLI_BLAME_JOB_H
#define SIOX_CLI_BLAME_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "blame_class.h"
#include "blame_wait.h"

#define SIOX_JOB_EXAMPLES 3

struct siox_job_entry {
  char *key;   /* component "hwid swid#iid" or job name; owned */
  bool is_job; /* an interfering job, not a component */
  int64_t ns;  /* charged time */
  size_t calls;
  size_t by_class[SIOX_CLASS_SELF + 1]; /* calls of each class charged here */
  int64_t examples[SIOX_JOB_EXAMPLES];
  int64_t last_aid; /* a call charged twice (two processes of one job) counts once */
  size_t nexamples;
};

struct siox_job_blame {
  struct siox_job_entry *e; /* owned */
  size_t n, cap;
  size_t calls;
  int64_t total_ns, unexplained_ns;
};

/* Charges ns of call aid to key with class cls. 0 or -ENOMEM. */
int siox_job_charge(struct siox_job_blame *j, const char *key, bool is_job, enum siox_class cls, int64_t aid,
                    int64_t ns);
/* One blamed call's attribution into j (README.md "Job-level blame"): root
 * is the call blamed, w what its waiting step found. A call that waited in
 * a collective and was blamed through a sibling (via_aid, the call asked
 * about, taking via_ns; 0: none) is charged whole to the sibling's
 * resource. Components are keyed "hwid SWID[#iid]". 0 or -ENOMEM. */
int siox_job_add_call(struct siox_job_blame *j, const struct siox_act *root, const struct siox_blame_wait *w,
                      int64_t via_aid, int64_t via_ns);
/* Sorts the entries, most time first. */
void siox_job_sort(struct siox_job_blame *j);
/* The class most of an entry's calls had (ties: the more severe). */
enum siox_class siox_job_entry_class(const struct siox_job_entry *e);
void siox_job_release(struct siox_job_blame *j);

#endif
