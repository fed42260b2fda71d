// perfhat-experiment: the controlled experiment of the PerformanceHat paper (§V) for real
// participants — study design, session runner (with the language-server proxy), the control
// group's dashboard, analysis and report — and the IDE-overhead study (§VI).
// Exit codes: 0 success, 1 runtime failure (e.g. the handler is unreachable), 2 bad input.
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "experiment/commands.h"
#include "experiment/deploy.h"
#include "experiment/lsp_proxy.h"
#include "experiment/measurements.h"
#include "experiment/overhead.h"

namespace ex = perfhat::experiment;

int main(int argc, char** argv) {
  CLI::App app{
      "perfhat-experiment: design, analyse and report the controlled experiment of the "
      "PerformanceHat paper (treatment: perfhat in the editor; control: a dashboard)",
      "perfhat-experiment"};
  app.set_version_flag("--version", std::string("perfhat-experiment ") + PERFHAT_VERSION);
  app.require_subcommand(1);

  ex::StatsOptions stats;
  auto* s = app.add_subcommand("stats",
                               "Per task and measure: n, mean, sd, Shapiro-Wilk, "
                               "Mann-Whitney U, Cliff's delta, A12 (JSON on stdout)");
  s->add_option("--csv", stats.csv, "measurements: participant,group,task,measure,seconds")
      ->required();

  ex::DesignOptions design;
  auto* d = app.add_subcommand("design",
                               "Assign the study's participants to treatment and "
                               "control, balanced on experience and skill (JSON)");
  d->add_option("--study", design.study, "study definition (JSON, see docs/experiment.md)")
      ->required();
  d->add_option("--seed", design.seed, "random seed; the same seed gives the same assignment")
      ->required();

  ex::ReportOptions report;
  auto* r = app.add_subcommand("report",
                               "Write report.md and report.html (Table II, box plots, "
                               "raw data and design) from a study's measurements");
  r->add_option("--csv", report.csv, "measurements CSV (as for stats)")->required();
  r->add_option("--study", report.study, "study definition (JSON)")->required();
  r->add_option("--seed", report.seed, "seed of the design to embed")->default_val(1);
  r->add_option("--out", report.out_dir, "output directory")->default_val("experiment-report");

  ex::DashboardOptions dash;
  auto* b = app.add_subcommand("dashboard",
                               "Serve the control group's dashboard: per-function "
                               "average execution times from a perfhat handler");
  b->add_option("--handler", dash.handler, "handler URL, e.g. http://127.0.0.1:4319")->required();
  b->add_option("--token", dash.token, "bearer token for a deployed handler")
      ->envname("PERFHAT_TOKEN");
  b->add_option("--listen", dash.listen, "address:port to serve on")->default_val("127.0.0.1:8080");

  ex::RunOptions run;
  auto* u = app.add_subcommand("run",
                               "Run one participant's session: briefings, a fresh copy of "
                               "the sample per task, timers, FE/RCA; resumable");
  u->add_option("--study", run.study, "study definition (JSON)")->required();
  u->add_option("--seed", run.seed, "seed of the design (decides the participant's group)")
      ->required();
  u->add_option("--participant", run.participant, "participant id from the study")->required();
  u->add_option("--session", run.session_dir, "session folder (event log, task copies, CSV)")
      ->required();

  std::string proxy_session;
  std::vector<std::string> proxy_command;
  auto* x = app.add_subcommand(
      "lsp-proxy",
      "Run the language server for a treatment participant (the editor starts this): "
      "passes LSP through and logs regression warnings and hovers as session events");
  x->add_option("--session", proxy_session, "the participant's session folder (as for run)")
      ->required();
  x->add_option("server", proxy_command, "-- perfhat-lsp ARGS...")->required();

  ex::DeployOptions deploy;
  auto* h = app.add_subcommand(
      "deploy",
      "Hot-deploy and run the performance test (both groups): build the participant's changed "
      "sample, run it instrumented under the sample workload, print response times");
  h->add_option("--session", deploy.session_dir,
                "the participant's session folder (the task's copy is found in its log)");
  h->add_option("--task", deploy.task, "task id (default: the task running in the session)");
  h->add_option("--copy", deploy.copy,
                "the changed sample (…/samples/agile) instead of the session's copy");
  h->add_option("--build", deploy.build_dir,
                "the study's perfhat build folder (Ninja; agile-userdir and agile-workload built)")
      ->required();
  h->add_option("--handler", deploy.handler, "OTLP endpoint of the study's handler (else none)")
      ->envname("PERFHAT_ENDPOINT");
  h->add_option("--token", deploy.token, "bearer token for the handler")->envname("PERFHAT_TOKEN");
  h->add_option("--service-version", deploy.version,
                "service.version of the copy (default deploy-TASK)");
  h->add_option("--rate", deploy.rate, "workload requests per second")->default_val(20);
  h->add_option("--duration", deploy.duration_s, "workload seconds")->default_val(30);
  h->add_option("--requests", deploy.requests, "stop after this many requests (0: no limit)")
      ->default_val(0);
  h->add_option("--workers", deploy.workers, "concurrent workload sessions")->default_val(4);
  h->add_option("--jobs", deploy.jobs, "compiler processes at once")->default_val(2);

  ex::OverheadOptions overhead;
  auto* o = app.add_subcommand("overhead",
                               "IDE-overhead study (paper VI): perfhat-lsp analysis "
                               "time, full project and single file, cold and warm");
  o->add_option("--compile-commands", overhead.compile_commands,
                "compile database (folder or file): the full project")
      ->required();
  o->add_option("--file", overhead.file, "the single file (default: the database's first)");
  o->add_option("--repeat", overhead.repeat, "repetitions")->default_val(10);
  o->add_option("--full-repeat", overhead.full_repeat,
                "full-project repetitions (default: as --repeat; 0: single file only)");
  o->add_flag("!--cache-only", overhead.with_no_cache,
              "skip the scenarios without the feedback cache (PERFHAT_CACHE_MAX_ENTRIES=0)");
  o->add_option("--name", overhead.name, "name of the code base in the output");
  o->add_option("--out", overhead.out_dir, "output folder (overhead.json, overhead.svg)")
      ->default_val("overhead");
  o->add_option("server", overhead.server, "-- perfhat-lsp ARGS... (e.g. --feedback-file F)")
      ->required();

  perfhat::cli::parse(app, argc, argv);
  try {
    if (s->parsed()) return ex::runStats(stats, std::cout);
    if (d->parsed()) return ex::runDesign(design, std::cout);
    if (r->parsed()) return ex::runReport(report, std::cout);
    if (b->parsed()) return ex::runDashboard(dash, std::cout);
    if (u->parsed()) return ex::runRun(run, std::cout);
    if (x->parsed()) return ex::runLspProxy(proxy_session, proxy_command);
    if (o->parsed()) return ex::runOverhead(overhead, std::cout);
    if (h->parsed()) return ex::runDeploy(deploy, std::cout);
  } catch (const ex::InputError& e) {
    std::cerr << "perfhat-experiment: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "perfhat-experiment: " << e.what() << "\n";
    return 1;
  }
  return 2;
}
