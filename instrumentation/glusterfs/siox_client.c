/*
 * debug/siox-client: sits above each protocol/client in the FUSE client's
 * graph and reports its fops as activities of the node
 * (host, GlusterFS-client, brick-name); readv/writev receive from the
 * application side and send to the brick named by `option brick-name`.
 */
#include "sx_xlator.h"

static int32_t client_init(xlator_t *this) {
  return sx_init(this, SX_CLIENT);
}

SIOX_XLATOR_EXPORT xlator_api_t xlator_api = {
    .init = client_init,
    .fini = sx_fini,
    .reconfigure = sx_reconfigure,
    .notify = default_notify, /* the 10.x loader fills in no default: NULL crashes */
    .op_version = {1},
    .fops = &sx_fops,
    .cbks = &sx_cbks,
    .options = sx_options,
    .identifier = "siox-client",
    .category = GF_EXPERIMENTAL,
};
