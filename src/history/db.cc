#include "history/db.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gd::history {

namespace {

// One step per schema version: kMigrations[i] takes a file from version i
// to i + 1, inside the writer's transaction. Never edit a released step;
// add the next one and raise kSchemaVersion.
//
// Times are unix ms (UTC). findings holds only the findings that say
// something (info, warn, fail), not the dozens of ok and n/a ones each
// report carries; reports.report_json is NULL when the report said the same
// as the one before, or (schema 3) when report_patch holds it as a change
// (see store.cc).
constexpr const char* kMigrations[] = {
    // 0 -> 1
    R"sql(
CREATE TABLE reports (
  id INTEGER PRIMARY KEY,
  time_ms INTEGER NOT NULL,
  verdict TEXT NOT NULL,
  findings INTEGER NOT NULL,
  report_json TEXT
);
CREATE INDEX reports_time ON reports(time_ms);
CREATE TABLE findings (
  report_id INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
  time_ms INTEGER NOT NULL,
  id TEXT NOT NULL,
  severity TEXT NOT NULL,
  gpus TEXT NOT NULL,
  summary TEXT NOT NULL
);
CREATE INDEX findings_report ON findings(report_id);
CREATE INDEX findings_time ON findings(time_ms);
CREATE INDEX findings_id ON findings(id, time_ms);
CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  boot TEXT NOT NULL,
  kind TEXT NOT NULL,
  type TEXT NOT NULL,
  code INTEGER NOT NULL,
  gpu TEXT NOT NULL,
  message TEXT NOT NULL,
  line TEXT NOT NULL,
  first_stamp TEXT NOT NULL,
  last_stamp TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL,
  count INTEGER NOT NULL,
  stored_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  UNIQUE (boot, kind, type, code, gpu, first_stamp)
);
CREATE INDEX events_gpu ON events(gpu, kind, code, last_seen_ms);
CREATE INDEX events_last ON events(last_seen_ms);
CREATE INDEX events_first ON events(first_seen_ms);
)sql",
    // 1 -> 2: `gpudoctor diag` runs, apart from the check reports (a diag
    // finding must never read as "cleared" by the next check). diag_json is
    // {"run": gpudoctor.diag/v1, "figures": [...]} (diag/json.h), always
    // kept: a run is rare and its figures are the point. diag_findings, as
    // findings, holds only those that say something, with their evidence
    // and remedy (JSON arrays of strings) for the exporter's status page.
    R"sql(
CREATE TABLE diag_runs (
  id INTEGER PRIMARY KEY,
  time_ms INTEGER NOT NULL,
  level INTEGER NOT NULL,
  verdict TEXT NOT NULL,
  findings INTEGER NOT NULL,
  diag_json TEXT NOT NULL
);
CREATE INDEX diag_runs_time ON diag_runs(time_ms);
CREATE TABLE diag_findings (
  run_id INTEGER NOT NULL REFERENCES diag_runs(id) ON DELETE CASCADE,
  time_ms INTEGER NOT NULL,
  id TEXT NOT NULL,
  severity TEXT NOT NULL,
  gpus TEXT NOT NULL,
  summary TEXT NOT NULL,
  evidence TEXT NOT NULL DEFAULT '[]',
  remedy TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX diag_findings_run ON diag_findings(run_id);
CREATE INDEX diag_findings_time ON diag_findings(time_ms);
)sql",
    // 2 -> 3: a report's JSON as a change (store.cc): report_patch, an RFC
    // 6902 JSON Patch that turns the report_json of row base_id (always a
    // full one) into this report's. A GPU that comes and goes changes one
    // finding and a few values, not the whole 45 kB report.
    R"sql(
ALTER TABLE reports ADD COLUMN base_id INTEGER;
ALTER TABLE reports ADD COLUMN report_patch TEXT;
CREATE INDEX reports_base ON reports(base_id) WHERE base_id IS NOT NULL;
)sql",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

struct Identity {
  int64_t application_id = 0;
  int64_t user_version = 0;
  int64_t objects = 0;  // rows of sqlite_master
};

Result<int64_t> pragma_int(sqlite3* db, const std::string& path, const char* sql) {
  auto s = Stmt::prepare(db, sql);
  int rc = s.ok() ? s->step() : sqlite3_errcode(db);
  if (rc == SQLITE_ROW) return s->int64(0);
  if ((rc & 0xff) == SQLITE_NOTADB) {
    return Error{path + ": not a gpudoctor history (not an SQLite database)"};
  }
  return Error{path + ": cannot read: " + sqlite3_errmsg(db)};
}

Result<Identity> read_identity(sqlite3* db, const std::string& path) {
  Identity id;
  for (auto [sql, out] : {std::pair{"PRAGMA application_id", &id.application_id},
                          std::pair{"PRAGMA user_version", &id.user_version},
                          std::pair{"SELECT count(*) FROM sqlite_master", &id.objects}}) {
    auto v = pragma_int(db, path, sql);
    if (!v.ok()) return Error{v.error()};
    *out = *v;
  }
  return id;
}

bool is_blank(const Identity& id) {
  return id.application_id == 0 && id.user_version == 0 && id.objects == 0;
}

// Refuses a file that is not ours or is newer than this build.
Result<bool> check_identity(const Identity& id, const std::string& path) {
  if (is_blank(id)) return true;
  if (id.application_id == 0) {
    return Error{path + ": not a gpudoctor history (an SQLite database of another program)"};
  }
  if (id.application_id != kApplicationId) {
    char got[32];
    std::snprintf(got, sizeof got, "0x%08llx",
                  static_cast<unsigned long long>(static_cast<uint32_t>(id.application_id)));
    return Error{path + ": not a gpudoctor history (an SQLite database with application_id " + got +
                 ")"};
  }
  if (id.user_version > kSchemaVersion) {
    return Error{path + ": written by a newer gpudoctor (history schema " +
                 std::to_string(id.user_version) + "; this one knows up to " +
                 std::to_string(kSchemaVersion) + ")"};
  }
  return true;
}

// The one verdict on a file, for `serve` (writer) and `history` (reader)
// alike, taken before anything is written: a file that is refused is left
// exactly as it was (its header, its journal mode).
Result<bool> verdict(sqlite3* db, const Identity& id, const std::string& path, OpenMode mode) {
  if (auto c = check_identity(id, path); !c.ok()) return c;
  if (is_blank(id)) {
    if (mode == OpenMode::kRead)
      return Error{path + ": not a gpudoctor history (an empty database)"};
    return true;
  }
  if (id.user_version == 0) return Error{path + ": not a gpudoctor history (schema version 0)"};
  if (mode == OpenMode::kRead && id.user_version < kSchemaVersion) {
    return Error{path + ": history schema " + std::to_string(id.user_version) +
                 " is older than this gpudoctor's (" + std::to_string(kSchemaVersion) +
                 "): `gpudoctor serve` migrates it when it next starts"};
  }
  return quick_check(db, path);
}

// Directories the history creates: group-readable for root's
// /var/lib/gpudoctor (an admin group may read it), private for a user's
// ~/.local/state.
Result<bool> make_parent_dirs(const std::string& path) {
  mode_t mode = geteuid() == 0 ? 0750 : 0700;
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    std::string dir = path.substr(0, slash);
    if (mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) {
      return Error{dir + ": cannot create the history's directory: " + std::strerror(errno)};
    }
  }
  return true;
}

Result<bool> migrate(sqlite3* db, const std::string& path) {
  // IMMEDIATE: two writers starting at once migrate one after the other,
  // the second finding the work done.
  if (auto b = exec(db, "BEGIN IMMEDIATE"); !b.ok()) return Error{path + ": " + b.error()};
  auto fail = [&](const std::string& why) -> Result<bool> {
    exec(db, "ROLLBACK");
    return Error{path + ": " + why};
  };
  auto id = read_identity(db, path);
  if (!id.ok()) return fail(id.error());
  if (auto c = check_identity(*id, path); !c.ok()) return fail(c.error());
  if (!is_blank(*id) && id->user_version == 0) {
    return fail("not a gpudoctor history (schema version 0)");
  }
  for (int64_t v = id->user_version; v < kSchemaVersion; ++v) {
    if (auto r = exec(db, kMigrations[v]); !r.ok()) {
      return fail("cannot migrate the history to schema " + std::to_string(v + 1) + ": " +
                  r.error());
    }
  }
  std::string stamp = "PRAGMA application_id = " + std::to_string(kApplicationId) +
                      "; PRAGMA user_version = " + std::to_string(kSchemaVersion);
  if (auto r = exec(db, stamp.c_str()); !r.ok()) return fail(r.error());
  if (auto r = exec(db, "COMMIT"); !r.ok()) return fail(r.error());
  return true;
}

// WAL: readers (`gpudoctor history`) never block the writer nor see a half
// transaction, and a killed writer leaves a WAL whose committed frames the
// next opener replays. synchronous=FULL: the WAL is fsynced at every
// commit, so a commit also survives power loss and kernel panics (a GPU
// falling off the bus often ends in a hard reset, the moment the history
// matters most); at one transaction per check interval the fsync costs
// nothing. NORMAL would already survive kill -9.
Result<bool> setup_writer(sqlite3* db, const std::string& path, bool blank) {
  if (blank) {
    // Before the first table: lets prune() hand freed pages back.
    if (auto r = exec(db, "PRAGMA auto_vacuum = INCREMENTAL"); !r.ok()) {
      return Error{path + ": " + r.error()};
    }
  }
  auto mode = Stmt::prepare(db, "PRAGMA journal_mode = WAL");
  if (!mode.ok()) return Error{path + ": " + mode.error()};
  bool wal = mode->step() == SQLITE_ROW && mode->text(0) == "wal";
  std::string why = sqlite3_errmsg(db);
  mode->reset();  // no statement may be in progress at the migration's COMMIT
  if (!wal) return Error{path + ": cannot switch to WAL mode: " + why};
  if (auto r = exec(db,
                    "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;"
                    "PRAGMA journal_size_limit = 4194304");
      !r.ok()) {
    return Error{path + ": " + r.error()};
  }
  return migrate(db, path);
}

// path as an SQLite URI, opened read-only and immutable.
Result<Db> open_immutable(const std::string& path) {
  // A URI's path: '%', '?' and '#' escaped; a relative one stays relative.
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", static_cast<unsigned char>(c));
      uri += hex;
    } else {
      uri += c;
    }
  }
  uri += "?mode=ro&immutable=1";
  sqlite3* h = nullptr;
  int rc = sqlite3_open_v2(uri.c_str(), &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  Db db(h);
  if (rc != SQLITE_OK) return Error{path + ": cannot open read-only: " + db.errmsg()};
  return db;
}

}  // namespace

Result<bool> quick_check(sqlite3* db, const std::string& path) {
  auto s = Stmt::prepare(db, "PRAGMA quick_check(1)");
  if (!s.ok()) return Error{path + ": cannot check: " + s.error()};
  std::string first = s->step() == SQLITE_ROW ? s->text(0) : std::string(sqlite3_errmsg(db));
  s->reset();
  if (first == "ok") return true;
  // Its report spans lines ("*** in database main ***\nPage 3: ..."): one line here.
  for (char& c : first) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return Error{path + ": the history is damaged (SQLite quick_check: " + first +
               "); nothing is written to it: move it aside (mv " + path + " " + path +
               ".damaged) and a new one is started"};
}

Result<Stmt> Stmt::prepare(sqlite3* db, std::string_view sql) {
  Stmt s;
  int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &s.s_, nullptr);
  if (rc != SQLITE_OK) return Error{sqlite3_errmsg(db)};
  return s;
}

std::string Stmt::text(int col) const {
  const unsigned char* p = sqlite3_column_text(s_, col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(s_, col)));
}

Result<bool> exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return Error{msg};
  }
  return true;
}

Result<bool> step_done(sqlite3* db, Stmt& s) {
  int rc = s.step();
  std::string err = rc == SQLITE_DONE || rc == SQLITE_ROW ? "" : sqlite3_errmsg(db);
  s.reset();  // done with: no statement may hold a read snapshot open
  if (err.empty()) return true;
  return Error{err};
}

Result<Db> open_db(const std::string& path, OpenMode mode) {
  if (path.empty()) return Error{"no history path given"};
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT || mode != OpenMode::kCreate) {
      return Error{path + ": " + std::strerror(errno)};
    }
    if (auto d = make_parent_dirs(path); !d.ok()) return Error{d.error()};
    // Created here rather than by SQLite, for its mode: 0640 (the -wal and
    // -shm files copy it).
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (fd < 0 && errno != EEXIST) {
      return Error{path + ": cannot create: " + std::strerror(errno)};
    }
    if (fd >= 0) close(fd);
  } else if (S_ISDIR(st.st_mode)) {
    return Error{path + ": is a directory, not a gpudoctor history"};
  } else if (!S_ISREG(st.st_mode)) {
    // A FIFO would block the open below for a writer; a device is no database.
    return Error{path + ": not a regular file, not a gpudoctor history"};
  }
  // A clear errno ("Permission denied") before SQLite's vaguer "unable to
  // open database file".
  int fd = open(path.c_str(), (mode == OpenMode::kRead ? O_RDONLY : O_RDWR) | O_CLOEXEC);
  if (fd < 0) return Error{path + ": " + std::strerror(errno)};
  close(fd);

  // A reader opens read-write where it may, and then only queries: after a
  // writer was killed, the WAL index must be rebuilt before anyone can read,
  // and a read-only connection cannot do that ("attempt to write a readonly
  // database"). Where the file or its directory is not writable, read-only
  // is all there is.
  sqlite3* h = nullptr;
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  bool may_write = mode != OpenMode::kRead ||
                   (access(path.c_str(), W_OK) == 0 && access(dir.c_str(), W_OK) == 0);
  int flags = may_write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  int rc = sqlite3_open_v2(path.c_str(), &h, flags, nullptr);
  Db db(h);
  if (rc != SQLITE_OK) return Error{path + ": cannot open: " + db.errmsg()};
  sqlite3_busy_timeout(h, kBusyTimeoutMs);
  if (mode == OpenMode::kRead && may_write) {
    sqlite3_exec(h, "PRAGMA query_only = ON", nullptr, nullptr, nullptr);
  }

  auto id = read_identity(h, path);
  if (!id.ok() && !may_write) {
    // A WAL history in a place no one may write (a read-only mount, a
    // backup copy): with no -shm beside it, a read-only connection cannot
    // build the WAL index (SQLITE_CANTOPEN / READONLY). Opened immutable,
    // SQLite reads the file alone, taking no locks; nothing can write it
    // there anyway. What a -wal beside it holds is then not seen.
    int code = sqlite3_errcode(h) & 0xff;
    if (code == SQLITE_CANTOPEN || code == SQLITE_READONLY) {
      auto ro = open_immutable(path);
      if (!ro.ok()) return Error{ro.error()};
      db = std::move(*ro);
      h = db.get();
      id = read_identity(h, path);
    }
  }
  if (!id.ok()) return Error{id.error()};
  if (auto v = verdict(h, *id, path, mode); !v.ok()) return Error{v.error()};
  if (mode == OpenMode::kRead) return db;
  if (auto w = setup_writer(h, path, is_blank(*id)); !w.ok()) return Error{w.error()};
  return db;
}

}  // namespace gd::history
