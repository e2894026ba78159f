/*
 * The GlusterFS side of the SIOX translators: private state of one
 * translator instance and the pieces shared by debug/siox-client and
 * debug/siox-brick (fop table, init, fini, options). Both .so files are
 * built from the same sources and differ only in their role.
 */
#ifndef SIOX_GLUSTERFS_SX_XLATOR_H
#define SIOX_GLUSTERFS_SX_XLATOR_H

#include <glusterfs/xlator.h>
#include <glusterfs/defaults.h>

#include "sx_report.h"

/* this->private of one translator instance; set by sx_init, freed by sx_fini. */
struct sx_priv {
  struct sx_node node;
  char *brick_name; /* owned */
};

/* Everything is built with hidden visibility: glusterfs dlopen()s
 * translators RTLD_GLOBAL, so only the loader's entry point is exported. */
#define SIOX_XLATOR_EXPORT __attribute__((visibility("default")))

extern struct xlator_fops sx_fops;
extern struct xlator_cbks sx_cbks;
extern struct volume_options sx_options[];

/* Reads the options and registers the instance's node; 0 or -1 (the
 * GlusterFS convention: the graph refuses to start, the log says why). */
int32_t sx_init(xlator_t *this, enum sx_role role);
void sx_fini(xlator_t *this);
/* Accepts new options without effect: brick-name names a node for life. */
int32_t sx_reconfigure(xlator_t *this, dict_t *options);

#endif
