/*
 * debug/siox-brick: sits on each brick between protocol/server and
 * features/locks and reports the fops the brick serves as activities of the
 * node (brick-name, GlusterFS-brick); readv/writev receive from the client.
 */
#include "sx_xlator.h"

static int32_t brick_init(xlator_t *this) {
  return sx_init(this, SX_BRICK);
}

SIOX_XLATOR_EXPORT xlator_api_t xlator_api = {
    .init = brick_init,
    .fini = sx_fini,
    .reconfigure = sx_reconfigure,
    .notify = default_notify, /* the 10.x loader fills in no default: NULL crashes */
    .op_version = {1},
    .fops = &sx_fops,
    .cbks = &sx_cbks,
    .options = sx_options,
    .identifier = "siox-brick",
    .category = GF_EXPERIMENTAL,
};
