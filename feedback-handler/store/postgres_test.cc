// The PostgreSQL backend of sql.h against a real server (tests/support/postgres_server.h), plus
// the backend-neutral SQL text helpers. Every server test gets a database of its own.
#include "feedback-handler/store/postgres.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <thread>

#include "tests/support/postgres_gtest.h"
#include "tests/support/shipped_migrations.h"

namespace perfhat::handler::sql {
namespace {

using perfhat::testing::PostgresServer;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "(no StoreError)";
}

// ---- SQL text helpers (no server) ----------------------------------------------------------

TEST(SqlText, PlaceholdersBecomeNumberedLikeSqlite) {
  int n = 0;
  EXPECT_EQ(numberedPlaceholders("SELECT a FROM t WHERE a=? AND b>? LIMIT ?", &n),
            "SELECT a FROM t WHERE a=$1 AND b>$2 LIMIT $3");
  EXPECT_EQ(n, 3);
  EXPECT_EQ(numberedPlaceholders("VALUES(?1,?2,?1) ON CONFLICT DO UPDATE SET x=?12", &n),
            "VALUES($1,$2,$1) ON CONFLICT DO UPDATE SET x=$12");
  EXPECT_EQ(n, 12);
  // A bare ? after ?N continues from the largest number, as SQLite does.
  EXPECT_EQ(numberedPlaceholders("?3, ?", &n), "$3, $4");
  EXPECT_EQ(n, 4);
  // Literals, quoted identifiers and comments keep their question marks.
  EXPECT_EQ(numberedPlaceholders("SELECT 'a?''?', \"q?\" -- why?\n, ? /* ?1 */", &n),
            "SELECT 'a?''?', \"q?\" -- why?\n, $1 /* ?1 */");
  EXPECT_EQ(n, 1);
  EXPECT_THROW(numberedPlaceholders("SELECT ?0", &n), StoreError);
}

TEST(SqlText, DdlMapsSqliteTypesForPostgres) {
  const std::string in =
      "CREATE TABLE t(a INTEGER NOT NULL, b real, c BLOB, d TEXT DEFAULT 'INTEGER REAL', "
      "integer_count INTEGER, \"BLOB\" INTEGER); -- BLOB stays in comments\n";
  EXPECT_EQ(ddl(in, Backend::kPostgres),
            "CREATE TABLE t(a BIGINT NOT NULL, b DOUBLE PRECISION, c BYTEA, d TEXT DEFAULT "
            "'INTEGER REAL', integer_count BIGINT, \"BLOB\" BIGINT); -- BLOB stays in comments\n");
  EXPECT_EQ(ddl(in, Backend::kSqlite), in);
  // SQLite's clustered-table option has no PostgreSQL counterpart (nor a need for one).
  const std::string clustered =
      "CREATE TABLE c(k TEXT, v BLOB, PRIMARY KEY(k)) WITHOUT\n  rowid; -- WITHOUT ROWID\n";
  EXPECT_EQ(ddl(clustered, Backend::kPostgres),
            "CREATE TABLE c(k TEXT, v BYTEA, PRIMARY KEY(k)); -- WITHOUT ROWID\n");
  EXPECT_EQ(ddl(clustered, Backend::kSqlite), clustered);
}

TEST(SqlText, PasswordsAreRedacted) {
  EXPECT_EQ(redactPostgresUrl("postgresql://u:s3cret@db:5432/perfhat"),
            "postgresql://u:***@db:5432/perfhat");
  EXPECT_EQ(redactPostgresUrl("postgresql://db/perfhat?user=u&password=s3cret&sslmode=require"),
            "postgresql://db/perfhat?user=u&password=***&sslmode=require");
  EXPECT_EQ(redactPostgresUrl("postgresql://u@db/p"), "postgresql://u@db/p");
}

// ---- Against a real server -------------------------------------------------------------------

class PostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PERFHAT_REQUIRE_POSTGRES(server_);
    url_ = server_->createDatabase(perfhat::testing::databaseNameForTest("t_"));
  }
  Db open() { return Db::open(url_); }

  PostgresServer* server_ = nullptr;
  std::string url_;
};

TEST_F(PostgresTest, OpenPicksTheBackendFromTheTarget) {
  Db db = open();
  EXPECT_EQ(db.backend(), Backend::kPostgres);
  EXPECT_EQ(db.describe(), url_);
  EXPECT_TRUE(isPostgresTarget("postgres://h/db"));
  EXPECT_FALSE(isPostgresTarget("/var/lib/perfhat/postgresql.sqlite"));
}

TEST_F(PostgresTest, PreparedStatementsRoundTripEveryTypeExactly) {
  Db db = open();
  db.exec(
      ddl("CREATE TABLE v(id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB)", db.backend())
          .c_str());
  std::string blob;
  for (int i = 0; i < 256; ++i) blob += static_cast<char>(i);  // zeros, high bytes, "\x"
  blob += std::string(3, '\0');
  const std::string big(100'000, '\0');
  struct Row {
    int64_t i;
    double r;
    std::string t, b;
  };
  const std::vector<Row> rows = {
      {std::numeric_limits<int64_t>::min(), 0.1, "", ""},
      {std::numeric_limits<int64_t>::max(), -1e-300, "ns::f(int) → µs", blob},
      {0, 1.0 / 3.0, std::string(5000, 'x'), big},
      {-1, std::numeric_limits<double>::max(), "it's \"quoted\" \\ ?", std::string(1, '\0')},
  };
  Stmt ins(db, "INSERT INTO v(id, i, r, t, b) VALUES(?1, ?2, ?3, ?4, ?5)");
  for (size_t k = 0; k < rows.size(); ++k) {
    ins.reset();
    ins.bind(1, static_cast<int64_t>(k)).bind(2, rows[k].i).bind(3, rows[k].r);
    if (k % 2) {
      ins.bind(4, rows[k].t).bindBlob(5, rows[k].b);
    } else {
      ins.bindRef(4, rows[k].t).bindBlobRef(5, rows[k].b);  // no copies
    }
    EXPECT_FALSE(ins.step());
    EXPECT_EQ(db.changes(), 1);
  }
  EXPECT_THROW(ins.lastInsertRowid(), StoreError);
  Stmt q(db, "SELECT i, r, t, b, id FROM v WHERE id >= ? ORDER BY id");
  q.bind(1, int64_t{0});
  size_t k = 0;
  while (q.step()) {
    ASSERT_LT(k, rows.size());
    EXPECT_EQ(q.i64(4), static_cast<int64_t>(k));
    EXPECT_EQ(q.i64(0), rows[k].i);
    EXPECT_EQ(q.f64(1), rows[k].r);  // bit-exact, not approximately
    EXPECT_EQ(q.text(2), rows[k].t);
    EXPECT_EQ(std::string(q.blob(3)), rows[k].b) << "row " << k;
    ++k;
  }
  EXPECT_EQ(k, rows.size());
  EXPECT_FALSE(q.step());  // stays done until reset
  // Reuse after reset with a new binding; the statement is not prepared again.
  q.reset();
  q.bind(1, int64_t{3});
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), -1);
  EXPECT_EQ(q.blob(3).size(), 1u);
  EXPECT_FALSE(q.step());
  q.rewind();  // bindings kept
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(4), 3);
  // Views into the middle of a buffer (no terminating NUL), into text and non-text columns.
  const std::string buf = "ninety-nine bottles";
  ins.reset();
  ins.bind(1, int64_t{10}).bind(2, int64_t{5}).bind(3, 0.5);
  ins.bindRef(4, std::string_view(buf).substr(0, 6))
      .bindBlobRef(5, std::string_view(buf).substr(7, 4));
  ins.step();
  Stmt cast(db, "SELECT t, b, CAST(? AS BIGINT) FROM v WHERE id = 10");
  const std::string digits = "12345";
  cast.bindRef(1, std::string_view(digits).substr(0, 2));
  ASSERT_TRUE(cast.step());
  EXPECT_EQ(cast.text(0), "ninety");
  EXPECT_EQ(cast.blob(1), "nine");
  EXPECT_EQ(cast.i64(2), 12);
  ASSERT_FALSE(cast.step());
}

TEST_F(PostgresTest, UnboundParametersAreNullAndNullsReadAsEmpty) {
  Db db = open();
  db.exec("CREATE TABLE n(a BIGINT, t TEXT, b BYTEA, r DOUBLE PRECISION)");
  Stmt ins(db, "INSERT INTO n(a, t, b, r) VALUES(?, ?, ?, ?)");
  ins.bind(1, int64_t{5}).bind(2, "x");
  ins.reset();  // clears the bindings, as SQLite's reset + clear_bindings does
  ins.step();
  Stmt q(db, "SELECT a, t, b, r, a IS NULL FROM n");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 0);
  EXPECT_EQ(q.text(1), "");
  EXPECT_TRUE(q.blob(2).empty());
  EXPECT_EQ(q.f64(3), 0.0);
  EXPECT_EQ(q.i64(4), 1);  // booleans read as 0/1
}

TEST_F(PostgresTest, ParametersFollowTheTypesTheServerInfers) {
  Db db = open();
  db.exec("CREATE TABLE m(small INTEGER, f DOUBLE PRECISION, n NUMERIC, t TEXT)");
  // int64 into int4 and numeric, int64 into a double column, double into text.
  Stmt ins(db, "INSERT INTO m VALUES(?, ?, ?, ?)");
  ins.bind(1, int64_t{42}).bind(2, int64_t{7}).bind(3, int64_t{1} << 62).bind(4, 2.5);
  ins.step();
  Stmt q(db, "SELECT small, f, n, t, SUM(n) OVER () FROM m");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 42);
  EXPECT_EQ(q.f64(1), 7.0);
  EXPECT_EQ(q.i64(2), int64_t{1} << 62);
  EXPECT_EQ(q.text(3), "2.5");
  EXPECT_EQ(q.i64(4), int64_t{1} << 62);
  EXPECT_NE(errorOf([&] { Stmt(db, "SELECT ?").bind(2, int64_t{1}); }).find("out of range"),
            std::string::npos);
}

TEST_F(PostgresTest, TransactionsRollBackUnlessCommitted) {
  Db db = open();
  db.exec("CREATE TABLE k(v BIGINT)");
  Stmt ins(db, "INSERT INTO k(v) VALUES(?)");
  {
    Transaction tx(db);
    ins.bind(1, int64_t{1}).step();
  }  // destroyed without commit
  {
    Transaction tx(db);
    ins.reset();
    ins.bind(1, int64_t{2}).step();
    tx.commit();
  }
  Stmt q(db, "SELECT v FROM k ORDER BY v");
  std::vector<int64_t> seen;
  while (q.step()) seen.push_back(q.i64(0));
  EXPECT_EQ(seen, std::vector<int64_t>{2});
  // A read transaction is read-only: a write in it is an error, not a silent success.
  Transaction read(db, /*write=*/false);
  ins.reset();
  ins.bind(1, int64_t{3});
  EXPECT_NE(errorOf([&] { ins.step(); }).find("read-only"), std::string::npos);
}

TEST_F(PostgresTest, ErrorsCarryTheServersMessage) {
  Db db = open();
  db.exec("CREATE TABLE u(k TEXT PRIMARY KEY)");
  EXPECT_NE(errorOf([&] { Stmt(db, "SELEC k FROM u"); }).find("syntax error"), std::string::npos);
  EXPECT_NE(errorOf([&] {
              Stmt(db, "SELECT k FROM missing_table");
            }).find("relation \"missing_table\" does not exist"),
            std::string::npos);
  Stmt ins(db, "INSERT INTO u(k) VALUES(?)");
  ins.bind(1, "a").step();
  ins.reset();
  const std::string dup = errorOf([&] { ins.bind(1, "a").step(); });
  EXPECT_NE(dup.find("duplicate key value violates unique constraint"), std::string::npos) << dup;
  EXPECT_NE(dup.find("SQLSTATE 23505"), std::string::npos) << dup;
  // Text cannot hold NUL bytes in PostgreSQL: a clear error instead of a truncated key.
  ins.reset();
  EXPECT_NE(errorOf([&] { ins.bind(1, std::string_view("a\0b", 3)); }).find("NUL byte"),
            std::string::npos);
  // An error inside a transaction aborts it; commit says so instead of pretending.
  {
    Transaction tx(db);
    ins.reset();
    EXPECT_THROW(ins.bind(1, "a").step(), StoreError);
    EXPECT_NE(errorOf([&] { tx.commit(); }).find("rolled back"), std::string::npos);
  }
  // The connection is still usable afterwards.
  ins.reset();
  ins.bind(1, "b").step();
  EXPECT_EQ(db.changes(), 1);
  EXPECT_NE(errorOf([&] { db.exec("DROP TABLE nope"); }).find("does not exist"), std::string::npos);
}

TEST_F(PostgresTest, ConnectFailuresSayWhy) {
  const std::string port = std::to_string(server_->port());
  const std::string no_db =
      errorOf([&] { Db::open("postgresql://perfhat:s3cret@127.0.0.1:" + port + "/nope"); });
  EXPECT_NE(no_db.find("no such database"), std::string::npos) << no_db;
  EXPECT_NE(no_db.find("\"nope\""), std::string::npos) << no_db;
  EXPECT_EQ(no_db.find("s3cret"), std::string::npos) << no_db;
  EXPECT_NE(no_db.find("perfhat:***@"), std::string::npos) << no_db;

  const std::string no_role =
      errorOf([&] { Db::open("postgresql://intruder@127.0.0.1:" + port + "/postgres"); });
  EXPECT_NE(no_role.find("authentication failed"), std::string::npos) << no_role;

  // The server going away under an open connection, and coming back.
  PostgresServer* s = server_;
  const std::string url = url_;
  Db db = open();
  Stmt q(db, "SELECT 1");
  s->stop();
  const std::string lost = errorOf([&] { q.step(); });
  EXPECT_NE(lost.find("store"), std::string::npos) << lost;
  const std::string down = errorOf([&] { Db::open(url); });
  EXPECT_NE(down.find("server not reachable"), std::string::npos) << down;
  EXPECT_NE(down.find(url), std::string::npos) << down;
  // After a restart the same Db reconnects and prepares its statements again.
  s->start();
  q.reset();
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 1);
}

// The same statement text over a JSON array on both backends.
TEST_F(PostgresTest, JsonEachListsArrayElementsWithTheirIndex) {
  const std::string arr = R"J(["ns::f(int)", "b\"q", "ü"])J";
  for (Backend b : {Backend::kSqlite, Backend::kPostgres}) {
    Db db = b == Backend::kPostgres ? open() : Db::open(":memory:");
    Stmt q(db, ("SELECT j.key, j.value FROM " + jsonEach(b, 1) + " j ORDER BY j.key").c_str());
    q.bindRef(1, arr);
    std::vector<std::pair<int64_t, std::string>> got;
    while (q.step()) got.emplace_back(q.i64(0), q.text(1));
    EXPECT_EQ(got, (std::vector<std::pair<int64_t, std::string>>{
                       {0, "ns::f(int)"}, {1, "b\"q"}, {2, "ü"}}))
        << (b == Backend::kPostgres ? "PostgreSQL" : "SQLite");
  }
}

TEST_F(PostgresTest, ShippedMigrationsApplyAndGetPostgresTypes) {
  const auto migrations = perfhat::testing::shippedMigrations();
  ASSERT_FALSE(migrations.empty());
  Db db = open();
  for (const auto& m : migrations) {
    Transaction tx(db);
    db.exec(ddl(m, db.backend()).c_str());
    tx.commit();
  }
  Stmt q(db,
         "SELECT table_name, column_name, data_type FROM information_schema.columns "
         "WHERE table_schema = 'public' ORDER BY table_name, ordinal_position");
  std::map<std::string, std::string> types;
  while (q.step()) types[q.text(0) + "." + q.text(1)] = q.text(2);
  EXPECT_EQ(types["aggregates.sketch"], "bytea");
  EXPECT_EQ(types["aggregates.x1"], "double precision");
  EXPECT_EQ(types["aggregates.bucket"], "bigint");
  EXPECT_EQ(types["meta.value"], "bigint");
  EXPECT_EQ(types["functions.key"], "text");
  Stmt seq(db, "SELECT value FROM meta WHERE name='seq'");
  ASSERT_TRUE(seq.step());
  EXPECT_EQ(seq.i64(0), 0);
}

// The store's sequence pattern (read meta.seq, write seq+1 in a write transaction) from two
// connections at once: the write lock makes every increment count.
TEST_F(PostgresTest, ConcurrentWriteTransactionsNeverLoseAnIncrement) {
  {
    Db db = open();
    db.exec(
        "CREATE TABLE meta(name TEXT PRIMARY KEY, value BIGINT NOT NULL);"
        "INSERT INTO meta VALUES('seq', 0)");
  }
  constexpr int kPerWriter = 150;
  std::string errors[2];
  auto writer = [&](int w) {
    try {
      Db db = open();
      Stmt get(db, "SELECT value FROM meta WHERE name='seq'");
      Stmt set(db, "UPDATE meta SET value=? WHERE name='seq'");
      for (int i = 0; i < kPerWriter; ++i) {
        Transaction tx(db);
        get.reset();
        const int64_t seq = get.step() ? get.i64(0) + 1 : 1;
        get.reset();
        std::this_thread::yield();  // widen the window a lost update would need
        set.reset();
        set.bind(1, seq).step();
        tx.commit();
      }
    } catch (const std::exception& e) {
      errors[w] = e.what();
    }
  };
  std::thread a(writer, 0), b(writer, 1);
  a.join();
  b.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  Db db = open();
  Stmt q(db, "SELECT value FROM meta WHERE name='seq'");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 2 * kPerWriter);
}

}  // namespace
}  // namespace perfhat::handler::sql
