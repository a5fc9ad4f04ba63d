#pragma once
// Runs the gemmlab binary and captures its exit code and output.
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

struct CliResult {
  int code = -1;
  std::string out;
  int lines() const { return int(std::count(out.begin(), out.end(), '\n')); }
};

inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  std::string cmd = env + " " GEMMLAB_BINARY " " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}
