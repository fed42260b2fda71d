#include "server/feedback/file_source.h"

#include <fstream>
#include <sstream>

#include "common/called_from.h"
#include "common/function_key.h"

namespace perfhat::feedback {

const char* toString(FetchStatus s) {
  switch (s) {
    case FetchStatus::Ok:
      return "ok";
    case FetchStatus::Unreachable:
      return "unreachable";
    case FetchStatus::Unauthorized:
      return "unauthorized";
    case FetchStatus::ServerError:
      return "server error";
    case FetchStatus::BadResponse:
      return "bad response";
  }
  return "?";
}

FileSource::FileSource(std::string path) : path_(std::move(path)) {}

std::optional<std::string> FileSource::load() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) {
    MutexLock lock(mu_);
    error_ = "cannot open feedback file '" + path_ + "'";
    return error_;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto err = loadText(ss.str());
  if (err) {
    MutexLock lock(mu_);
    error_ = "feedback file '" + path_ + "': " + *err;
    return error_;
  }
  return std::nullopt;
}

std::optional<std::string> FileSource::loadText(std::string_view text) {
  BatchGetResponse parsed;
  try {
    parsed = parseBatchGetResponse(text);
  } catch (const std::exception& e) {
    MutexLock lock(mu_);
    error_ = e.what();
    return error_;
  }
  MutexLock lock(mu_);
  items_ = std::move(parsed.items);
  by_key_.clear();
  by_name_.clear();
  for (size_t i = 0; i < items_.size(); ++i) {
    by_key_.emplace(items_[i].key, i);
    if (!items_[i].mangled.empty()) by_key_.emplace(items_[i].mangled, i);
    by_name_.emplace(qualifiedName(items_[i].key), i);
  }
  error_.reset();
  ++generation_;
  return std::nullopt;
}

size_t FileSource::size() const {
  MutexLock lock(mu_);
  return items_.size();
}

FetchResult FileSource::batchGet(const std::vector<std::string>& keys) {
  MutexLock lock(mu_);
  FetchResult r;
  if (error_ && items_.empty()) {
    r.status = FetchStatus::BadResponse;
    r.error = *error_;
    return r;
  }
  std::vector<bool> taken(items_.size());
  const auto* items = &items_;  // the lambda runs here, under mu_
  auto take = [&](size_t i) {
    if (!taken[i]) {
      taken[i] = true;
      r.response.items.push_back((*items)[i]);
    }
  };
  for (const auto& k : keys) {
    if (auto it = by_key_.find(k); it != by_key_.end()) {
      take(it->second);
      continue;
    }
    // Name-level matching happens in the analysis; offer it every item of the same name (for a
    // `virtual:` key every item of the same member signature: a dataset is small).
    if (k.rfind(kVirtualKeyPrefix, 0) == 0) {
      std::string m = memberSignature(normalizeFunctionKey(k.substr(kVirtualKeyPrefix.size())));
      bool any = false;
      for (size_t i = 0; i < items_.size() && !m.empty(); ++i)
        if (memberSignature(items_[i].key) == m) {
          take(i);
          any = true;
        }
      if (!any) r.response.missing.push_back(k);
      continue;
    }
    if (k.rfind(kCalleesKeyPrefix, 0) == 0) {  // every item called from that caller
      std::string caller = normalizeFunctionKey(k.substr(kCalleesKeyPrefix.size()));
      bool any = false;
      for (size_t i = 0; i < items_.size(); ++i)
        if (calledFrom(items_[i], caller)) {
          take(i);
          any = true;
        }
      if (!any) r.response.missing.push_back(k);
      continue;
    }
    auto [b, e] = by_name_.equal_range(qualifiedName(k));
    if (b == e) r.response.missing.push_back(k);
    for (auto it = b; it != e; ++it) take(it->second);
  }
  r.response.cursor = std::to_string(generation_);
  return r;
}

ChangesResult FileSource::changes(const std::string& cursor) {
  MutexLock lock(mu_);
  ChangesResult r;
  r.cursor = std::to_string(generation_);
  // A reload replaces the whole dataset: everything may have changed.
  r.all = !cursor.empty() && cursor != r.cursor;
  return r;
}

}  // namespace perfhat::feedback
