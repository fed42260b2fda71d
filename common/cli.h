// Every binary's command line through CLI11, with one behaviour: `-h`/`--help` prints the
// options and exits 0, `--version` prints "NAME VERSION" and exits 0, and a wrong command line
// (unknown flag, missing or malformed value, a rule of the binary broken) prints
// "NAME: what is wrong" and "(see --help)" on stderr and exits 2.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "common/result.h"

namespace perfhat::cli {

// An application named `name` (as the binary is called) answering --version with `version`.
// Single-valued options repeated on the command line take the last value, as flags of a shell
// script do.
inline void configure(CLI::App& app, const std::string& version) {
  app.set_version_flag("--version", app.get_name() + " " + version);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// A repeatable option: each occurrence takes one value, and all are kept.
inline CLI::Option* repeatable(CLI::Option* o) {
  return o->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// Validators with messages that say what was expected.
inline CLI::Validator positiveInteger() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const Result<unsigned long long> n = parseUnsigned(v);
        return n.ok() && n.value > 0 ? "" : "expects a positive integer, got '" + v + "'";
      },
      "N>0");
}
inline CLI::Validator positiveNumber() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const Result<double> x = parseNonNegative(v);
        return x.ok() && x.value > 0 ? "" : "expects a positive number, got '" + v + "'";
      },
      "X>0");
}
inline CLI::Validator nonNegativeNumber() {
  return CLI::Validator([](std::string& v) { return parseNonNegative(v).error; }, "X>=0");
}

[[noreturn]] inline void usageError(const std::string& binary, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n(see --help)\n", binary.c_str(), message.c_str());
  std::exit(2);
}
[[noreturn]] inline void usageError(const CLI::App& app, const std::string& message) {
  usageError(app.get_name(), message);
}

// Parses the command line; exits for --help, --version and errors (see above).
inline void parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    std::exit(0);
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    std::exit(0);
  } catch (const CLI::CallForVersion&) {
    std::cout << app.version() << "\n";
    std::exit(0);
  } catch (const CLI::ParseError& e) {
    usageError(app, e.what());
  }
}

}  // namespace perfhat::cli
