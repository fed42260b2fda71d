#include "server/analysis/translation_unit.h"

#include <chrono>

namespace perfhat::analysis {

std::string toString(CXString s) {
  const char* c = clang_getCString(s);
  std::string out = c ? c : "";
  clang_disposeString(s);
  return out;
}

Position toPosition(CXSourceLocation loc) {
  unsigned line = 0, column = 0;
  clang_getExpansionLocation(loc, nullptr, &line, &column, nullptr);
  return Position{line > 0 ? static_cast<int>(line) - 1 : 0,
                  column > 0 ? static_cast<int>(column) - 1 : 0};
}

Range toRange(CXSourceRange range) {
  return Range{toPosition(clang_getRangeStart(range)), toPosition(clang_getRangeEnd(range))};
}

std::string expansionFile(CXSourceLocation loc) {
  CXFile file = nullptr;
  clang_getExpansionLocation(loc, &file, nullptr, nullptr, nullptr);
  return file ? toString(clang_getFileName(file)) : std::string();
}

namespace {

constexpr unsigned kOneShotParseOptions =
    CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord;
constexpr unsigned kParseOptions = kOneShotParseOptions | CXTranslationUnit_PrecompiledPreamble |
                                   CXTranslationUnit_CreatePreambleOnFirstParse;

const char* errorName(CXErrorCode code) {
  switch (code) {
    case CXError_Success:
      return "success";
    case CXError_Failure:
      return "libclang failure";
    case CXError_Crashed:
      return "libclang crashed";
    case CXError_InvalidArguments:
      return "invalid arguments";
    case CXError_ASTReadError:
      return "AST read error";
  }
  return "unknown error";
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TranslationUnit::~TranslationUnit() {
  if (tu_) clang_disposeTranslationUnit(tu_);
  if (index_) clang_disposeIndex(index_);
}

Result<std::unique_ptr<TranslationUnit>> TranslationUnit::parse(
    const std::string& path, std::string contents, const std::vector<std::string>& args,
    Mode mode) {
  std::unique_ptr<TranslationUnit> tu(new TranslationUnit());
  // excludeDeclarationsFromPCH = 0: with 1, visiting also walks implicit template
  // instantiations (reference/libclang-and-cxx-names.md, trap 2).
  tu->index_ = clang_createIndex(/*excludeDeclarationsFromPCH=*/0, /*displayDiagnostics=*/0);
  tu->path_ = path;
  tu->contents_ = std::move(contents);
  tu->args_ = args;
  std::vector<const char*> argv;
  for (const auto& a : tu->args_) argv.push_back(a.c_str());
  CXUnsavedFile unsaved{tu->path_.c_str(), tu->contents_.data(),
                        static_cast<unsigned long>(tu->contents_.size())};
  auto t0 = std::chrono::steady_clock::now();
  CXErrorCode rc = clang_parseTranslationUnit2(
      tu->index_, tu->path_.c_str(), argv.data(), static_cast<int>(argv.size()), &unsaved, 1,
      mode == Mode::kEditor ? kParseOptions : kOneShotParseOptions, &tu->tu_);
  tu->last_parse_ms_ = msSince(t0);
  tu->parse_count_ = 1;
  if (rc != CXError_Success || !tu->tu_)
    return Result<std::unique_ptr<TranslationUnit>>::failure(std::string("cannot parse ") + path +
                                                             ": " + errorName(rc));
  return Result<std::unique_ptr<TranslationUnit>>::success(std::move(tu));
}

Result<void> TranslationUnit::reparse(std::string contents) {
  if (!tu_) return Result<void>::failure("translation unit is invalid");
  contents_ = std::move(contents);
  CXUnsavedFile unsaved{path_.c_str(), contents_.data(),
                        static_cast<unsigned long>(contents_.size())};
  auto t0 = std::chrono::steady_clock::now();
  int rc = clang_reparseTranslationUnit(tu_, 1, &unsaved, clang_defaultReparseOptions(tu_));
  last_parse_ms_ = msSince(t0);
  ++parse_count_;
  if (rc != 0) {
    clang_disposeTranslationUnit(tu_);
    tu_ = nullptr;
    return Result<void>::failure(std::string("cannot reparse ") + path_ + ": " +
                                 errorName(static_cast<CXErrorCode>(rc)));
  }
  return Result<void>::success();
}

std::vector<ParseProblem> TranslationUnit::problems() const {
  std::vector<ParseProblem> out;
  if (!tu_) return out;
  unsigned n = clang_getNumDiagnostics(tu_);
  for (unsigned i = 0; i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu_, i);
    CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
    if (sev == CXDiagnostic_Warning || sev == CXDiagnostic_Error || sev == CXDiagnostic_Fatal) {
      CXSourceLocation loc = clang_getDiagnosticLocation(d);
      ParseProblem p;
      p.message = toString(clang_getDiagnosticSpelling(d));
      p.error = sev != CXDiagnostic_Warning;
      bool in_main = clang_Location_isFromMainFile(loc) != 0;
      if (in_main) {
        p.range.start = toPosition(loc);
        p.range.end = p.range.start;
        if (clang_getDiagnosticNumRanges(d) > 0) {
          Range r = toRange(clang_getDiagnosticRange(d, 0));
          if (!(r.end < r.start)) p.range = r;
        }
        if (p.range.end == p.range.start) ++p.range.end.column;
      } else {
        // An error in an included file: report it at the top of the document, naming the file.
        std::string file = expansionFile(loc);
        unsigned line = 0;
        clang_getExpansionLocation(loc, nullptr, &line, nullptr, nullptr);
        if (file.empty()) {
          p.origin = ParseProblem::Origin::CommandLine;
        } else {
          p.origin = ParseProblem::Origin::IncludedFile;
          p.file = std::move(file);
          p.line = line;
        }
        if (sev == CXDiagnostic_Warning) {
          clang_disposeDiagnostic(d);
          continue;  // warnings of other files are not this document's business
        }
        p.range = Range{{0, 0}, {0, 1}};
      }
      out.push_back(std::move(p));
    }
    clang_disposeDiagnostic(d);
  }
  return out;
}

}  // namespace perfhat::analysis
