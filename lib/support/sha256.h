// SHA-256 of a file (for the report's source fingerprint).
#pragma once

#include <string>

namespace tt {

// Lower-case hex digest of the file's bytes. Throws tt::Error(BadInput) when unreadable.
std::string sha256_file(const std::string& path);
std::string sha256_bytes(const std::string& bytes);

}  // namespace tt
