/*
 * Build-time generator: reads ontology/attributes.tsv and writes the C header
 * every component includes (ids, types, units, scopes) and the SQL rows the
 * server loads into the warehouse. Nothing it writes is ever edited by hand.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 4096
#define MAX_LINE 1024

struct row {
  char name[128];
  char type[16];
  char unit[32];
  char scope[16];
  char desc[512];
};

static const char *const types[] = {"u64", "i64", "f64", "str", "bytes", NULL};
static const char *const scopes[] = {"-", "process", "host", "global", NULL};

static int in_list(const char *s, const char *const *list) {
  for (int i = 0; list[i]; i++)
    if (strcmp(s, list[i]) == 0) return i;
  return -1;
}

/* Copies one tab-separated field; returns a pointer past it or NULL. */
static char *take_field(char *p, char *out, size_t cap, int last) {
  char *end = last ? p + strcspn(p, "\r\n") : strchr(p, '\t');
  if (!end) return NULL;
  size_t n = (size_t)(end - p);
  if (n == 0 || n >= cap) return NULL;
  memcpy(out, p, n);
  out[n] = '\0';
  return last ? end : end + 1;
}

static int valid_name(const char *s) {
  const char *slash = strchr(s, '/');
  if (!slash || slash == s || slash[1] == '\0' || strchr(slash + 1, '/')) return 0;
  for (; *s; s++)
    if (!(*s == '/' || *s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
      return 0;
  return 1;
}

static int parse_line(char *line, struct row *r, const char *path, int lineno) {
  char *p = line;
  if (!(p = take_field(p, r->name, sizeof r->name, 0)) ||
      !(p = take_field(p, r->type, sizeof r->type, 0)) ||
      !(p = take_field(p, r->unit, sizeof r->unit, 0)) ||
      !(p = take_field(p, r->scope, sizeof r->scope, 0)) ||
      !(p = take_field(p, r->desc, sizeof r->desc, 1))) {
    fprintf(stderr, "%s:%d: expected 5 tab-separated non-empty fields\n", path, lineno);
    return -1;
  }
  if (!valid_name(r->name)) {
    fprintf(stderr, "%s:%d: name '%s' must be domain/name in [a-z0-9_]\n", path, lineno, r->name);
    return -1;
  }
  if (in_list(r->type, types) < 0 || in_list(r->scope, scopes) < 0) {
    fprintf(stderr, "%s:%d: bad type '%s' or scope '%s'\n", path, lineno, r->type, r->scope);
    return -1;
  }
  if (strchr(r->desc, '"') || strchr(r->desc, '\'') || strchr(r->desc, '\\')) {
    fprintf(stderr, "%s:%d: description may not contain quotes or backslashes\n", path, lineno);
    return -1;
  }
  return 0;
}

static int read_rows(const char *path, struct row *rows, int *n) {
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    return -1;
  }
  char line[MAX_LINE];
  int lineno = 0, rc = 0;
  *n = 0;
  while (rc == 0 && fgets(line, sizeof line, f)) {
    lineno++;
    if (line[0] == '#' || line[0] == '\n') continue;
    if (*n == MAX_ROWS) {
      fprintf(stderr, "%s: more than %d attributes\n", path, MAX_ROWS);
      rc = -1;
    } else if (parse_line(line, &rows[*n], path, lineno) == 0) {
      for (int i = 0; i < *n; i++)
        if (strcmp(rows[i].name, rows[*n].name) == 0) {
          fprintf(stderr, "%s:%d: duplicate name '%s'\n", path, lineno, rows[*n].name);
          rc = -1;
        }
      (*n)++;
    } else {
      rc = -1;
    }
  }
  fclose(f);
  return rc;
}

static void macro_name(const char *name, char *out) {
  for (; *name; name++) *out++ = (*name == '/') ? '_' : (char)(*name - ('a' <= *name && *name <= 'z' ? 32 : 0));
  *out = '\0';
}

static const char *scope_enum(const char *s) {
  static const char *const e[] = {"SIOX_SCOPE_NONE", "SIOX_SCOPE_PROCESS", "SIOX_SCOPE_HOST", "SIOX_SCOPE_GLOBAL"};
  return e[in_list(s, scopes)];
}

static const char *type_enum(const char *t) {
  static const char *const e[] = {"SIOX_VT_U64", "SIOX_VT_I64", "SIOX_VT_F64", "SIOX_VT_STR", "SIOX_VT_BYTES"};
  return e[in_list(t, types)];
}

static int write_header(const char *path, const struct row *rows, int n) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  char m[160];
  fprintf(f, "/* Generated from ontology/attributes.tsv by siox-gen-ontology. Do not edit. */\n"
             "#ifndef SIOX_ONTOLOGY_H\n#define SIOX_ONTOLOGY_H\n\n#include <stdint.h>\n#include <string.h>\n\n"
             "enum siox_value_type { SIOX_VT_U64 = 0, SIOX_VT_I64, SIOX_VT_F64, SIOX_VT_STR, SIOX_VT_BYTES };\n"
             "enum siox_scope { SIOX_SCOPE_NONE = 0, SIOX_SCOPE_PROCESS, SIOX_SCOPE_HOST, SIOX_SCOPE_GLOBAL };\n\n"
             "enum siox_attr_id {\n  SIOX_ATTR_NONE = 0,\n");
  for (int i = 0; i < n; i++) {
    macro_name(rows[i].name, m);
    fprintf(f, "  SIOX_ATTR_%s = %d, /* %s (%s, %s) */\n", m, i + 1, rows[i].desc, rows[i].type, rows[i].unit);
  }
  fprintf(f, "  SIOX_ATTR_COUNT = %d\n};\n\n"
             "struct siox_attr_info {\n  const char *name;\n  enum siox_value_type type;\n"
             "  const char *unit;\n  enum siox_scope scope;\n  const char *description;\n};\n\n"
             "/* Indexed by enum siox_attr_id; entry 0 is unused. */\n"
             "static const struct siox_attr_info siox_ontology[SIOX_ATTR_COUNT] = {\n  {0, SIOX_VT_U64, 0, SIOX_SCOPE_NONE, 0},\n",
          n + 1);
  for (int i = 0; i < n; i++)
    fprintf(f, "  {\"%s\", %s, \"%s\", %s, \"%s\"},\n", rows[i].name, type_enum(rows[i].type), rows[i].unit,
            scope_enum(rows[i].scope), rows[i].desc);
  fprintf(f, "};\n\n"
             "/* Returns the attribute's info, or NULL for an id outside the ontology. */\n"
             "static inline const struct siox_attr_info *siox_attr_lookup(uint32_t id) {\n"
             "  return (id > 0 && id < SIOX_ATTR_COUNT) ? &siox_ontology[id] : 0;\n}\n\n"
             "/* Returns the id of an attribute name, or 0 when the ontology has no such name. */\n"
             "static inline uint32_t siox_attr_by_name(const char *name) {\n"
             "  for (uint32_t i = 1; i < SIOX_ATTR_COUNT; i++)\n"
             "    if (strcmp(siox_ontology[i].name, name) == 0) return i;\n  return 0;\n}\n\n"
             "#endif\n");
  return fclose(f);
}

static int write_sql(const char *path, const struct row *rows, int n) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "-- Generated from ontology/attributes.tsv by siox-gen-ontology. Do not edit.\n"
             "INSERT INTO ontology (id, name, type, unit, scope, description) VALUES\n");
  for (int i = 0; i < n; i++)
    fprintf(f, "  (%d, '%s', '%s', '%s', '%s', '%s')%s\n", i + 1, rows[i].name, rows[i].type, rows[i].unit,
            rows[i].scope, rows[i].desc, i + 1 < n ? "," : "");
  fprintf(f, "ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, type = EXCLUDED.type,\n"
             "  unit = EXCLUDED.unit, scope = EXCLUDED.scope, description = EXCLUDED.description;\n");
  return fclose(f);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s attributes.tsv out.h out.sql\n", argv[0]);
    return 2;
  }
  static struct row rows[MAX_ROWS];
  int n;
  if (read_rows(argv[1], rows, &n) != 0) return 1;
  if (write_header(argv[2], rows, n) != 0 || write_sql(argv[3], rows, n) != 0) {
    fprintf(stderr, "cannot write outputs: %s\n", strerror(errno));
    return 1;
  }
  return 0;
}
