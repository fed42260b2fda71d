// `perfhat-experiment deploy`: the paper's "hot-deploy and run the performance test" command,
// for both groups. It builds the participant's changed copy of the sample service (the task
// folder `run` prepared) with the flags and link line of the sample's own build, starts it
// instrumented (libperfhat, exporting to the study's handler when one is given) beside the
// sample's user directory, drives it with the sample's workload generator and prints the
// response times per endpoint.
//
// Only the sample's translation units the participant changed are compiled (into
// TASK_DIR/.deploy/): a file whose source and every sample header it includes (the build's
// Ninja dependency log says which) are identical to the study's checkout reuses the build's
// object, and one compiled by an earlier deploy is not compiled again while unchanged.
// Everything else (libperfhat, the OTLP exporter, cpp-httplib) is linked from the build.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perfhat::experiment {

struct DeployOptions {
  std::string session_dir;  // the participant's session (as for `run`)
  std::string task;         // default: the task running in the session (else the last prepared)
  std::string copy;         // the changed sample; default: the task's copy from the session log
  std::string build_dir;    // the study's perfhat build (compile_commands.json, Ninja)
  std::string handler;      // OTLP endpoint of the study's handler; empty: export nothing
  std::string token;        // bearer token for it
  std::string version;      // service.version of the deployed copy; default deploy-TASK
  double rate = 20;         // workload: requests per second
  int duration_s = 30;      // workload: seconds
  int requests = 0;         // workload: stop after this many (0: the duration decides)
  int workers = 4;          // workload: concurrent sessions
  int jobs = 2;             // compiler processes at once
};

// One translation unit of the sample as the study's build compiles it, redirected to the copy.
struct CompileStep {
  std::string source;                // in the copy
  std::string object;                // in TASK_DIR/.deploy/obj
  std::string directory;             // where the command runs (the build folder)
  std::vector<std::string> command;  // compiler argv
  std::string original_object;       // the build's object this replaces on the link line
  std::string original_source;       // the sample's file in the study's checkout
};

// The sample's compile steps from the build's compile_commands.json: every source of the
// libraries and the executable the sample service is made of, with the copy's folder first on
// the include path (the sources include "samples/agile/…"), the dependency-file flags dropped
// and the output in `obj_dir`. Throws InputError when the copy does not mirror the sample.
std::vector<CompileStep> sampleCompileSteps(const std::string& build_dir, const std::string& copy,
                                            const std::string& obj_dir);

// The build's link command of the sample service with its sample objects and library replaced
// by `steps`' objects and the output by `output`.
std::vector<std::string> sampleLinkCommand(const std::string& build_dir,
                                           const std::vector<CompileStep>& steps,
                                           const std::string& output);

// Builds, runs the workload and returns the workload's report (per route: count, errors,
// mean_ms, p50_ms, p99_ms). Throws DeployBuildError when the copy does not compile or link.
struct DeployBuildError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
nlohmann::json deploySample(const DeployOptions& o, std::ostream& progress);

int runDeploy(const DeployOptions& o, std::ostream& out);

}  // namespace perfhat::experiment
