/*
 * Start and end of one SIOX translator instance in a GlusterFS graph:
 * reads `option brick-name`, registers the instance's node with
 * libsiox-client (sx_report.c) and keeps it in this->private for the fops.
 * Runs in glusterfs/glusterfsd at graph init, after they daemonized.
 */
#include "sx_xlator.h"

#include <stdlib.h>
#include <unistd.h>

struct volume_options sx_options[] = {
    {.key = {"brick-name"},
     .type = GF_OPTION_TYPE_STR,
     .description = "Name of the brick this instance sits above (client) or on (brick), "
                    "as host:/directory; the HWID of the brick's SIOX node. Client and "
                    "brick must use the same string. Default: the subvolume's name."},
    {.key = {NULL}},
};

/* The brick name from the option, else the child's volume name (client:
 * the protocol/client it sits on) or our own name (brick). Returns a
 * malloc'ed copy the caller frees, or NULL. */
static char *brick_name(xlator_t *this, enum sx_role role) {
  char *opt = NULL;
  if (xlator_option_init_str(this, this->options, "brick-name", &opt) != 0) return NULL;
  if (opt && *opt) return strdup(opt);
  return strdup(role == SX_CLIENT ? FIRST_CHILD(this)->name : this->name);
}

int32_t sx_init(xlator_t *this, enum sx_role role) {
  /* Built against headers whose layout differs from the library's, every
   * field past xlator_t.stats is misread: refuse before writing private. */
  if (this->ctx != global_ctx) {
    gf_log(this->name, GF_LOG_ERROR, "xlator_t layout mismatch with libglusterfs: rebuild with its defines");
    return -1;
  }
  if (!this->children || this->children->next) {
    gf_log(this->name, GF_LOG_ERROR, "siox translator needs exactly one subvolume");
    return -1;
  }
  struct sx_priv *p = calloc(1, sizeof *p);
  char host[256] = "";
  if (!p || !(p->brick_name = brick_name(this, role))) goto fail;
  if (gethostname(host, sizeof host - 1) != 0) strcpy(host, "localhost");
  /* SIOX must never stop the file system: on failure this instance passes
   * fops through unrecorded (all type ids stay 0) and the log says why. */
  int rc = sx_node_init(&p->node, role, host, p->brick_name);
  if (rc < 0) {
    memset(&p->node, 0, sizeof p->node);
    gf_log(this->name, GF_LOG_WARNING, "SIOX node for brick '%s' not registered (%s): not recording",
           p->brick_name, strerror(-rc));
  } else {
    gf_log(this->name, GF_LOG_INFO, "SIOX %s node for brick '%s' registered",
           role == SX_CLIENT ? SX_SWID_CLIENT : SX_SWID_BRICK, p->brick_name);
  }
  this->private = p;
  return 0;
fail:
  if (p) free(p->brick_name);
  free(p);
  return -1;
}

/* Activities still open are stopped by their callbacks or lost with the
 * process; libsiox-client flushes what it holds at exit. */
void sx_fini(xlator_t *this) {
  struct sx_priv *p = this->private;
  this->private = NULL;
  if (!p) return;
  (void)siox_flush(500);
  free(p->brick_name);
  free(p);
}

int32_t sx_reconfigure(xlator_t *this, dict_t *options) {
  (void)this, (void)options;
  return 0;
}
