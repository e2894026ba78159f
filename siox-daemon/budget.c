/*
 * Client buffer budget (--memory-mb): how many bytes all sessions together
 * may hold in frames they are still receiving. A session's buffer is sized
 * for its frame in progress (up to SIOX_CW_MAX_PAYLOAD, 16 MiB), so without a
 * global bound 32 local processes announcing 15 MiB frames held 496 MB.
 *
 * Real clients send frames of at most 256 KiB (libsiox-client's flusher),
 * so a frame above BIG_FRAME is unusual: such frames together may use only
 * half of the budget, and one that does not fit is refused (its client is
 * closed, with a log line). Ordinary frames may use the whole budget; when it
 * is exhausted the session waits (not read) until another buffer is freed,
 * and, while the budget is under pressure (a session waits, or more than half
 * is used), a frame that has not completed 30 s after it could be read is
 * closed, so no stalled client holds the budget for ever.
 */
#include <errno.h>
#include <stdio.h>

#include "daemon.h"

#define BIG_FRAME (1u << 20)
#define SWEEP_MS 1000
#define LOG_EVERY_NS 1000000000LL

static void on_sweep(uv_timer_t *t) {
  struct daemon *d = t->data;
  sessions_expire(d, clock_realtime_ns());
}

void budget_init(struct daemon *d) {
  struct client_budget *b = &d->budget;
  b->limit = (size_t)(d->cfg.memory_mb ? d->cfg.memory_mb : 256) << 19; /* half of --memory-mb */
  uv_timer_init(d->loop, &b->sweep);
  b->sweep.data = d;
  uv_timer_start(&b->sweep, on_sweep, SWEEP_MS, SWEEP_MS);
  uv_unref((uv_handle_t *)&b->sweep); /* never keeps the loop alive on its own */
}

void budget_close(struct daemon *d) {
  if (!uv_is_closing((uv_handle_t *)&d->budget.sweep))
    uv_close((uv_handle_t *)&d->budget.sweep, NULL);
}

/* One line per second at most, with the count since the last one. */
static void note(struct client_budget *b, const char *what, uint32_t pid, size_t frame) {
  int64_t now = clock_realtime_ns();
  b->unlogged++;
  if (now - b->last_log_ns < LOG_EVERY_NS)
    return;
  fprintf(stderr,
          "siox-daemon: client buffers at %zu of %zu MiB (--memory-mb): %s client pid %u (frame of %zu bytes; "
          "%llu such since the last line)\n",
          b->used >> 20, b->limit >> 20, what, pid, frame, (unsigned long long)b->unlogged);
  b->last_log_ns = now;
  b->unlogged = 0;
}

int budget_take(struct daemon *d, size_t old_cap, size_t new_cap, size_t frame, uint32_t pid) {
  struct client_budget *b = &d->budget;
  size_t more = new_cap > old_cap ? new_cap - old_cap : 0;
  if (frame > BIG_FRAME && b->used + more > b->limit / 2) {
    b->refused++;
    note(b, "refusing a large frame of", pid, frame);
    return -ENOBUFS;
  }
  if (b->used + more > b->limit) {
    b->waits++;
    note(b, "pausing", pid, frame);
    return -EAGAIN;
  }
  b->used += more;
  return 0;
}

void budget_put(struct daemon *d, size_t cap) {
  d->budget.used -= cap;
  if (d->budget.waiting)
    sessions_budget_resume(d);
}
