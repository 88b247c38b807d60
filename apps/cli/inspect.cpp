// tessera inspect GRAPH: statistics of a graph file, a data-set directory (Planetoid, TU) or a
// generator spec, with the time it took to load or generate it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "command.hpp"
#include "progress.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/graph/stats.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::cli {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

struct InspectArgs {
  std::string graph;
  bool symmetrize = false, json = false, tiles = false;
};

bool is_planetoid_dir(const fs::path& dir) {
  return fs::exists(dir / "meta.txt") && fs::exists(dir / "labels.txt") && fs::exists(dir / "edges.txt");
}

// Summary of a node-classification data set (Planetoid or the sbm generator).
json node_dataset_summary(const NodeDataset& ds) {
  return {{"name", ds.name},
          {"nodes", ds.graph.rows},
          {"features", ds.features.cols},
          {"classes", ds.num_classes},
          {"labeled", std::count_if(ds.labels.begin(), ds.labels.end(), [](int32_t y) { return y >= 0; })},
          {"train", ds.train.size()},
          {"val", ds.val.size()},
          {"test", ds.test.size()}};
}

json collection_summary(const GraphCollection& c) {
  int64_t nodes = 0, entries = 0, min_nodes = -1, max_nodes = 0;
  std::set<int32_t> graph_labels, node_labels;
  for (const auto& g : c.graphs) {
    nodes += g.num_nodes();
    entries += g.adj.nnz();
    min_nodes = min_nodes < 0 ? g.num_nodes() : std::min(min_nodes, g.num_nodes());
    max_nodes = std::max(max_nodes, g.num_nodes());
    graph_labels.insert(g.graph_label);
    node_labels.insert(g.node_labels.begin(), g.node_labels.end());
  }
  const double n = double(std::max<size_t>(1, c.graphs.size()));
  return {{"name", c.name},
          {"graphs", c.graphs.size()},
          {"nodes", nodes},
          {"adjacency_entries", entries},
          {"nodes_per_graph", {{"min", std::max<int64_t>(0, min_nodes)}, {"mean", double(nodes) / n}, {"max", max_nodes}}},
          {"graph_classes", graph_labels.size()},
          {"node_label_values", node_labels.size()},
          {"node_attributes", c.graphs.empty() ? 0 : c.graphs[0].node_attrs.cols}};
}

// The whole collection as one block-diagonal graph.
Csr<int64_t> collection_graph(const GraphCollection& c, const BuildOptions& build) {
  Coo<int64_t> coo;
  int64_t offset = 0;
  for (const auto& g : c.graphs) {
    const Coo<int32_t> part = to_coo(g.adj.view());
    for (int64_t k = 0; k < part.nnz(); ++k) {
      coo.src.push_back(offset + part.src[size_t(k)]);
      coo.dst.push_back(offset + part.dst[size_t(k)]);
    }
    offset += g.num_nodes();
  }
  coo.rows = coo.cols = offset;
  return build_csr(coo, build);
}

Csr<int64_t> rebuild(const Csr<int64_t>& g, const BuildOptions& build) {
  return build_csr(to_coo(g.view()), build);
}

void print_text(const json& dataset, const std::string& kind) {
  if (dataset.is_null()) return;
  if (kind == "node") {
    std::printf("data set:     %s, %lld features, %d classes\n", dataset["name"].get<std::string>().c_str(),
                dataset["features"].get<long long>(), dataset["classes"].get<int>());
    std::printf("split:        train %lld, val %lld, test %lld (labeled %lld)\n", dataset["train"].get<long long>(),
                dataset["val"].get<long long>(), dataset["test"].get<long long>(), dataset["labeled"].get<long long>());
  } else {
    const auto& per = dataset["nodes_per_graph"];
    std::printf("collection:   %s, %lld graphs, %lld graph classes, %lld node label values, %lld node attributes\n",
                dataset["name"].get<std::string>().c_str(), dataset["graphs"].get<long long>(),
                dataset["graph_classes"].get<long long>(), dataset["node_label_values"].get<long long>(),
                dataset["node_attributes"].get<long long>());
    std::printf("graph sizes:  nodes min %lld, mean %.2f, max %lld (statistics below: all graphs as one)\n",
                per["min"].get<long long>(), per["mean"].get<double>(), per["max"].get<long long>());
  }
}

// A TU collection holds NAME_A.txt[.gz].
bool is_tu_dir(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.size() > 6 && (f.ends_with("_A.txt") || f.ends_with("_A.txt.gz"))) return true;
  }
  return false;
}

int run_inspect(const InspectArgs& a) {
  BuildOptions build;
  build.symmetrize = a.symmetrize;
  const fs::path path(a.graph);
  Csr<int64_t> graph;
  json dataset;
  std::string kind, source;
  double load_s = 0;
  {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      Step step("reading " + a.graph, a.json);
      if (is_planetoid_dir(path)) {
        NodeDataset ds = io::read_planetoid(a.graph);
        dataset = node_dataset_summary(ds);
        kind = "node";
        graph = a.symmetrize ? rebuild(ds.graph, build) : std::move(ds.graph);
      } else if (is_tu_dir(path)) {
        const GraphCollection c = io::read_tu(a.graph);
        dataset = collection_summary(c);
        kind = "collection";
        graph = collection_graph(c, build);
      } else {  // a converted graph folder (edges.txt + meta.txt), e.g. the temporal data sets
        graph = io::read_graph(a.graph, build);
        kind = "graph";
      }
      load_s = step.finish();
      source = "directory";
    } else if (fs::exists(path, ec)) {
      Step step("reading " + a.graph, a.json);
      graph = io::read_graph(a.graph, build);
      load_s = step.finish();
      source = "file";
    } else if (gen::is_generator_spec(a.graph)) {
      Step step("generating " + a.graph, a.json);
      if (a.graph.rfind("sbm", 0) == 0) {
        NodeDataset ds = gen::generate_task(a.graph);
        dataset = node_dataset_summary(ds);
        kind = "node";
        graph = a.symmetrize ? rebuild(ds.graph, build) : std::move(ds.graph);
      } else {
        graph = gen::generate(a.graph, build);
      }
      load_s = step.finish();
      source = "generator";
    } else {
      fail("'", a.graph, "' is neither a file, a directory nor a generator spec; generators:\n",
           gen::generator_help());
    }
  }
  Step step("computing statistics", a.json);
  StatsOptions so;
  so.tiles = a.tiles;
  const GraphStats stats = graph_stats(graph.view(), so);
  const double stats_s = step.finish();
  if (a.json) {
    json out = {{"input", a.graph},          {"source", source},
                {"load_seconds", load_s},    {"stats_seconds", stats_s},
                {"symmetrized", a.symmetrize}, {"graph", json::parse(to_json(stats))}};
    if (!dataset.is_null()) out["dataset"] = dataset;
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("input:        %s (%s)%s\n", a.graph.c_str(), source.c_str(), a.symmetrize ? ", symmetrized" : "");
  std::printf("%-14s%.3f s\n", source == "generator" ? "generated in:" : "loaded in:", load_s);
  print_text(dataset, kind);
  std::printf("%s", to_text(stats).c_str());
  return 0;
}

}  // namespace
}  // namespace tessera::cli

TESSERA_CLI_COMMAND("inspect", "Print statistics of a graph file, data-set directory or generator spec", 10,
                    [](CLI::App& sub) {
                      auto a = std::make_shared<tessera::cli::InspectArgs>();
                      sub.add_option("graph", a->graph,
                                     "graph file (.txt/.el/.edges[.gz], .mtx[.gz], .tsr), data-set directory "
                                     "(Planetoid, TU) or generator spec (e.g. rmat:scale=20,degree=16; see below)")
                          ->required();
                      sub.add_flag("--symmetrize", a->symmetrize, "add the reverse of every edge before the statistics");
                      sub.add_flag("--json", a->json, "print one JSON object instead of text (no progress lines)");
                      sub.add_flag("--tiles", a->tiles, "also compute the share and fill of non-empty 16x8 and 8x8 tiles");
                      sub.footer("Generator specs (name:key=value,...):\n" + tessera::gen::generator_help());
                      return std::function<int()>([a] { return tessera::cli::run_inspect(*a); });
                    });
