// Data ops for Python (benchmarks, tests): the core's seeded generators and loaders as tensors,
// so every peer in a benchmark sees the identical graph.
//   tessera::generate_graph(spec, symmetrize=False) -> (rowptr, col)      int64, rows = targets
//   tessera::load_node_dataset(data) -> (x, y, rowptr, col, train, val, test)
//       data: a Planetoid directory (io::read_planetoid) or a task spec ("sbm:nodes=...").
#include <torch/library.h>

#include <ATen/ATen.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <tuple>

#include "boundary.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::pt {
namespace {

template <class T>
at::Tensor copy_vector(const std::vector<T>& v, at::ScalarType st) {
  auto t = at::empty({int64_t(v.size())}, at::TensorOptions().dtype(st));
  if (!v.empty()) std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(T));
  return t;
}

std::tuple<at::Tensor, at::Tensor> generate_graph(const std::string& spec, bool symmetrize) {
  TESSERA_CHECK(gen::is_generator_spec(spec), "generate_graph: '", spec, "' is not a generator spec");
  BuildOptions b;
  b.symmetrize = symmetrize;
  const auto g = gen::generate(spec, b);
  return {copy_vector(g.rowptr, at::kLong), copy_vector(g.col, at::kLong)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> load_node_dataset(
    const std::string& data) {
  NodeDataset ds;
  if (std::filesystem::is_directory(data))
    ds = io::read_planetoid(data);
  else if (gen::is_generator_spec(data))
    ds = gen::generate_task(data);
  else
    fail("load_node_dataset: '", data, "' is neither a Planetoid directory nor a task spec");
  auto x = copy_vector(ds.features.data, at::kFloat).view({ds.features.rows, ds.features.cols});
  auto y = copy_vector(ds.labels, at::kInt).to(at::kLong);
  return {x, y, copy_vector(ds.graph.rowptr, at::kLong), copy_vector(ds.graph.col, at::kLong),
          copy_vector(ds.train, at::kLong), copy_vector(ds.val, at::kLong), copy_vector(ds.test, at::kLong)};
}

}  // namespace
}  // namespace tessera::pt

TORCH_LIBRARY_FRAGMENT(tessera, m) {
  m.def("generate_graph(str spec, bool symmetrize=False) -> (Tensor, Tensor)", TESSERA_OP(tessera::pt::generate_graph));
  m.def("load_node_dataset(str data) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)", TESSERA_OP(tessera::pt::load_node_dataset));
}
