#pragma once
// A GRAPH argument of the reorder / tune commands (and the locality benchmark): a generator spec,
// a graph file, a Planetoid directory, or a converted data-set directory (edges.txt[.gz]). Node
// coordinates come along where they exist: grid generator specs (node r*cols+c at (c, r)) and
// directories holding coords.txt[.gz] (road-chicago-regional).
#include <filesystem>
#include <optional>
#include <string>

#include "tessera/gen/generators.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/reorder/orders.hpp"

namespace tessera::cli {

struct GraphArg {
  Csr<int64_t> graph;
  std::optional<reorder::Coords> coords;
};

inline int64_t spec_int(const std::string& spec, const std::string& key, int64_t fallback) {
  const size_t at = spec.find(key + "=");
  if (at == std::string::npos) return fallback;
  return std::stoll(spec.substr(at + key.size() + 1));
}

inline GraphArg load_graph_arg(const std::string& what, bool symmetrize) {
  namespace fs = std::filesystem;
  BuildOptions build;
  build.symmetrize = symmetrize;
  GraphArg out;
  const fs::path path(what);
  std::error_code ec;
  if (fs::is_directory(path, ec) && fs::exists(path / "meta.txt") && fs::exists(path / "labels.txt")) {
    NodeDataset ds = io::read_planetoid(what);
    out.graph = symmetrize ? build_csr(to_coo(ds.graph.view()), build) : std::move(ds.graph);
  } else if (fs::exists(path, ec)) {
    out.graph = io::read_graph(what, build);
    for (const char* name : {"coords.txt.gz", "coords.txt"})
      if (fs::is_directory(path, ec) && fs::exists(path / name)) {
        out.coords = reorder::read_coords((path / name).string(), out.graph.rows);
        break;
      }
  } else {
    TESSERA_CHECK(gen::is_generator_spec(what), "'", what, "' is neither a file, a directory nor a generator spec");
    out.graph = gen::generate(what, build);
    if (what.rfind("grid:", 0) == 0) {  // keys left at their defaults: no coordinates rather than wrong ones
      const int64_t rows = spec_int(what, "rows", 0), cols = spec_int(what, "cols", 0);
      if (rows > 0 && cols > 0 && rows * cols == out.graph.rows) out.coords = reorder::grid_coords(rows, cols);
    }
  }
  return out;
}

}  // namespace tessera::cli
