#include "server/server/budget_command.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace perfhat::server {
namespace {

using nlohmann::json;
namespace cb = collection_budget;

constexpr std::size_t kMaxStatusBytes = 8 << 20;  // the library caps its rows well below this

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g %%", share * 100);
  return buf;
}

const budget::ClassPlan* find(const budget::Plan& p, const std::string& name) {
  for (const auto& k : p.classes)
    if (k.name == name) return &k;
  return nullptr;
}

std::string classState(const budget::ClassPlan& k) {
  if (k.traced) return k.pinned ? "always traced" : "traced";
  return "sampled at " + percent(k.fraction);
}

// " · ≈ 1.2 ms CPU/s estimated from stack samples" for a function of an untraced class that the
// stack sampler saw ("" otherwise: its calls are measured).
std::string sampledNote(const cb::Status& s, const budget::ClassPlan& k, const std::string& fn) {
  const cb::SampledEstimate* e = k.traced ? nullptr : cb::sampledOf(s, fn);
  if (e == nullptr || e->samples <= 0) return "";
  char buf[96];
  if (s.sampling_wall_s > 0) {
    std::snprintf(buf, sizeof buf, " · ≈ %.3g ms CPU/s", e->cpu_s / s.sampling_wall_s * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, " · ≈ %.3g ms CPU", e->cpu_s * 1e3);
  }
  return std::string(buf) + " estimated from stack samples";
}

}  // namespace

Result<cb::Status> loadBudgetStatus(const std::string& path) {
  using Loaded = Result<cb::Status>;
  if (path.empty())
    return Loaded::failure(
        "no budget status file configured (budgetStatus or PERFHAT_BUDGET_STATUS)");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Loaded::failure("cannot read the budget status " + path);
  std::string text(kMaxStatusBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxStatusBytes)
    return Loaded::failure("the budget status " + path + " is larger than 8 MB");
  try {
    return Loaded::success(cb::parseStatus(json::parse(text)));
  } catch (const std::exception& e) {
    return Loaded::failure("budget status " + path + ": " + e.what());
  }
}

json collectionBudgetCommand(const BudgetFiles& files, const json& args) {
  const auto status = loadBudgetStatus(files.status);
  if (!status) throw std::runtime_error(status.error);
  return collectionBudgetCommand(status.value, files.pins, args);
}

json collectionBudgetCommand(const cb::Status& st, const std::string& pins_file, const json& args) {
  const cb::Status* status = &st;
  if (!args.is_array() || args.empty()) {
    return {{"plan", cb::planJson(status->plan)}, {"sampled_functions", cb::sampledJson(*status)}};
  }
  const json& a = args[0];
  cb::Change change;
  if (a.is_string() || (a.is_object() && a.contains("always") && a["always"].is_string())) {
    change.kind = cb::Change::Kind::kAlways;  // a bare string: the code lens's function
    change.target =
        cb::qualifiedName(a.is_string() ? a.get<std::string>() : a["always"].get<std::string>());
  } else if (a.is_object() && a.contains("weight") && a["weight"].is_string() &&
             a.contains("value") && a["value"].is_number()) {
    change.kind = cb::Change::Kind::kWeight;
    change.target = a["weight"].get<std::string>();
    change.weight = a["value"].get<double>();
  } else {
    throw std::invalid_argument(std::string(kCollectionBudgetCommand) +
                                " takes [], [FUNCTION], [{\"always\": FUNCTION}] or "
                                "[{\"weight\": CLASS, \"value\": W}]");
  }
  budget::Plan plan;
  try {
    plan = cb::replan(*status, change);
    cb::pinLine(change);  // refuse what the pins file cannot carry before writing anything
  } catch (const cb::StatusError& e) {
    throw std::invalid_argument(e.what());
  }
  const std::string klass = change.kind == cb::Change::Kind::kAlways
                                ? cb::classOf(*status, change.target)
                                : change.target;
  std::string message = (change.kind == cb::Change::Kind::kAlways
                             ? "Always trace " + change.target + " (class " + klass + ")"
                             : "Class " + klass + " weight " + json(change.weight).dump()) +
                        ": predicted collector overhead " +
                        percent(status->plan.predicted_overhead) + " → " +
                        percent(plan.predicted_overhead) + " of the process CPU";
  if (plan.over_budget) message += " (over the budget: pins are traced whatever they cost)";
  for (const auto& k : plan.classes) {
    const budget::ClassPlan* was = find(status->plan, k.name);
    if (was && (was->traced != k.traced || std::abs(was->fraction - k.fraction) > 1e-9))
      message += "; " + k.name + ": " + classState(*was) + " → " + classState(k);
  }
  json out = {{"before", cb::planJson(status->plan)},
              {"plan", cb::planJson(plan)},
              {"pin", cb::pinLine(change)},
              {"message", message}};
  if (!pins_file.empty()) {
    cb::writePin(pins_file, change);
    out["pins_file"] = pins_file;
  } else {
    out["pins_file"] = nullptr;  // the plan is shown; nothing tells the library yet
    out["message"] = message +
                     ". No pins file configured (budgetPins or PERFHAT_BUDGET_PINS): "
                     "add the line to the service's pins file";
  }
  return out;
}

std::vector<features::CodeLens> budgetLenses(const analysis::Snapshot& s,
                                             const cb::Status& status) {
  std::vector<features::CodeLens> out;
  for (const analysis::FunctionInfo& f : s.functions) {
    const std::string klass = cb::classOf(status, f.key);
    if (klass.empty()) continue;
    const budget::ClassPlan* k = find(status.plan, klass);
    if (k == nullptr) continue;
    const std::string name = cb::qualifiedName(f.key);
    features::CodeLens lens;
    lens.range = f.name_range;
    lens.command = kCollectionBudgetCommand;
    if (k->pinned && k->traced) {
      lens.title = "collection budget: " + klass + " always traced";
      lens.command.clear();  // nothing to raise
    } else {
      lens.title = "collection budget: " + klass + " " + classState(*k) + " · " +
                   percent(k->overhead) + " CPU" + sampledNote(status, *k, f.key) +
                   " — always trace";
      lens.arguments = {name};
    }
    out.push_back(std::move(lens));
  }
  return out;
}

}  // namespace perfhat::server
