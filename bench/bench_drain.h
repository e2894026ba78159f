/*
 * The stand-in daemon of the client benches (bench_client, bench_posix,
 * bench_mpiio): it accepts every client on a unix socket, throws the bytes
 * away and acknowledges them, as siox-daemon does after each read. Without
 * the ACKs a client holds every frame it sent (retain.c) until its buffer is
 * full, then drops records, and a bench would time the drop path.
 */
#ifndef BENCH_DRAIN_H
#define BENCH_DRAIN_H

#include <stddef.h>

/* Listens on a fresh socket /tmp/siox-bench-NAME.PID.sock (its path goes to
 * path) and serves it from a detached thread for the rest of the process.
 * Returns 0, or a negative errno. */
int bench_drain_start(const char *name, char *path, size_t cap);

#endif
