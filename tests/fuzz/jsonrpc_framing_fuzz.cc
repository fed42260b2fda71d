// Fuzzes the LSP input path: Content-Length framing (fed in chunk sizes taken from the input),
// JSON-RPC classification, and the protocol params the server parses for each method.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/lsp/jsonrpc.h"
#include "server/lsp/protocol.h"
#include "server/lsp/transport.h"

namespace {

using namespace perfhat::lsp;

void parseParams(const Message& m) {
  try {
    const json& p = m.params;
    if (m.method == "initialize")
      (void)p.get<InitializeParams>();
    else if (m.method == "textDocument/didOpen")
      (void)p.get<DidOpenTextDocumentParams>();
    else if (m.method == "textDocument/didChange")
      (void)p.get<DidChangeTextDocumentParams>();
    else if (m.method == "textDocument/hover")
      (void)p.get<TextDocumentPositionParams>();
    else if (m.method == "textDocument/inlayHint")
      (void)p.get<InlayHintParams>();
    else if (m.method == "textDocument/codeAction")
      (void)p.get<CodeActionParams>();
    else if (m.method == "workspace/executeCommand")
      (void)p.get<ExecuteCommandParams>();
    else if (m.method == "$/cancelRequest")
      (void)p.get<CancelParams>();
    else if (m.method == "textDocument/didOpen")
      (void)uriToPath(p.value("uri", ""));
  } catch (const json::exception&) {
    // Expected for bad params: the server answers InvalidParams.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  FrameParser parser(FramingLimits{4096, 1 << 20});
  // The first byte picks the read size, so split headers and bodies are exercised.
  size_t chunk = in.empty() ? 1 : (static_cast<unsigned char>(in[0]) % 64) + 1;
  for (size_t off = 0; off < in.size(); off += chunk) {
    parser.feed(in.substr(off, chunk));
    while (auto f = parser.next()) {
      if (!f->ok) continue;
      Incoming msg = parseMessage(f->body);
      if (msg.error_reply) (void)msg.error_reply->dump();
      if (msg.message) parseParams(*msg.message);
    }
  }
  // The whole input as one body, too.
  Incoming whole = parseMessage(in);
  if (whole.message) parseParams(*whole.message);
  (void)uriToPath(in);
  return 0;
}
