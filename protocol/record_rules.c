/*
 * The per-record content rules of siox_record_rules.h. siox-server applies
 * them to every record of a batch (refusing the batch), siox-daemon to every
 * client record (dropping the record): one definition, so the two can never
 * disagree about what the warehouse accepts.
 */
#include "siox_record_rules.h"

#include <siox/siox_ontology.h>

#include "siox_client_wire.h"

const char *siox_rule_attr(uint32_t attr) { return siox_attr_lookup(attr) ? NULL : "unknown attribute id"; }

const char *siox_rule_desc_value(uint32_t attr) {
  const struct siox_attr_info *a = siox_attr_lookup(attr);
  if (!a) return "unknown attribute id";
  return a->scope == SIOX_SCOPE_NONE ? "descriptor value of an attribute that is not a descriptor type" : NULL;
}

const char *siox_rule_desc_record(uint32_t kind, uint32_t nvalues, uint64_t aid) {
  if (kind < SIOX_DESC_CREATE || kind > SIOX_DESC_RECEIVE) return "unknown descriptor record kind";
  if (nvalues != (kind == SIOX_DESC_MAP ? 2u : 1u)) return "wrong number of descriptor values for its kind";
  if ((kind == SIOX_DESC_SEND || kind == SIOX_DESC_RECEIVE) && !aid) return "send/receive record without an activity";
  return NULL;
}
