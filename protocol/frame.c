/*
 * Frame header codec for the daemon <-> server TCP stream. Every frame that
 * either side reads passes through siox_frame_hdr_decode() before a single
 * payload byte is read, so a peer speaking another protocol or version, or
 * announcing an absurd length, is refused before any allocation.
 */
#include "siox_frame.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

void siox_frame_hdr_encode(uint8_t out[SIOX_FRAME_HDR_LEN], uint16_t type, uint32_t length) {
  uint32_t magic = htonl(SIOX_FRAME_MAGIC), len = htonl(length);
  uint16_t ver = htons(SIOX_FRAME_VERSION), ty = htons(type);
  memcpy(out, &magic, 4);
  memcpy(out + 4, &ver, 2);
  memcpy(out + 6, &ty, 2);
  memcpy(out + 8, &len, 4);
}

static int known_type(uint16_t type) {
  return type >= SIOX_FRAME_HELLO && type <= SIOX_FRAME_TYPE_LAST;
}

static int fail(const char **why, const char *reason, int err) {
  if (why) *why = reason;
  return err;
}

/* The fields are filled even when the header is rejected, so the caller can
 * log what the peer actually sent. */
int siox_frame_hdr_decode(const uint8_t in[SIOX_FRAME_HDR_LEN], struct siox_frame_hdr *out, const char **why) {
  uint32_t magic, len;
  uint16_t ver, ty;
  memcpy(&magic, in, 4);
  memcpy(&ver, in + 4, 2);
  memcpy(&ty, in + 6, 2);
  memcpy(&len, in + 8, 4);
  out->magic = ntohl(magic);
  out->version = ntohs(ver);
  out->type = ntohs(ty);
  out->length = ntohl(len);
  if (out->magic != SIOX_FRAME_MAGIC) return fail(why, "bad frame magic (not a SIOX peer)", -EPROTO);
  if (out->version != SIOX_FRAME_VERSION) return fail(why, "unsupported frame version", -EPROTONOSUPPORT);
  if (!known_type(out->type)) return fail(why, "unknown frame type", -EPROTO);
  if (out->length > SIOX_FRAME_MAX_PAYLOAD) return fail(why, "frame payload too large", -EMSGSIZE);
  if (why) *why = NULL;
  return 0;
}
