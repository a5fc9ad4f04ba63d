#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "gemmlab/error.hpp"
#include "common/files.hpp"

namespace gemmlab {

std::filesystem::path cache_dir() {
  std::filesystem::path dir;
  if (const char* d = std::getenv("GEMMLAB_CACHE_DIR"); d && *d)
    dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    dir = std::filesystem::path(x) / "gemmlab";
  else if (const char* h = std::getenv("HOME"); h && *h)
    dir = std::filesystem::path(h) / ".cache" / "gemmlab";
  else
    dir = std::filesystem::temp_directory_path() / "gemmlab-cache";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw RuntimeError("cannot create cache folder " + dir.string() + ": " + ec.message());
  return dir;
}

void write_file_atomic(const std::filesystem::path& path, const std::string& contents) {
  auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto tmp = dir / ("." + path.filename().string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(contents.data(), std::streamsize(contents.size()));
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      throw RuntimeError("cannot write " + path.string());
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw RuntimeError("cannot write " + path.string() + ": " + ec.message());
  }
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string stable_hash(const std::string& data) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : data) h = (h ^ ch) * 0x100000001b3ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

void check_output_path(const std::string& path) {
  if (path.empty()) return;
  auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw UsageError("cannot write " + path + ": folder " + dir.string() + " does not exist");
}

}  // namespace gemmlab
