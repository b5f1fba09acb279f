#pragma once
// A thin RAII layer over SQLite's C API: a connection and prepared statements, errors as
// framelift::Error naming the database file. Only what the server's store needs.
//
// Thread-safety: none; the store serialises every use of one Database behind its own mutex.
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace framelift::server {

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& file);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as SQLite numbers them.
  Statement& bind(int i, int64_t v);
  Statement& bind(int i, double v);
  Statement& bind(int i, const std::string& v);
  Statement& bind_null(int i);

  bool step();  // true: a row is there to read; false: done
  void run() { while (step()) {} }

  int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  bool is_null(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string file_;
};

class Database {
 public:
  // Opens (creating) `file`, in WAL mode, so that a crash mid-write leaves the last committed
  // state. A statement that finds the database locked by another connection waits up to
  // `busy_timeout_ms`, then throws Error(Output) ("database is locked"). Throws Error(Output)
  // when it cannot open it.
  explicit Database(const std::filesystem::path& file, int busy_timeout_ms = 5000);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(const std::string& sql);  // statements without results (schema, BEGIN, COMMIT)
  Statement prepare(const std::string& sql) { return Statement(db_, sql, file_); }
  int64_t last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
  int changes() const { return sqlite3_changes(db_); }

 private:
  sqlite3* db_ = nullptr;
  std::string file_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when destroyed without commit() (an exception).
class Transaction {
 public:
  explicit Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace framelift::server
