/*
 * Hint application at MPI_File_open (file_ops.c): the last step of the
 * knowledge-base loop. With SIOX_HINTS=1, rank 0 of the opening
 * communicator asks its node daemon which hints the knowledge base holds for
 * (this application, the file, the MPI-IO component in use), waiting at most
 * SIOX_HINTS_TIMEOUT_MS; PMPI_Bcast then gives every rank the same answer,
 * so all ranks open with the same info (ROMIO requires that of some keys).
 * The hints go into a dup of the user's MPI_Info: a key the user set is
 * never overridden. The open activity records what happened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <siox/siox_internal.h>

#include "mpi_layer.h"

#define TIMEOUT_DEFAULT_MS 200
#define TIMEOUT_MAX_MS 600000

/* SIOX_HINTS=1 turns hint application on. Every rank reads its own
 * environment; mpirun gives all ranks the same one (siox run --hints
 * exports it), which the broadcast below relies on. */
static int enabled(void) {
  const char *v = getenv("SIOX_HINTS");
  return v && strcmp(v, "1") == 0;
}

static unsigned timeout_ms(void) {
  const char *v = getenv("SIOX_HINTS_TIMEOUT_MS");
  char *end;
  long n = v && *v ? strtol(v, &end, 10) : -1;
  return (v && *v && *end == '\0' && n >= 0 && n <= TIMEOUT_MAX_MS) ? (unsigned)n : TIMEOUT_DEFAULT_MS;
}

/* The MPI-IO component OpenMPI will use: romio321 when OMPI_MCA_io selects
 * it (or excludes ompio), else its default, ompio. Hint sets name the
 * component they are meant for, because ompio ignores ROMIO's keys. */
const char *siox__mpi_io_component(void) {
  const char *v = getenv("OMPI_MCA_io");
  if (v && (strstr(v, "^ompio") || (v[0] != '^' && strstr(v, "romio")))) return "romio321";
  return "ompio";
}

/* Appends "key=value" to out[cap] with ';' between pairs; keeps whole
 * pairs only. */
static void append_pair(char *out, size_t cap, const char *key, const char *value) {
  size_t len = strlen(out);
  int n = snprintf(out + len, cap - len, "%s%s=%s", len ? ";" : "", key, value);
  if (n < 0 || (size_t)n >= cap - len) out[len] = '\0';
}

/* Merges the answer's hints into a dup of the user's info. */
static void merge(const struct siox_hint_answer *a, MPI_Info user, struct siox_mpi_hints *h) {
  MPI_Info info;
  int rc = user == MPI_INFO_NULL ? PMPI_Info_create(&info) : PMPI_Info_dup(user, &info);
  if (rc != MPI_SUCCESS) {
    h->status = SIOX_HINT_ERROR;
    return;
  }
  for (unsigned i = 0; i < a->n; i++) {
    char val[8];
    int flag = 0;
    if (user != MPI_INFO_NULL) PMPI_Info_get(user, a->hints[i].key, (int)sizeof val - 1, val, &flag);
    if (flag) continue; /* the user's choice wins */
    if (PMPI_Info_set(info, a->hints[i].key, a->hints[i].value) == MPI_SUCCESS)
      append_pair(h->applied, sizeof h->applied, a->hints[i].key, a->hints[i].value);
  }
  h->info = info;
  h->owned = 1;
}

/* Broadcasts rank 0's answer. The other ranks wait in a polling loop that
 * sleeps: OpenMPI's blocking collectives spin, and on an oversubscribed
 * node (ranks > cores) the spinning ranks would take the CPU that the
 * daemon and server need to answer rank 0 within its timeout. */
static int share(struct siox_hint_answer *a, MPI_Comm comm) {
  MPI_Request req;
  int done = 0, rc = PMPI_Ibcast(a, (int)sizeof *a, MPI_BYTE, 0, comm, &req);
  while (rc == MPI_SUCCESS && !(rc = PMPI_Test(&req, &done, MPI_STATUS_IGNORE)) && !done) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return rc;
}

void siox__mpi_hints_prepare(MPI_Comm comm, const char *path, MPI_Info user, struct siox_mpi_hints *h) {
  memset(h, 0, sizeof *h);
  h->info = user;
  if (!enabled() || comm == MPI_COMM_NULL) return;
  h->asked = 1;
  struct siox_hint_answer a;
  int rank = 0;
  memset(&a, 0, sizeof a);
  PMPI_Comm_rank(comm, &rank);
  if (rank == 0 && siox_hints_query(path, siox__mpi_io_component(), timeout_ms(), &a) < 0) a.status = SIOX_HINT_ERROR;
  /* One answer for all ranks, whatever rank 0's daemon said. */
  if (share(&a, comm) != MPI_SUCCESS) a.status = SIOX_HINT_ERROR;
  h->status = a.status;
  if (a.status != SIOX_HINT_FOUND) return;
  h->set_id = a.hint_set_id;
  merge(&a, user, h);
}

void siox__mpi_hints_record(siox_aid aid, const struct siox_mpi_hints *h) {
  if (!h->asked || !aid) return;
  int found = h->status == SIOX_HINT_FOUND;
  siox_activity_attr_str(aid, SIOX_ATTR_MPI_HINTS_STATUS, found ? "applied" : siox_hint_status_name(h->status));
  siox_activity_attr_str(aid, SIOX_ATTR_MPI_HINTS_APPLIED, h->applied);
  if (found) siox_activity_attr_u64(aid, SIOX_ATTR_MPI_HINT_SET, (uint64_t)h->set_id);
}

void siox__mpi_hints_release(struct siox_mpi_hints *h) {
  if (h->owned) PMPI_Info_free(&h->info);
  h->owned = 0;
}
