#include "server/analysis/clang_cursor.h"

#include "common/function_key.h"
#include "server/analysis/ast_builder.h"
#include "server/analysis/translation_unit.h"

namespace perfhat::analysis::ast_walk {

std::vector<CXCursor> children(CXCursor c) {
  std::vector<CXCursor> out;
  clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        static_cast<std::vector<CXCursor>*>(data)->push_back(child);
        return CXChildVisit_Continue;
      },
      &out);
  return out;
}

std::string spelling(CXCursor c) { return toString(clang_getCursorSpelling(c)); }

bool isFunctionKind(CXCursorKind k) {
  return k == CXCursor_FunctionDecl || k == CXCursor_CXXMethod || k == CXCursor_Constructor ||
         k == CXCursor_Destructor || k == CXCursor_FunctionTemplate ||
         k == CXCursor_ConversionFunction;
}

bool isClassKind(CXCursorKind k) {
  return k == CXCursor_ClassDecl || k == CXCursor_StructDecl || k == CXCursor_UnionDecl ||
         k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization;
}

std::string typeSpelling(CXType t) {
  // Canonical types resolve typedefs and qualify names fully; template parameters have no
  // useful canonical spelling (`type-parameter-0-0`), so those keep the written one.
  std::string canonical = toString(clang_getTypeSpelling(clang_getCanonicalType(t)));
  if (canonical.find("type-parameter") != std::string::npos || canonical.empty())
    return toString(clang_getTypeSpelling(t));
  return canonical;
}

std::string scopePrefix(CXCursor c) {
  std::vector<std::string> parts;
  CXCursor p = clang_getCursorSemanticParent(c);
  while (!clang_Cursor_isNull(p) && !clang_isInvalid(p.kind) &&
         p.kind != CXCursor_TranslationUnit) {
    if (p.kind == CXCursor_Namespace) {
      std::string n = spelling(p);
      parts.push_back(n.empty() || clang_Cursor_isAnonymous(p) ? "(anonymous namespace)" : n);
    } else if (isClassKind(p.kind) || p.kind == CXCursor_EnumDecl) {
      std::string n = toString(clang_getCursorDisplayName(p));
      parts.push_back(n.empty() ? "(anonymous struct)" : n);
    } else if (isFunctionKind(p.kind)) {
      parts.push_back(functionKeyOf(p));  // local class: the enclosing function's full key
      break;
    }
    // extern "C" blocks come back as UnexposedDecl or LinkageSpec: transparent (trap 3).
    p = clang_getCursorSemanticParent(p);
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += *it + "::";
  return out;
}

std::string mangledOf(CXCursor c) {
  if (c.kind == CXCursor_FunctionTemplate) return "";
  return toString(clang_Cursor_getMangling(c));
}

bool isStructural(CXCursorKind k) {
  return k == CXCursor_LambdaExpr || k == CXCursor_CallExpr || k == CXCursor_ForStmt ||
         k == CXCursor_WhileStmt || k == CXCursor_DoStmt || k == CXCursor_CXXForRangeStmt ||
         k == CXCursor_IfStmt || k == CXCursor_SwitchStmt || k == CXCursor_ConditionalOperator ||
         k == CXCursor_ClassDecl || k == CXCursor_StructDecl || k == CXCursor_UnionDecl ||
         k == CXCursor_ClassTemplate;
}

bool isLeaf(CXCursorKind k) {
  switch (k) {
    case CXCursor_IntegerLiteral:
    case CXCursor_FloatingLiteral:
    case CXCursor_StringLiteral:
    case CXCursor_CharacterLiteral:
    case CXCursor_CXXBoolLiteralExpr:
    case CXCursor_CXXNullPtrLiteralExpr:
    case CXCursor_TypeRef:
    case CXCursor_TemplateRef:
    case CXCursor_NamespaceRef:
    case CXCursor_MemberRef:
    case CXCursor_OverloadedDeclRef:
    case CXCursor_LabelRef:
    case CXCursor_VariableRef:
    case CXCursor_DeclRefExpr:
    case CXCursor_BreakStmt:
    case CXCursor_ContinueStmt:
    case CXCursor_NullStmt:
    case CXCursor_GotoStmt:
      return true;
    default:
      return false;
  }
}

std::string localVar(CXCursor e) {
  e = stripConversions(e);
  if (e.kind != CXCursor_DeclRefExpr) return {};
  CXCursor var = clang_getCursorReferenced(e);
  if (var.kind != CXCursor_VarDecl) return {};
  const CXCursorKind owner = clang_getCursorSemanticParent(var).kind;
  if (!isFunctionKind(owner) && owner != CXCursor_LambdaExpr) return {};
  return toString(clang_getCursorUSR(var));
}

CXCursor stripConversions(CXCursor e) {
  for (;;) {
    std::vector<CXCursor> k = children(e);
    const bool conv = e.kind == CXCursor_UnexposedExpr || e.kind == CXCursor_ParenExpr ||
                      ((e.kind == CXCursor_CallExpr || e.kind == CXCursor_MemberRefExpr) &&
                       spelling(e) == "operator bool");
    if (!conv || k.size() != 1) return e;
    e = k[0];
  }
}

}  // namespace perfhat::analysis::ast_walk
