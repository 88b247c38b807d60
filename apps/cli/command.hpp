#pragma once
// Subcommands register themselves: each apps/cli/<name>.cpp defines one with
// TESSERA_CLI_COMMAND, so adding a command never edits main.cpp.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace tessera::cli {

// setup adds the subcommand's options to `sub` and returns the action run when it is chosen.
using Setup = std::function<std::function<int()>(CLI::App& sub)>;

struct Command {
  std::string name, help;
  Setup setup;
  int order;
};

std::vector<Command>& commands();

struct Registrar {
  Registrar(std::string name, std::string help, int order, Setup setup) {
    commands().push_back({std::move(name), std::move(help), std::move(setup), order});
  }
};

}  // namespace tessera::cli

#define TESSERA_CLI_CONCAT2(a, b) a##b
#define TESSERA_CLI_CONCAT(a, b) TESSERA_CLI_CONCAT2(a, b)
#define TESSERA_CLI_COMMAND(name, help, order, setup) \
  static ::tessera::cli::Registrar TESSERA_CLI_CONCAT(tessera_cli_cmd_, __LINE__)(name, help, order, setup)
