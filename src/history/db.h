// The history database underneath the store and the reader: thin RAII over
// the SQLite C API, the schema with its migrations, and the one open path
// that refuses files that are not a gpudoctor history (docs/history.md).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "util/result.h"

namespace gd::history {

// PRAGMA application_id of every gpudoctor history ("GDHS"): a random
// SQLite file is refused instead of being written into.
inline constexpr int32_t kApplicationId = 0x47444853;
// PRAGMA user_version: the schema this build writes and reads. Older files
// are migrated by the writer; newer ones are refused.
inline constexpr int kSchemaVersion = 3;
// How long a statement waits for the other process's lock (a reader during
// the writer's checkpoint, two writers) before failing with "database is
// locked", in ms.
inline constexpr int kBusyTimeoutMs = 5000;

class Db {
 public:
  Db() = default;
  explicit Db(sqlite3* h) : h_(h) {}
  ~Db() { close(); }
  Db(Db&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Db& operator=(Db&& o) noexcept {
    if (this != &o) {
      close();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  sqlite3* get() const { return h_; }
  std::string errmsg() const { return h_ ? sqlite3_errmsg(h_) : "out of memory"; }

 private:
  void close() {
    if (h_) sqlite3_close_v2(h_);
    h_ = nullptr;
  }
  sqlite3* h_ = nullptr;
};

// A prepared statement. Columns and parameters are 0- and 1-based as in the
// C API.
class Stmt {
 public:
  Stmt() = default;
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(Stmt&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stmt& operator=(Stmt&& o) noexcept {
    if (this != &o) {
      sqlite3_finalize(s_);
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  static Result<Stmt> prepare(sqlite3* db, std::string_view sql);

  void bind_int(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  void bind_text(int i, std::string_view v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void bind_null(int i) { sqlite3_bind_null(s_, i); }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(s_); }
  // Ready for the next use: bindings cleared too.
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  int64_t int64(int col) const { return sqlite3_column_int64(s_, col); }
  bool is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  std::string text(int col) const;

 private:
  sqlite3_stmt* s_ = nullptr;
};

// sqlite3_exec of statements that return no rows worth reading.
Result<bool> exec(sqlite3* db, const char* sql);

// A step that must finish (SQLITE_DONE); the error names the database's
// message.
Result<bool> step_done(sqlite3* db, Stmt& s);

// SQLite's own consistency check (PRAGMA quick_check): true, or one line
// saying the file is damaged, what SQLite found first, and how to start a
// new history. Part of every open's verdict, and what the writer asks when
// a write fails mid-run.
Result<bool> quick_check(sqlite3* db, const std::string& path);

enum class OpenMode {
  kRead,    // read-only; the file must exist and be a current history
  kWrite,   // read-write; the file must exist
  kCreate,  // read-write; the file and its directory are created when absent
};

// Opens path, refuses what is not a gpudoctor history, and in the write
// modes sets WAL, synchronous=FULL and foreign keys and migrates the schema
// to kSchemaVersion. Errors are one line starting with the path.
Result<Db> open_db(const std::string& path, OpenMode mode);

}  // namespace gd::history
