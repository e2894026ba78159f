/*
 * Framing of the daemon <-> server TCP stream (and of status queries): a
 * fixed 12-byte header in network byte order, then a protobuf-c payload of
 * the message the type names (protocol/siox.proto). Decoders validate magic,
 * version and length before touching the payload.
 */
#ifndef SIOX_FRAME_H
#define SIOX_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define SIOX_FRAME_MAGIC 0x53494f58u /* "SIOX" */
#define SIOX_FRAME_VERSION 1u
#define SIOX_FRAME_HDR_LEN 12u
#define SIOX_FRAME_MAX_PAYLOAD (64u << 20) /* larger frames are rejected */

enum siox_frame_type {
  SIOX_FRAME_HELLO = 1,
  SIOX_FRAME_HELLO_REPLY = 2,
  SIOX_FRAME_BATCH = 3,
  SIOX_FRAME_ACK = 4,
  SIOX_FRAME_PING = 5,
  SIOX_FRAME_PONG = 6,
  SIOX_FRAME_ERROR = 7,
  SIOX_FRAME_STATUS_REQUEST = 8,
  SIOX_FRAME_STATUS_REPLY = 9,
  SIOX_FRAME_HINT_QUERY = 10, /* daemon -> server: HintQuery */
  SIOX_FRAME_HINT_REPLY = 11, /* server -> daemon: HintReply */
  SIOX_FRAME_SKIP = 12,       /* daemon -> server: Skip (a quarantined batch) */
};
#define SIOX_FRAME_TYPE_LAST SIOX_FRAME_SKIP

struct siox_frame_hdr {
  uint32_t magic;
  uint16_t version;
  uint16_t type;
  uint32_t length; /* payload bytes */
};

/* Writes the 12-byte header for (type, length) into out. */
void siox_frame_hdr_encode(uint8_t out[SIOX_FRAME_HDR_LEN], uint16_t type, uint32_t length);

/* Parses and validates a header. Returns 0, or -EPROTO for a bad magic or an
 * unknown type, -EPROTONOSUPPORT for another version, -EMSGSIZE for a length
 * above SIOX_FRAME_MAX_PAYLOAD. On error *why names the reason (static). */
int siox_frame_hdr_decode(const uint8_t in[SIOX_FRAME_HDR_LEN], struct siox_frame_hdr *out, const char **why);

#endif
