#include "server/analysis/implicit_members.h"

#include "common/function_key.h"

namespace perfhat::analysis {
namespace {

std::string text(CXString s) {
  const char* c = clang_getCString(s);
  std::string out = c ? c : "";
  clang_disposeString(s);
  return out;
}

}  // namespace

std::vector<FunctionInfo> implicitSpecialMembers(CXCursor cls, const std::string& qualified,
                                                 const std::string& file, Range range,
                                                 Range name_range) {
  std::vector<FunctionInfo> out;
  std::string name = text(clang_getCursorSpelling(cls));
  if (name.empty() || qualified.empty()) return out;
  struct Declared {
    bool default_ctor = false, copy = false, move = false, dtor = false, assign = false;
  } d;
  clang_visitChildren(
      cls,
      [](CXCursor m, CXCursor, CXClientData data) {
        auto* d = static_cast<Declared*>(data);
        if (m.kind == CXCursor_Constructor) {
          d->default_ctor = d->default_ctor || clang_CXXConstructor_isDefaultConstructor(m);
          d->copy = d->copy || clang_CXXConstructor_isCopyConstructor(m);
          d->move = d->move || clang_CXXConstructor_isMoveConstructor(m);
        } else if (m.kind == CXCursor_Destructor) {
          d->dtor = true;
        } else if ((m.kind == CXCursor_CXXMethod || m.kind == CXCursor_FunctionTemplate) &&
                   text(clang_getCursorSpelling(m)) == "operator=") {
          d->assign = true;  // any user assignment: the implicit ones are then left out
        }
        return CXChildVisit_Continue;
      },
      &d);
  struct Member {
    bool declared;
    std::string signature;
    std::string display;
  };
  const Member members[] = {
      {d.default_ctor, name + "()", name},
      {d.copy, name + "(const " + qualified + " &)", name},
      {d.move, name + "(" + qualified + " &&)", name},
      {d.dtor, "~" + name + "()", "~" + name},
      {d.assign, "operator=(const " + qualified + " &)", "operator="},
      {d.assign, "operator=(" + qualified + " &&)", "operator="},
  };
  for (const Member& m : members) {
    if (m.declared) continue;
    FunctionInfo f;
    f.key = normalizeFunctionKey(qualified + "::" + m.signature);
    f.name = m.display;
    f.file = file;
    f.range = range;
    f.name_range = name_range;
    f.implicit = true;
    Node root;
    root.kind = NodeKind::Function;
    root.range = range;
    root.hint = name_range.end;
    f.nodes.push_back(root);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace perfhat::analysis
