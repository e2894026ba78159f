#!/bin/bash
# The warehouse owns the SQL on the core tables (issue 14 §1): the front
# ends and libraries above it (siox-cli, web, knowledge-base, capacity,
# workload) read them through libsiox-warehouse's API or, inside a
# knowledge-base statement, through the warehouse's SQL functions (schema
# 032, warehouse/README.md "What the warehouse offers the knowledge base").
# Fails, listing the lines, when one of their C sources names a core table in
# SQL again. siox-server is not checked: its ingest and matcher path is the
# writer and keeps its own SQL (warehouse/README.md, "The server owns its
# ingest path").
# Usage: check_core_sql.sh SOURCE_DIR
set -euo pipefail
cd "$1"
core='activities|processes|nodes|node_attributes|activity_text_attrs|activity_attributes|causal_links|activity_types'
hits=$(grep -rn -E "\\b(FROM|JOIN) +($core)\\b|\\b(causal_links|activity_types|activity_attributes|activity_text_attrs|node_attributes)\\b" \
  --include='*.c' --include='*.h' siox-cli web knowledge-base capacity workload || true)
if [ -n "$hits" ]; then
  echo "FAIL: SQL on the core tables outside warehouse/ (use the warehouse's API or its schema 032 functions):" >&2
  echo "$hits" >&2
  exit 1
fi
echo "check_core_sql: no core-table SQL in siox-cli, web, knowledge-base, capacity, workload"
