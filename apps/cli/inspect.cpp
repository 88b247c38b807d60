#include "command.hpp"
TESSERA_CLI_COMMAND("inspect", "Print statistics of a graph file or generator spec", 10, [](CLI::App& sub) {
  auto spec = std::make_shared<std::string>();
  sub.add_option("graph", *spec, "graph file, directory or generator spec")->required();
  return std::function<int()>([spec] { return 0; });
});
