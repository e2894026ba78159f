/*
 * Health probes for `siox status`: ask a node daemon (unix socket,
 * protocol/siox_client_wire.h) or the server (TCP, protocol/siox_frame.h)
 * for its siox.StatusReply.
 */
#ifndef SIOX_CLI_STATUS_PROBE_H
#define SIOX_CLI_STATUS_PROBE_H

#include <stddef.h>

#include "siox.pb-c.h"

#define SIOX_PROBE_TIMEOUT_MS 5000

/* Each returns the reply (the caller frees it with
 * siox__status_reply__free_unpacked(r, NULL)), or NULL with the reason in
 * err ("connection refused", "bad reply: ..."). */
Siox__StatusReply *siox_probe_daemon(const char *socket_path, char *err, size_t errlen);
Siox__StatusReply *siox_probe_server(const char *host_port, char *err, size_t errlen);

#endif
