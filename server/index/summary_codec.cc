#include "server/index/summary_codec.h"

#include <nlohmann/json.hpp>

#include "common/fnv1a.h"

namespace perfhat::index {
namespace {

using analysis::FunctionInfo;
using analysis::Node;
using analysis::Position;
using analysis::Range;
using nlohmann::json;

json pos(const Position& p) { return json::array({p.line, p.column}); }
json range(const Range& r) {
  return json::array({r.start.line, r.start.column, r.end.line, r.end.column});
}
Position toPos(const json& j) { return {j.at(0).get<int>(), j.at(1).get<int>()}; }
Range toRange(const json& j) {
  return {{j.at(0).get<int>(), j.at(1).get<int>()}, {j.at(2).get<int>(), j.at(3).get<int>()}};
}

// Only fields that differ from their default are written: most nodes are plain calls.
template <typename T>
void put(json& j, const char* name, const T& v, const T& dflt = T{}) {
  if (!(v == dflt)) j[name] = v;
}
template <typename T>
void putOpt(json& j, const char* name, const std::optional<T>& v) {
  if (v) j[name] = *v;
}
template <typename T>
void get(const json& j, const char* name, T& out) {
  if (auto it = j.find(name); it != j.end()) out = it->get<T>();
}
template <typename T>
void getOpt(const json& j, const char* name, std::optional<T>& out) {
  if (auto it = j.find(name); it != j.end()) out = it->get<T>();
}

json encodeNode(const Node& n) {
  json j = json::object();
  j["k"] = static_cast<int>(n.kind);
  j["r"] = range(n.range);
  j["h"] = pos(n.hint);
  put(j, "p", n.parent, -1);
  put(j, "c", n.children);
  put(j, "ck", n.callee_key);
  put(j, "cm", n.callee_mangled);
  put(j, "cn", n.callee_name);
  put(j, "cw", n.callee_in_workspace);
  put(j, "cs", n.callee_system);
  put(j, "cv", n.callee_virtual);
  put(j, "ci", n.callee_indirect);
  put(j, "cp", n.callee_params);
  put(j, "lk", static_cast<int>(n.loop_kind));
  put(j, "lo", n.loop_ordinal, -1);
  put(j, "pk", n.producer_key);
  put(j, "pm", n.producer_mangled);
  put(j, "rv", n.range_var);
  put(j, "rn", n.range_var_name);
  put(j, "fv", n.fills_var);
  putOpt(j, "bp", n.branch_prior);
  put(j, "br", n.branch_prior_reason);
  put(j, "a", n.arm);
  put(j, "ba", n.branch_arms);
  putOpt(j, "ct", n.constant_trip);
  put(j, "cts", n.constant_trip_source);
  putOpt(j, "ai", n.annotated_iterations);
  return j;
}

Node decodeNode(const json& j, int id) {
  Node n;
  n.id = id;
  n.kind = static_cast<analysis::NodeKind>(j.at("k").get<int>());
  n.range = toRange(j.at("r"));
  n.hint = toPos(j.at("h"));
  n.parent = -1;
  get(j, "p", n.parent);
  get(j, "c", n.children);
  get(j, "ck", n.callee_key);
  get(j, "cm", n.callee_mangled);
  get(j, "cn", n.callee_name);
  get(j, "cw", n.callee_in_workspace);
  get(j, "cs", n.callee_system);
  get(j, "cv", n.callee_virtual);
  get(j, "ci", n.callee_indirect);
  get(j, "cp", n.callee_params);
  int lk = 0;
  get(j, "lk", lk);
  n.loop_kind = static_cast<analysis::LoopKind>(lk);
  get(j, "lo", n.loop_ordinal);
  get(j, "pk", n.producer_key);
  get(j, "pm", n.producer_mangled);
  get(j, "rv", n.range_var);
  get(j, "rn", n.range_var_name);
  get(j, "fv", n.fills_var);
  getOpt(j, "bp", n.branch_prior);
  get(j, "br", n.branch_prior_reason);
  get(j, "a", n.arm);
  get(j, "ba", n.branch_arms);
  getOpt(j, "ct", n.constant_trip);
  get(j, "cts", n.constant_trip_source);
  getOpt(j, "ai", n.annotated_iterations);
  return n;
}

}  // namespace

std::string encodeSummary(const FunctionInfo& fn) {
  json j = {{"key", fn.key},
            {"mangled", fn.mangled},
            {"name", fn.name},
            {"file", fn.file},
            {"range", range(fn.range)},
            {"name_range", range(fn.name_range)},
            {"unresolved", fn.unresolved_calls},
            {"implicit", fn.implicit},
            // A string: JSON numbers lose the top bits of a 64-bit hash.
            {"hash", std::to_string(fn.body_hash)}};
  json nodes = json::array();
  for (const Node& n : fn.nodes) nodes.push_back(encodeNode(n));
  j["nodes"] = std::move(nodes);
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<FunctionInfo> decodeSummary(std::string_view text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    FunctionInfo fn;
    fn.key = j.at("key").get<std::string>();
    fn.mangled = j.at("mangled").get<std::string>();
    fn.name = j.at("name").get<std::string>();
    fn.file = j.at("file").get<std::string>();
    fn.range = toRange(j.at("range"));
    fn.name_range = toRange(j.at("name_range"));
    fn.unresolved_calls = j.at("unresolved").get<int>();
    fn.implicit = j.at("implicit").get<bool>();
    fn.body_hash = std::stoull(j.at("hash").get<std::string>());
    const json& nodes = j.at("nodes");
    if (!nodes.is_array() || nodes.empty()) return std::nullopt;
    for (size_t i = 0; i < nodes.size(); ++i)
      fn.nodes.push_back(decodeNode(nodes[i], static_cast<int>(i)));
    // Tree links must stay inside the function: the inference indexes nodes by them.
    const int count = static_cast<int>(fn.nodes.size());
    for (const Node& n : fn.nodes) {
      if (n.parent < -1 || n.parent >= count) return std::nullopt;
      for (int c : n.children)
        if (c <= 0 || c >= count) return std::nullopt;
    }
    if (fn.nodes.front().kind != analysis::NodeKind::Function) return std::nullopt;
    return fn;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

uint64_t contentHash(std::string_view bytes, uint64_t seed) {
  Fnv1a h{seed};
  h.bytes(bytes.data(), bytes.size());
  return h.h;
}

}  // namespace perfhat::index
