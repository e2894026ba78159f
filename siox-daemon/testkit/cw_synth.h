/*
 * Test kit, client side: synthesizes the client -> daemon wire (frames and
 * records of protocol/siox_client_wire.h) the way libsiox-client would, so
 * daemon tests and the daemon bench can drive siox-daemon without the client
 * library. Not linked into the daemon.
 */
#ifndef SIOX_DAEMON_CW_SYNTH_H
#define SIOX_DAEMON_CW_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "siox_client_wire.h"

/* A growable byte buffer (owned; synth_buf_free). */
struct synth_buf {
  uint8_t *p;
  size_t len, cap;
};
void synth_buf_free(struct synth_buf *b);
void *synth_reserve(struct synth_buf *b, size_t n); /* aborts on ENOMEM */

/* Records (appended to b, padded to 8 bytes). */
void synth_activity(struct synth_buf *b, uint32_t type, uint64_t aid, uint64_t parent, uint64_t t0, uint64_t t1,
                    int32_t err, uint32_t nattr, const struct siox_cw_attr *attrs);
void synth_node(struct synth_buf *b, uint32_t unid, const char *hwid, const char *swid, const char *iid);
void synth_type(struct synth_buf *b, uint32_t type_id, uint32_t unid, const char *name);
void synth_attr_str(struct synth_buf *b, uint32_t attr, uint64_t aid, const char *value);

/* Frames (appended to out). */
void synth_frame(struct synth_buf *out, uint16_t type, const void *payload, size_t len);
void synth_hello(struct synth_buf *out, uint64_t nonce, uint32_t clock_flags, uint64_t tsc0, int64_t ns0,
                 const char *exe, const char *args, const char *job);
void synth_batch(struct synth_buf *out, uint32_t thread, uint64_t tsc_ref, int64_t ns_ref, const struct synth_buf *recs);

/* Unix socket helpers: connect (returns fd or -errno), write everything. */
int synth_connect(const char *path);
int synth_write_all(int fd, const void *p, size_t n);

#endif
