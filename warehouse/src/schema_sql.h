/*
 * The warehouse schema migrations and ontology rows, embedded at build time
 * (warehouse/embed_sql.cmake generates schema_sql.c). wh_migrate.c applies
 * them.
 */
#ifndef SIOX_SCHEMA_SQL_H
#define SIOX_SCHEMA_SQL_H

#include <stddef.h>

struct siox_schema_file {
  int version;      /* NNN of NNN_name.sql */
  const char *name;
  const char *sql;
};

extern const struct siox_schema_file siox_schema_files[]; /* ascending version */
extern const size_t siox_schema_nfiles;
extern const char siox_ontology_sql[];

#endif
