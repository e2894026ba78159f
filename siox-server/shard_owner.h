/*
 * Which shard owns a remote call (issue 15 §2): the rule every shard of a
 * site applies alike, so that both halves of a pair reach the same one.
 */
#ifndef SIOX_SHARD_OWNER_H
#define SIOX_SHARD_OWNER_H

#include <stdint.h>

/* The owner (1..nshards) of a global descriptor: 1 + FNV-1a 64 of
 * "TYPE\x1fVALUE" (TYPE the attribute id in decimal, VALUE the warehouse's
 * text of the value: hex for bytes, as descriptors.value holds it) modulo
 * nshards. Pure. */
int siox_shard_owner(uint32_t type, const char *value, int nshards);

#endif
