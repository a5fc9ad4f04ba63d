#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace gemmlab {

// $GEMMLAB_CACHE_DIR, else $XDG_CACHE_HOME/gemmlab, else ~/.cache/gemmlab; created on demand.
std::filesystem::path cache_dir();

// Writes through a temporary file in the same folder and renames it into place, so a reader
// never sees a half-written file. Throws RuntimeError on failure.
void write_file_atomic(const std::filesystem::path& path, const std::string& contents);

// An output path whose folder exists (empty: nothing to write); UsageError naming the folder otherwise,
// so that a command refuses before it works rather than after.
void check_output_path(const std::string& path);

// The whole file, or nothing if it cannot be read.
std::optional<std::string> read_file(const std::filesystem::path& path);

// 64-bit FNV-1a, printed as 16 hex digits: a stable key for cache entries across runs and hosts.
std::string stable_hash(const std::string& data);

}  // namespace gemmlab
