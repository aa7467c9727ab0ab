// SPDX-License-Identifier: Apache-2.0
// SQLite 3.40 (bookworm) and 3.46 (trixie): the database's engine.
#ifndef RIDEGUARD_CSQLITE_SHIM_H
#define RIDEGUARD_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro Swift does not import: SQLite copies the bound bytes.
static inline int rg_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}
static inline int rg_sqlite3_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}
#endif
