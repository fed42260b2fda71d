// The store's tables (one migration list for SQLite and PostgreSQL) and how a connection is
// opened onto them.
#pragma once

#include <cstdint>

#include "feedback-handler/store/sql.h"

namespace perfhat::handler::schema {

// How a function row takes a later write (the SET clause of its upsert): non-empty values
// replace, last_seen only grows.
extern const char* const kFunctionMerge;

// Every connection to a SQLite store: a large page cache and memory-mapped I/O.
void configureSqlite(sql::Db& db);

// Prepares `db` (SQLite: WAL, synchronous, caches) and applies the migrations it lacks, under
// the write lock so replicas starting together migrate once. Throws StoreError when the
// database cannot be used or has a newer schema than this binary.
void open(sql::Db& db, bool synchronous_full, int64_t now_ns);

}  // namespace perfhat::handler::schema
