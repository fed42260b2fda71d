#include "server/index/summary_codec.h"

#include <type_traits>

#include <nlohmann/json.hpp>

#include "common/fnv1a.h"

// The source facts a node keeps, as JSON (found by argument-dependent lookup from nlohmann's
// get and assignment, like any field below).
namespace perfhat::analysis {

void to_json(nlohmann::json& j, const HeuristicMatch& m) {
  j = nlohmann::json::array({static_cast<int>(m.heuristic), m.negated, m.else_arm});
}
void from_json(const nlohmann::json& j, HeuristicMatch& m) {
  m = {static_cast<BranchHeuristic>(j.at(0).get<int>()), j.at(1).get<bool>(), j.at(2).get<bool>()};
}
void to_json(nlohmann::json& j, const BranchPrior& p) {
  j = {{"s", static_cast<int>(p.short_circuit)}, {"h", p.heuristics}};
}
void from_json(const nlohmann::json& j, BranchPrior& p) {
  p.short_circuit = static_cast<BranchPrior::ShortCircuit>(j.at("s").get<int>());
  p.heuristics = j.at("h").get<std::vector<HeuristicMatch>>();
}
void to_json(nlohmann::json& j, const TripCountSource& s) {
  j = nlohmann::json::object();
  for (const TripCountSource::Evaluated& e : s.evaluated)
    j["e"].push_back(nlohmann::json::array({e.tokens, e.value, e.cut}));
  if (s.array) j["a"] = nlohmann::json::array({s.array->type, s.array->extent});
}
void from_json(const nlohmann::json& j, TripCountSource& s) {
  s = {};
  if (auto e = j.find("e"); e != j.end())
    for (const nlohmann::json& x : *e)
      s.evaluated.push_back(
          {x.at(0).get<std::vector<std::string>>(), x.at(1).get<double>(), x.at(2).get<bool>()});
  if (auto a = j.find("a"); a != j.end())
    s.array = TripCountSource::FixedArray{a->at(0).get<std::string>(), a->at(1).get<long long>()};
}

}  // namespace perfhat::analysis

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

// The optional fields of a node, listed once for the encoder and the decoder: f(code, field) or
// f(code, field, default). Only fields that differ from their default are written (most nodes
// are plain calls); an absent one decodes as the default.
template <typename N, typename F>
void nodeFields(N& n, F&& f) {
  f("p", n.parent, -1);
  f("c", n.children);
  f("ck", n.call.key);
  f("cm", n.call.mangled);
  f("cn", n.call.name);
  f("cw", n.call.in_workspace);
  f("cs", n.call.system);
  f("cv", n.call.is_virtual);
  f("ci", n.call.indirect);
  f("vl", n.call.via_lambda);
  f("cp", n.call.params);
  f("lk", n.loop.kind);
  f("lo", n.loop.ordinal, -1);
  f("pk", n.loop.producer_key);
  f("pm", n.loop.producer_mangled);
  f("rv", n.loop.range_var);
  f("rn", n.loop.range_var_name);
  f("fv", n.call.fills_var);
  f("bp", n.branch.prior);
  f("br", n.branch.prior_reason);
  f("a", n.arm);
  f("ba", n.branch.arms);
  f("ct", n.loop.constant_trip);
  f("cts", n.loop.constant_trip_source);
  f("ai", n.loop.annotated_iterations);
}

// Enumerations are stored as their number.
template <typename T>
auto stored(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    return static_cast<int>(v);
  } else {
    return v;
  }
}

struct PutField {
  json& j;
  template <typename T>
  void operator()(const char* code, const T& v, const decltype(stored(v))& dflt = {}) const {
    if (!(stored(v) == dflt)) j[code] = stored(v);
  }
  template <typename T>
  void operator()(const char* code, const std::optional<T>& v) const {
    if (v) j[code] = *v;
  }
};

struct GetField {
  const json& j;
  template <typename T>
  void operator()(const char* code, T& v, const decltype(stored(v))& dflt = {}) const {
    auto it = j.find(code);
    const auto value = it == j.end() ? dflt : it->get<decltype(stored(v))>();
    if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(value);
    } else {
      v = value;
    }
  }
  template <typename T>
  void operator()(const char* code, std::optional<T>& v) const {
    if (auto it = j.find(code); it != j.end()) v = it->get<T>();
  }
};

json encodeNode(const Node& n) {
  json j = json::object();
  j["k"] = static_cast<int>(n.kind);
  j["r"] = range(n.range);
  j["h"] = pos(n.hint);
  nodeFields(n, PutField{j});
  return j;
}

Node decodeNode(const json& j, int id) {
  Node n;
  n.id = id;
  n.kind = static_cast<analysis::NodeKind>(j.at("k").get<int>());
  n.range = toRange(j.at("r"));
  n.hint = toPos(j.at("h"));
  nodeFields(n, GetField{j});
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
