#pragma once
// A subcommand of the command line: its options are declared when it is added to the app, and
// `run` carries out the command once the arguments have parsed (the full command line is passed
// for the results' metadata). Returns the exit code (main.cpp lists them).
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace gemmlab::cli {

struct Command {
  CLI::App* app = nullptr;
  std::function<int(const std::string& command_line)> run;
};

Command add_stress(CLI::App& app);
Command add_choose(CLI::App& app);

}  // namespace gemmlab::cli
