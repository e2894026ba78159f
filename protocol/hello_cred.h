/*
 * The payloads of the MUNGE credentials on the daemon <-> server wire. MUNGE
 * authenticates who encoded a credential (uid, gid, origin host) and refuses
 * a replay; the payload says what it was made for, so that a credential made
 * for one daemon id or host cannot open a session for another. Pure text
 * functions: libmunge itself is used by the daemon, the server and `siox`.
 */
#ifndef SIOX_HELLO_CRED_H
#define SIOX_HELLO_CRED_H

#include <stddef.h>
#include <stdint.h>

/* Room for any payload built here (a hostname is at most 255 bytes). */
#define SIOX_CRED_PAYLOAD_MAX 352

/* Writes "siox-hello 1 id=<16 hex> host=<hostname> t=<unix ns>" into buf.
 * Returns its length, or -1 when it does not fit. */
int siox_hello_cred_payload(char *buf, size_t cap, uint64_t daemon_id, const char *hostname, int64_t now_ns);
/* 1 when payload (len bytes, not NUL-terminated) is a Hello payload made
 * for exactly this daemon id and hostname, else 0. */
int siox_hello_cred_matches(const void *payload, size_t len, uint64_t daemon_id, const char *hostname);

/* Writes "siox-status 1 t=<unix ns>": what `siox status` signs to be shown
 * the server's counters. Returns its length, or -1. */
int siox_status_cred_payload(char *buf, size_t cap, int64_t now_ns);
/* 1 when payload is a status payload, else 0. */
int siox_status_cred_matches(const void *payload, size_t len);

#endif
