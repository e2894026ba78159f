/*
 * The in-memory matcher's window (issue 15 §1): the remote calls of the
 * last seconds of data, indexed by (object, kind, byte block), so that a
 * batch's receives find their senders, and its senders the receives that
 * waited for them, without a query. Pure computation: match_memory.c feeds
 * it from each batch and writes what it decides; link.c computes the
 * confidences, with the same rules as the SQL matcher (match.c).
 *
 * Completeness. The window holds every stored remote call (with its
 * interval) whose end is >= floor: what it evicts, or never saw (stored
 * before the server started), lies below. A receive is decided here only
 * when all its possible senders lie at or above the floor; a sender is
 * "in memory" only when all its possible receives do and none is owned by
 * the SQL matcher. Everything else is left to the SQL matcher
 * (remote_calls.in_memory = false), which sees the whole warehouse.
 * Entries the SQL matcher owns (a receive decided there; a remote call
 * whose interval arrived after it was stored: a "ghost") stay in the
 * window flagged, so that whatever meets them goes to SQL too.
 */
#ifndef SIOX_MATCH_WINDOW_H
#define SIOX_MATCH_WINDOW_H

#include <stddef.h>
#include <stdint.h>

/* The server's window: at most 512k calls (~60 MB); --match-window-ms of data. */
#define SIOX_MATCH_WINDOW_CALLS (1u << 19)

#define SIOX_MW_SLACK_NS 100000LL         /* as match.c's SLACK_NS */
#define SIOX_MW_READAHEAD_NS 1000000000LL /* as match.c's READAHEAD_NS */

/* One remote call of a batch, its object already the union-find root. */
struct siox_mw_call {
  int64_t aid, object, offset, length, start, end;
  uint32_t hw, sw; /* S: target ids (0: any); R: its node's ids (siox_mw_intern) */
  uint32_t daemon; /* siox_mw_daemon's index */
  char kind;       /* 'S' or 'R' */
  /* Out: the SQL matcher need not look at it (remote_calls.in_memory). */
  uint8_t in_memory;
};

/* A link decided by the window. */
struct siox_mw_link {
  int64_t parent, child;
  double confidence;
  uint64_t overlap;
  const char *flags;
  int fresh; /* the window stored no link of this pair before: a plain insert */
};

/* What one batch decided: links to store (new, or changed: fresh 0) and
 * links no longer chosen (stale: parent and child only; delete them). A
 * receive whose links did not change appears nowhere. (Whether a receive
 * is matched follows from its links: schema 034.) unmatched: how these
 * writes move match_state.unmatched (schema 035): -1 for each receive
 * stored by an earlier batch that gets its first link, +1 for one that
 * loses its last; a receive of this batch is stored after its links, and
 * the insert trigger counts it then. */
struct siox_mw_out {
  struct siox_mw_link *links, *stale;
  size_t nlinks, cap_links, nstale, cap_stale;
  int64_t unmatched;
};

struct siox_mw;

/* A window of at most cap entries (a power of two), which also forgets
 * entries that end retain_ns before the latest end it saw. late_ns: the
 * after-parent window (--late-ms), 0 turns that class off. NULL: no memory. */
struct siox_mw *siox_mw_new(size_t cap, int64_t retain_ns, int64_t late_ns);
void siox_mw_free(struct siox_mw *w);
/* Whether siox_mw_start has run since the window was made or reset. */
int siox_mw_started(const struct siox_mw *w);
/* What the warehouse held before: every remote call ends before floor, and
 * no daemon's clock uncertainty exceeds max_unc. */
void siox_mw_start(struct siox_mw *w, int64_t floor, int64_t max_unc);
/* Forgets every entry (a rolled-back batch may have added some): the floor
 * rises above everything seen. siox_mw_start need not run again. */
void siox_mw_reset(struct siox_mw *w);
/* The index of a daemon, whose clock uncertainty is now unc_ns (the
 * matcher uses each daemon's latest, as match.c does). UINT32_MAX: no memory. */
uint32_t siox_mw_daemon(struct siox_mw *w, uint64_t daemon_id, int64_t unc_ns);
/* A small id for a target or node name (>= 1), or 0 for a target's '' and
 * '*' (any) when wildcard is set. */
uint32_t siox_mw_intern(struct siox_mw *w, const char *s, int wildcard);

/* Adds a batch's calls and decides what can be decided (in_memory set on
 * each call). Links go to out (appended). 0 or -ENOMEM
 * (the window is then reset; the calls say in_memory = 0). */
int siox_mw_batch(struct siox_mw *w, struct siox_mw_call *calls, size_t n, struct siox_mw_out *out);
/* A remote call the SQL matcher owns (stored with in_memory = false but
 * with its interval, or given its interval by the SQL matcher later). */
void siox_mw_ghost(struct siox_mw *w, char kind, int64_t object, int64_t start, int64_t end, int64_t offset,
                   int64_t length);
/* Object loser was merged into win (objects.c's join). */
void siox_mw_merge(struct siox_mw *w, int64_t loser, int64_t win);
void siox_mw_out_free(struct siox_mw_out *o);

#endif
