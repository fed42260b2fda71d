// The dashboard's single page (HTML, CSS and JavaScript inline; no external resources): a
// searchable table of per-function average execution times and a time chart of the selected
// function, fed by the dashboard server's /api/functions and /api/series.
#pragma once

#include <string_view>

namespace perfhat::experiment {

std::string_view dashboardPage();

}  // namespace perfhat::experiment
