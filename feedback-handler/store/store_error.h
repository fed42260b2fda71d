// The one error the feedback store throws, from either backend: its message says what failed
// (the backend's own words included), so the HTTP layer can answer 503 with it.
#pragma once

#include <stdexcept>

namespace perfhat::handler {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace perfhat::handler
