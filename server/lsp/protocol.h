// LSP 3.17 protocol types perfhat uses, each with to_json/from_json beside it (clangd style:
// not a complete mirror of the spec, only the parts the server reads or writes).
//
// from_json throws nlohmann::json exceptions on missing required fields or wrong types; the
// server turns them into InvalidParams errors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::lsp {

using json = nlohmann::json;

// Line and character in the negotiated position encoding (UTF-16 code units by default).
struct Position {
  int line = 0;
  int character = 0;
  bool operator==(const Position&) const = default;
};
void to_json(json& j, const Position& v);
void from_json(const json& j, Position& v);

struct Range {
  Position start;
  Position end;
  bool operator==(const Range&) const = default;
};
void to_json(json& j, const Range& v);
void from_json(const json& j, Range& v);

struct TextDocumentIdentifier {
  std::string uri;
};
void from_json(const json& j, TextDocumentIdentifier& v);

struct TextDocumentItem {
  std::string uri;
  std::string language_id;
  int version = 0;
  std::string text;
};
void from_json(const json& j, TextDocumentItem& v);

struct VersionedTextDocumentIdentifier {
  std::string uri;
  int version = 0;
};
void from_json(const json& j, VersionedTextDocumentIdentifier& v);

// A full replacement when `range` is absent, an incremental edit otherwise.
struct TextDocumentContentChangeEvent {
  std::optional<Range> range;
  std::string text;
};
void from_json(const json& j, TextDocumentContentChangeEvent& v);

struct DidOpenTextDocumentParams {
  TextDocumentItem text_document;
};
void from_json(const json& j, DidOpenTextDocumentParams& v);

struct DidChangeTextDocumentParams {
  VersionedTextDocumentIdentifier text_document;
  std::vector<TextDocumentContentChangeEvent> content_changes;
};
void from_json(const json& j, DidChangeTextDocumentParams& v);

struct TextDocumentPositionParams {
  TextDocumentIdentifier text_document;
  Position position;
};
void from_json(const json& j, TextDocumentPositionParams& v);

// didClose, codeLens, documentSymbol-like requests: just the document.
struct DocumentParams {
  TextDocumentIdentifier text_document;
};
void from_json(const json& j, DocumentParams& v);
using DidCloseTextDocumentParams = DocumentParams;

// inlayHint, codeAction (whose context perfhat does not read): a document and a range.
struct RangeParams {
  TextDocumentIdentifier text_document;
  Range range;
};
void from_json(const json& j, RangeParams& v);
using InlayHintParams = RangeParams;
using CodeActionParams = RangeParams;

struct ExecuteCommandParams {
  std::string command;
  json arguments = json::array();
};
void from_json(const json& j, ExecuteCommandParams& v);

struct CancelParams {
  json id;
};
void from_json(const json& j, CancelParams& v);

// The client capabilities the server acts on, digested into flags (clangd style).
struct ClientCapabilities {
  bool inlay_hint = false;
  bool inlay_hint_refresh = false;
  bool code_lens_refresh = false;
  bool work_done_progress = false;
  bool hover_markdown = true;
  bool utf8_positions = false;  // client offered "utf-8" in general.positionEncodings
  bool show_message = true;
  bool show_document = false;  // window/showDocument
};
void from_json(const json& j, ClientCapabilities& v);

struct InitializeParams {
  std::optional<std::string> root_uri;
  std::optional<std::string> root_path;
  json initialization_options;  // perfhat settings from the editor (null when absent)
  ClientCapabilities capabilities;
};
void from_json(const json& j, InitializeParams& v);

struct InlayHint {
  Position position;
  std::string label;
  int kind = 0;  // 0: none; 1 type, 2 parameter (perfhat uses none)
  std::string tooltip;
  bool padding_left = false;
  bool padding_right = false;
};
void to_json(json& j, const InlayHint& v);
void from_json(const json& j, InlayHint& v);

struct Hover {
  std::string markdown;
  std::optional<Range> range;
  bool markdown_kind = true;  // false: plaintext
};
void to_json(json& j, const Hover& v);

struct Command {
  std::string title;
  std::string command;  // "" = display-only lens
  json arguments = json::array();
};
void to_json(json& j, const Command& v);

struct CodeLens {
  Range range;
  Command command;
};
void to_json(json& j, const CodeLens& v);

struct Diagnostic {
  Range range;
  int severity = 2;
  std::string code;
  std::string source = "perfhat";
  std::string message;
};
void to_json(json& j, const Diagnostic& v);
void from_json(const json& j, Diagnostic& v);

struct PublishDiagnosticsParams {
  std::string uri;
  std::optional<int> version;
  std::vector<Diagnostic> diagnostics;
};
void to_json(json& j, const PublishDiagnosticsParams& v);

struct TextEdit {
  Range range;
  std::string new_text;
};
void to_json(json& j, const TextEdit& v);

struct CodeAction {
  std::string title;
  std::string kind;
  std::string uri;              // document the edits apply to
  std::vector<TextEdit> edits;  // as a WorkspaceEdit on `uri`
  std::optional<Command> command;
};
void to_json(json& j, const CodeAction& v);

enum class MessageType { Error = 1, Warning = 2, Info = 3, Log = 4 };
struct ShowMessageParams {
  MessageType type = MessageType::Info;
  std::string message;
};
void to_json(json& j, const ShowMessageParams& v);

// $/progress payloads (WorkDoneProgressBegin / Report / End).
struct WorkDoneProgress {
  enum class Kind { Begin, Report, End } kind = Kind::Begin;
  std::string title;    // begin
  std::string message;  // all
  std::optional<int> percentage;
};
void to_json(json& j, const WorkDoneProgress& v);

// file:// URI <-> absolute path (percent-decoding / -encoding).
std::optional<std::string> uriToPath(std::string_view uri);
std::string pathToUri(std::string_view path);

}  // namespace perfhat::lsp
