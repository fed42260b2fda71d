// The --listen HOST:PORT option of the sample's servers (agile-service, agile-userdir).
#pragma once

#include <string>

#include "common/cli.h"
#include "samples/agile/cli.h"

namespace agile {

// Adds --listen into `text`, whose value is its default (port 0 picks a free port).
inline void addListenOption(CLI::App& app, std::string& text) {
  app.add_option("--listen", text,
                 "HOST:PORT to serve on; port 0 picks a free one (printed on stdout)")
      ->capture_default_str();
}

// The address --listen named, once parsed; a usage error (exit 2) when it is not HOST:PORT.
inline cli::HostPort listenAddress(const CLI::App& app, const std::string& text) {
  const auto listen = cli::parseHostPort(text);
  if (!listen) perfhat::cli::usageError(app, "--listen expects HOST:PORT, got '" + text + "'");
  return *listen;
}

}  // namespace agile
