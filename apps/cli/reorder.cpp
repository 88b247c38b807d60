// tessera reorder GRAPH --method ...: computes node orders and prints their cost (seconds) and
// effect (non-empty 8x8 / 16x8 tiles, mean tile fill, bandwidth, profile) in one table.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "graph_arg.hpp"
#include "progress.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/reorder/orders.hpp"

namespace tessera::cli {
namespace {
using nlohmann::json;

struct ReorderArgs {
  std::string graph;
  std::vector<std::string> methods;
  std::string out, perm_out;
  bool json = false, symmetrize = false;
};

std::vector<std::string> default_methods(bool coords) {
  std::vector<std::string> m = {"none", "degree", "rcm"};
  if (reorder::metis_available()) {
    m.push_back("metis:size=256");
    m.push_back("pbr:size=256,tile=8x8");
    m.push_back("pbr:size=256,tile=16x8");
  }
  if (coords) {
    m.push_back("morton");
    m.push_back("hilbert");
  }
  return m;
}

int run_reorder(const ReorderArgs& a) {
  GraphArg in;
  {
    Step step("loading " + a.graph, a.json);
    in = load_graph_arg(a.graph, a.symmetrize);
  }
  const auto methods = a.methods.empty() ? default_methods(in.coords.has_value()) : a.methods;
  json rows = json::array();
  for (const auto& m : methods) {
    const reorder::OrderSpec spec = reorder::parse_order_spec(m);
    reorder::Permutation p;
    double seconds = 0;
    {
      Step step("ordering by " + spec.str(), a.json);
      p = reorder::compute_order(in.graph.view(), spec, in.coords ? &*in.coords : nullptr);
      seconds = step.finish();
    }
    const Csr<int64_t> g = p.apply(in.graph.view());
    const auto q = reorder::order_quality(g.view());
    rows.push_back({{"method", spec.str()}, {"seconds", seconds}, {"tiles_8x8", q.tiles_8x8},
                    {"fill_8x8", q.fill_8x8}, {"tiles_16x8", q.tiles_16x8}, {"fill_16x8", q.fill_16x8},
                    {"bandwidth", q.bandwidth}, {"profile", q.profile}});
    if (&m == &methods.front()) {  // -o / --perm: the first method's result
      if (!a.out.empty()) io::write_graph(a.out, g.view());
      if (!a.perm_out.empty()) {
        std::string text;  // the old id at each new position, one per line
        for (int64_t k = 0; k < p.size(); ++k) (text += std::to_string(p.old_of_new(k))) += '\n';
        io::write_file(a.perm_out, text);
      }
    }
  }
  if (a.json) {
    std::printf("%s\n", json{{"graph", a.graph}, {"nodes", in.graph.rows}, {"edges", in.graph.nnz()}, {"orders", rows}}
                            .dump(2)
                            .c_str());
    return 0;
  }
  std::printf("%s: %lld nodes, %lld entries\n", a.graph.c_str(), (long long)in.graph.rows, (long long)in.graph.nnz());
  std::printf("%-26s %9s %11s %8s %11s %8s %10s %12s\n", "method", "time_s", "tiles_8x8", "fill", "tiles_16x8",
              "fill", "bandwidth", "profile");
  for (const auto& r : rows)
    std::printf("%-26s %9.3f %11lld %8.4f %11lld %8.4f %10lld %12.1f\n", r["method"].get<std::string>().c_str(),
                r["seconds"].get<double>(), r["tiles_8x8"].get<long long>(), r["fill_8x8"].get<double>(),
                r["tiles_16x8"].get<long long>(), r["fill_16x8"].get<double>(), r["bandwidth"].get<long long>(),
                r["profile"].get<double>());
  return 0;
}

}  // namespace
}  // namespace tessera::cli

TESSERA_CLI_COMMAND("reorder", "Compute node orders (degree, rcm, metis, pbr, morton, hilbert) and their tile effect", 40,
                    [](CLI::App& sub) {
                      auto a = std::make_shared<tessera::cli::ReorderArgs>();
                      sub.add_option("graph", a->graph, "graph file, data-set directory or generator spec")->required();
                      sub.add_option("-m,--method", a->methods,
                                     "order spec, repeatable: none, degree, rcm, metis[:parts=K|size=S], "
                                     "pbr[:size=S,tile=8x8|16x8,passes=P], morton, hilbert (default: all that apply)");
                      sub.add_option("-o,--out", a->out, "write the graph in the first method's order (.txt/.mtx/.tsr)")
                          ->check(tessera::cli::output_file(tessera::io::check_graph_path));
                      sub.add_option("--perm", a->perm_out, "write the first method's order: old id per new position")
                          ->check(tessera::cli::output_file());
                      sub.add_flag("--symmetrize", a->symmetrize, "add the reverse of every edge first");
                      sub.add_flag("--json", a->json, "print one JSON object instead of the table");
                      return std::function<int()>([a] { return tessera::cli::run_reorder(*a); });
                    });
