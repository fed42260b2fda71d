// Server methods of the collection-budget view (issue #22): the status from the configured
// feedback handler or the local file (budget_status_source.h), the perfhat.collectionBudget
// command, and the pin written to the pins file the library re-reads.
#include "server/server/server.h"
#include "server/server/server_internal.h"

namespace perfhat::server {

BudgetSources Server::budgetSources() const {
  const Config cfg = config();
  BudgetSources s{cfg.budget_status, cfg.budget_pins, cfg.budget_service, nullptr};
  MutexLock lock(mu_);
  s.provider = provider_;
  return s;
}

// perfhat.collectionBudget: the library's exported plan, or a re-plan for a pin or a class weight
// (server/server/budget_command.*), its predicted overhead shown at once. "from" says whose
// status it was (the handler, or the file).
json Server::collectionBudget(const json& args) {
  const BudgetSources sources = budgetSources();
  json result;
  try {
    const LoadedBudget loaded = loadBudget(sources);
    if (!loaded.status) throw std::runtime_error(loaded.error);
    if (!loaded.error.empty()) log_.info("collection budget: " + loaded.error + "; " + loaded.from);
    result = collectionBudgetCommand(*loaded.status, sources.pins_file, args);
    result["from"] = loaded.from;
  } catch (const std::invalid_argument& e) {
    throw lsp::RpcError(lsp::kInvalidParams, e.what());
  } catch (const std::exception& e) {
    throw lsp::RpcError(lsp::kRequestFailed, e.what());
  }
  if (result.contains("message")) {
    notify("window/showMessage",
           lsp::ShowMessageParams{lsp::MessageType::Info, result["message"].get<std::string>()});
  }
  return result;
}

}  // namespace perfhat::server
