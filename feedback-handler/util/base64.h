// Base64 (RFC 4648, standard alphabet, padded) for sketch blobs in the inter-handler export.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace perfhat::handler {

std::string base64Encode(std::string_view bytes);
// nullopt on invalid characters or length.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace perfhat::handler
