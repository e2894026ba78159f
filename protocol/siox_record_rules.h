/*
 * The content rules by which siox-server refuses a whole batch, one record
 * at a time, shared with siox-daemon: the daemon applies the same rules to
 * each client record before it enters a batch, so a bad record is dropped
 * alone (and counted) instead of taking every other client's records in the
 * batch down with it. Each rule returns NULL when the record passes, or a
 * static reason. The "registered" rules (a type, node or target the process
 * must have declared) need the caller's registry: the server's is the
 * warehouse (process_types, process_nodes, process_targets), the daemon's
 * the client session's (siox-daemon/validate.c).
 */
#ifndef SIOX_RECORD_RULES_H
#define SIOX_RECORD_RULES_H

#include <stdint.h>

#include <siox/siox_ontology.h>

#include "siox_client_wire.h"

/* The two rules every activity meets are inline: a call per attribute was
 * about 50 of the daemon's instructions an activity (4 attributes). */

/* Activity ids are process-local and the warehouse keeps them in the low 32
 * bits of a global aid (proc_id << 32 | aid): aid and parent must fit. */
static inline const char *siox_rule_aid(uint64_t aid, uint64_t parent) {
  return (aid | parent) >> 32 ? "activity id (or parent id) exceeds 32 bits" : NULL;
}
/* A numeric activity attribute: a known ontology id, a numeric vtype. */
static inline const char *siox_rule_numeric_attr(uint32_t attr, uint32_t vtype) {
  if (!siox_attr_lookup(attr)) return "unknown attribute id";
  return vtype > SIOX_VT_F64 ? "a string among numeric attributes" : NULL;
}
/* A string or node attribute: a known ontology id. */
const char *siox_rule_attr(uint32_t attr);
/* A descriptor value: a known ontology id that has a scope. */
const char *siox_rule_desc_value(uint32_t attr);
/* A descriptor record: a known kind, 2 values for MAP and 1 otherwise, and
 * an activity for SEND and RECEIVE. */
const char *siox_rule_desc_record(uint32_t kind, uint32_t nvalues, uint64_t aid);

/* The registry rules' reasons (the checks themselves are the caller's). */
#define SIOX_RULE_UNKNOWN_TYPE "activity of a type its process never registered"
#define SIOX_RULE_UNKNOWN_NODE "names a node its process never registered"
#define SIOX_RULE_UNKNOWN_TARGET "send to a target its process never registered"

#endif
