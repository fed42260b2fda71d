// perfhat-plan: planning what to collect.
//   budget    which event classes to trace and at what rate to sample the rest (seed 002)
//   variants  which probes each deployed variant carries (seed 000)
//   simulate  what a release's variants would have seen of a full trace (seed 000's award
//   functions)
#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "plan/commands.h"

#ifndef PERFHAT_VERSION
#define PERFHAT_VERSION "0.0.0"
#endif

namespace {

// A subcommand that answers --version as the binary does.
CLI::App* subcommand(CLI::App& app, const std::string& name, const std::string& about) {
  CLI::App* sub = app.add_subcommand(name, about);
  sub->set_version_flag("--version", app.version());
  return sub;
}

// The probe inventory that variants and calibrate both draw from.
void addUnitsOption(CLI::App* sub, std::string& path) {
  sub->add_option("--units", path, "one function key a line ('#' comments)")->required();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace perfhat::plan;
  CLI::App app{"perfhat-plan: plan what perfhat collects under an overhead budget", "perfhat-plan"};
  app.set_version_flag("--version", std::string("perfhat-plan ") + PERFHAT_VERSION);
  app.require_subcommand(1);

  BudgetOptions budget;
  CLI::App* b = subcommand(
      app, "budget",
      "Which event classes to trace and which to sample under a budget of reported events "
      "(Metz, Lencevicius, Gonzalez). Prints JSON: traced set, per-class rates, information "
      "value, the 5 best alternatives.");
  b->add_option("--classes", budget.classes_path,
                "JSON array of {name, frequency_hz, duty_ratio, weight, min_rate_hz}")
      ->required();
  b->add_option("--max-f", budget.max_f, "budget: reported events per second (MaxF)");
  b->add_option("--max-overhead", budget.max_overhead,
                "budget as extra CPU share, e.g. 0.05 for 5 % (needs the two costs)");
  b->add_option("--detect-cost-ns", budget.detect_cost_ns, "measured cost of detecting an event");
  b->add_option("--report-cost-ns", budget.report_cost_ns, "measured cost of reporting an event");
  b->add_flag("--probing", budget.probing,
              "classes are traced or covered by one periodic probe (exact up to 20 classes, "
              "the 1/2-approximation above)");
  b->add_flag("--local-search", budget.local_search,
              "with --probing above 20 classes: improve the approximation by add/drop/swap moves");

  VariantsOptions variants;
  CLI::App* v =
      subcommand(app, "variants",
                 "Distribute probes across program variants, at most --h-bound each (Diep, Elbaum, "
                 "Cohen). Prints the release manifest JSON.");
  addUnitsOption(v, variants.units_path);
  v->add_option("--h-bound", variants.h_bound, "probes per variant")->required();
  v->add_option("--variants", variants.variants, "number of variants")->required();
  v->add_option("--strategy", variants.strategy,
                "p (pattern), r (random), rb (random balanced), grb (grouped RB with memory, "
                "default), rbm (RB with memory), rbml (RB memory-less)");
  v->add_option("--groups", variants.groups_path,
                "grb: JSON {\"function key\": execution count} for frequency quartile groups");
  v->add_option("--history", variants.history_dir,
                "directory of earlier releases; the new one is added to it");
  v->add_option("--seed", variants.seed, "random seed (default: fresh, printed in the manifest)");
  v->add_option("--release", variants.release, "release id (default: next number in the history)");
  v->add_option("--replicas", variants.replicas,
                "replicas to assign variants to, round-robin (default: one per variant)");

  SimulateOptions simulate;
  CLI::App* s = subcommand(
      app, "simulate",
      "Replay a full-trace corpus (lines SITE<TAB>FUNCTION KEY) through a manifest's variant "
      "masks; prints coverage, top hot-spot identification and overhead against full tracing, "
      "for the variants, Dynamic (Bernoulli) sampling and Dynamic on top of the variants.");
  s->add_option("--manifest", simulate.manifest_path, "release manifest of perfhat-plan variants")
      ->required();
  s->add_option("--trace", simulate.trace_path, "full trace: one SITE<TAB>FUNCTION KEY a line")
      ->required();
  s->add_option("--top-percent", simulate.top_percent,
                "hot spots: this share of the units (default 5)");
  s->add_option(
      "--max-skip", simulate.max_skip,
      "Dynamic: uniform skip in [0, N] records between samples (default 99, the paper's)");
  s->add_option("--seed", simulate.seed, "random seed of the Dynamic sampling");

  CalibrateOptions calibrate;
  CLI::App* c = subcommand(
      app, "calibrate",
      "Find the h_bound that meets a target overhead: run the benchmark command without probes, "
      "then with k random units probed (PERFHAT_VARIANT_MANIFEST), bisecting k. Prints JSON.");
  addUnitsOption(c, calibrate.units_path);
  c->add_option("--target-overhead", calibrate.target_overhead,
                "extra CPU share allowed, e.g. 0.05 for 5 %")
      ->required();
  c->add_option("--repetitions", calibrate.repetitions,
                "runs per measurement, the median counts (default 3)");
  c->add_option("--timeout", calibrate.timeout_s, "seconds per run (default 600)");
  c->add_option("--seed", calibrate.seed, "random seed of the units drawn");
  c->add_option("--work-dir", calibrate.work_dir, "where the trial manifest goes (default /tmp)");
  c->add_option("--baseline", calibrate.baseline_command,
                "the benchmark built without probes (default: the command with PERFHAT_ENABLED=0)");
  c->add_option("command", calibrate.command, "the benchmark command (after --)")->required();

  perfhat::cli::parse(app, argc, argv);
  if (b->parsed()) return runBudget(budget);
  if (s->parsed()) return runSimulate(simulate);
  if (c->parsed()) return runCalibrate(calibrate);
  return runVariants(variants);
}
