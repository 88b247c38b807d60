// tessera: the command-line front end. Subcommands live in their own files (command.hpp).
#include <algorithm>
#include <cstdio>
#include <memory>

#include "command.hpp"
#include "tessera/core/error.hpp"

namespace tessera::cli {
std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}
}  // namespace tessera::cli

int main(int argc, char** argv) {
  using namespace tessera::cli;
  CLI::App app{"tessera: IO-aware graph learning (GNN operators, graph kernels, planning)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessera 0.1.0");
  auto& cmds = commands();
  std::sort(cmds.begin(), cmds.end(), [](const Command& a, const Command& b) { return a.order < b.order; });
  std::function<int()> action;
  for (auto& c : cmds) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    auto act = std::make_shared<std::function<int()>>(c.setup(*sub));
    sub->callback([act, &action] { action = *act; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit with 2 (help exits 0), as command-line users expect.
    const int rc = app.exit(e);
    return (e.get_exit_code() == 0) ? rc : 2;
  }
  try {
    return action ? action() : 0;
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "tessera: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera: internal error: %s\n", e.what());
    return 1;
  }
}
