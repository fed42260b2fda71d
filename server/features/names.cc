#include "server/features/names.h"

namespace perfhat::features {

using analysis::MatchKind;
using analysis::Model;

std::string_view modelName(Model m) {
  switch (m) {
    case Model::Unstated:
      return "";
    case Model::None:
      return "none";
    case Model::Measured:
      return "measured";
    case Model::Leaf:
      return "leaf";
    case Model::CallsiteRegression:
      return "callsite-regression";
    case Model::CalleeOverall:
      return "callee-overall";
    case Model::WorkspaceBody:
      return "workspace-body";
    case Model::Loop:
      return "loop";
    case Model::Branch:
      return "branch";
    case Model::Sum:
      return "sum";
    case Model::Diff:
      return "diff";
  }
  return "";
}

std::string_view matchKindName(MatchKind k) {
  switch (k) {
    case MatchKind::None:
      return "";
    case MatchKind::Exact:
      return "exact";
    case MatchKind::Mangled:
      return "mangled";
    case MatchKind::Rule:
      return "rule";
    case MatchKind::Name:
      return "name";
    case MatchKind::Overloads:
      return "overloads";
    case MatchKind::FileLine:
      return "file-line";
    case MatchKind::Virtual:
      return "virtual";
  }
  return "";
}

std::string_view matchKindText(MatchKind k) {
  switch (k) {
    case MatchKind::None:
      return "";
    case MatchKind::Exact:
      return "exact key";
    case MatchKind::Mangled:
      return "mangled name";
    case MatchKind::Name:
      return "qualified name (single overload)";
    case MatchKind::Overloads:
      return "qualified name, aggregated across overloads";
    case MatchKind::FileLine:
      return "definition file and line";
    case MatchKind::Rule:
      return "project rule (.perfhat.json)";
    case MatchKind::Virtual:
      return "implementations called from here (call-site data)";
  }
  return "";
}

}  // namespace perfhat::features
