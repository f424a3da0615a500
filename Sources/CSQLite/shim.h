#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro the Swift importer drops: tells SQLite to copy bound bytes.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/// sqlite3_config is variadic, which Swift cannot call. Turns off SQLite's memory statistics,
/// which take a global mutex on every allocation (Debian's build keeps them on); hexd never
/// reads them. Only before SQLite is initialised: SQLITE_MISUSE, and no effect, after.
static inline int csqlite_disable_memory_statistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

#endif
