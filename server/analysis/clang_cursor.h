// Stateless libclang helpers of the AST walk (ast_walker.h): cursor children and spellings,
// kinds, scopes, manglings, and the small classifications the walk asks about a cursor.
#pragma once

#include <clang-c/Index.h>

#include <string>
#include <vector>

namespace perfhat::analysis::ast_walk {

std::vector<CXCursor> children(CXCursor c);

std::string spelling(CXCursor c);

bool isFunctionKind(CXCursorKind k);

bool isClassKind(CXCursorKind k);

std::string typeSpelling(CXType t);

// Semantic parents as a key prefix ("ns::Class::"), or an enclosing function's key.
std::string scopePrefix(CXCursor c);

std::string mangledOf(CXCursor c);

// Kinds that become nodes or start a function of their own: walk() handles them.
bool isStructural(CXCursorKind k);

// Leaves and references cannot contain calls: not descending into them saves visits.
bool isLeaf(CXCursorKind k);

// The function-local variable an expression names (through conversions and parentheses), as
// its USR; "" when it names anything else.
std::string localVar(CXCursor e);

// Implicit conversions, parentheses and `operator bool` hide the value being tested.
CXCursor stripConversions(CXCursor e);

}  // namespace perfhat::analysis::ast_walk
