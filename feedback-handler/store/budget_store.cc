// The store's side of POST/GET /v1/budget: one row per (service, instance), bounded per service
// and in all (feedback-handler/budget/budget_status.h), so a writer that invents names cannot
// grow the store without limit.
#include "feedback-handler/budget/budget_status.h"
#include "feedback-handler/store/store.h"
#include "feedback-handler/store/store_impl.h"

namespace perfhat::handler {

void Store::putBudgetStatus(const BudgetRow& row) {
  using L = budget::StatusLimits;
  MutexLock lock(mu_);
  sql::Db& db = impl_->db;
  sql::Transaction tx(db);
  sql::Stmt up(db,
               "INSERT INTO budget_status(service, instance, version, received_ns, status) "
               "VALUES(?, ?, ?, ?, ?) ON CONFLICT(service, instance) DO UPDATE SET "
               "version=excluded.version, received_ns=excluded.received_ns, "
               "status=excluded.status");
  up.bind(1, row.service).bind(2, row.instance).bind(3, row.version).bind(4, row.received_ns);
  up.bind(5, row.status);
  up.step();
  sql::Stmt trim(db,
                 "DELETE FROM budget_status WHERE service=?1 AND instance NOT IN "
                 "(SELECT instance FROM budget_status WHERE service=?1 "
                 "ORDER BY received_ns DESC LIMIT ?2)");
  trim.bind(1, row.service).bind(2, static_cast<int64_t>(L::kMaxInstancesPerService));
  trim.step();
  sql::Stmt count(db, "SELECT COUNT(*) FROM budget_status");
  if (count.step() && count.i64(0) > static_cast<int64_t>(L::kMaxRows)) {
    sql::Stmt old(db,
                  "SELECT received_ns FROM budget_status ORDER BY received_ns DESC "
                  "LIMIT 1 OFFSET ?");
    old.bind(1, static_cast<int64_t>(L::kMaxRows) - 1);
    if (old.step()) {
      const int64_t oldest_kept = old.i64(0);
      sql::Stmt drop(db, "DELETE FROM budget_status WHERE received_ns<?");
      drop.bind(1, oldest_kept);
      drop.step();
    }
  }
  tx.commit();
}

std::optional<Store::BudgetRow> Store::budgetStatus(const std::string& service) {
  MutexLock lock(mu_);
  sql::Stmt q(impl_->db, service.empty()
                             ? "SELECT service, instance, version, received_ns, status FROM "
                               "budget_status ORDER BY received_ns DESC LIMIT 1"
                             : "SELECT service, instance, version, received_ns, status FROM "
                               "budget_status WHERE service=? ORDER BY received_ns DESC LIMIT 1");
  if (!service.empty()) q.bind(1, service);
  if (!q.step()) return std::nullopt;
  return BudgetRow{q.text(0), q.text(2), q.text(1), q.text(4), q.i64(3)};
}

}  // namespace perfhat::handler
