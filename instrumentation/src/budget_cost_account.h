// What the collection budget charges itself for one planning window: the collector thread's own
// CPU time (the tick, the export and its serialisation, the status post, everything it does per
// tick) plus what the probes cost on the application threads, estimated from the window's counts
// and the calibrated per-event costs. The governor compares this with the budget, so each part
// the collector pays for must be in it (bench/README.md compares it with perf's share).
#pragma once

#include <cstddef>
#include <vector>

#include "budget_planner.h"

namespace perfhat::budget {

// One window's counts, as the controller took them.
struct WindowCounts {
  double detected = 0;  // calls at armed sites the plan governs (each pays detection)
  // Calls recorded other than request roots (each pays a report in the probe). A recorded
  // root's record is in request_roots_taken's price: a timed root's intervals hold both its
  // context and its record.
  double recorded = 0;
  // Calls at sites the budget records in full that were not recorded either (the request
  // sampler left them out): they run the full counted path.
  double counted_unrecorded = 0;
  double request_roots_taken = 0;  // request roots that opened a request context
  // Entries to Probe::begin that left it unrecorded (the redraw after a capped skip run, a
  // request root passed over), in CPU seconds: the timed ones' sum × the timing period.
  double passed_entries_s = 0;
  // Probe entries on cache lines that went cold since the site's last call (coldEntries()).
  double cold_entries = 0;
  double measuring_s = 0;      // probing: the re-arm windows' detection, spread (the controller's)
  double sample_cpu_s = 0;     // stack samples' handlers, timed inside the handler
  double collector_cpu_s = 0;  // the collector thread's own CPU over the window
};

// The window's charge, part by part (seconds of CPU).
struct CostParts {
  double detect_s = 0, report_s = 0, counted_s = 0, requests_s = 0, passed_s = 0, cold_s = 0,
         measuring_s = 0, samples_s = 0, collector_s = 0;
  // On the application threads (the probes and the sampler's handlers).
  double probes_s() const {
    return detect_s + report_s + counted_s + requests_s + passed_s + cold_s + measuring_s +
           samples_s;
  }
  double total_s() const { return probes_s() + collector_s; }
};

// `report_in_probe_s`: a recorded call's report as the probe pays it (the export's share is in
// the collector's CPU, not priced again here); `request_s`: a taken request root's context. Both
// are the in-situ prices when the probes timed enough calls (budget_insitu.h).
CostParts accountWindow(const WindowCounts& w, const Costs& c, double report_in_probe_s,
                        double request_s);

// Probe entries on cold cache lines in a window: a site's slot (its thread's counters and skip
// run) is touched once per call, and between two requests a worker thread runs enough of the
// program to evict it, so each site's first call in a request finds it cold: per armed site, at
// most one cold entry per request root (taken or passed over). `site_calls`: each armed site's
// calls in the window on threads that serve requests (SiteActivity::on_request_threads: a
// background thread's loop calls its sites warm, however many requests other threads serve). A
// program without request roots calls its sites in loops, warm: none.
double coldEntries(const std::vector<double>& site_calls, double request_roots);

}  // namespace perfhat::budget
