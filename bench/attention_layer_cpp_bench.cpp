// needs: torch
// The C++ attention layers (tessera::nn::GATv2Conv, TransformerConv) as a LibTorch user runs them:
// forward and forward+backward of the whole module (projections, the GATv2 self-loops and their
// edge features, the fused kernels, bias) on a generated graph, fp32, optionally with edge
// features (edge_dim). bench/attention_layer_bench.py measures the Python layers against PyG;
// this one covers what only the C++ API does (its own self-loop and edge-feature alignment).
//
//   attention_layer_cpp_bench [--device cuda] [--spec rmat:scale=20,degree=16,seed=1] [--hc 4x64]
//                             [--edge-dim 8] [--json OUT.json]
#include <CLI/CLI.hpp>
#include <torch/torch.h>

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/torch/gatv2.hpp"
#include "tessera/torch/transformer.hpp"

using namespace tessera;
using json = nlohmann::json;

namespace {

void sync(const torch::Device& d) {
  if (d.is_cuda()) torch::cuda::synchronize();
}

// The first call builds the layer's memoized graph forms (loops, transpose, selection), untimed.
double median_ms(const torch::Device& d, int reps, const std::function<void()>& fn) {
  return bench::median_ms(reps, fn, [&] { sync(d); });
}

template <class M>
std::pair<double, double> time_layer(M& m, const pt::Graph& g, const torch::Tensor& x, const torch::Tensor& ea,
                                     const torch::Device& dev, int reps) {
  double fwd;
  {
    torch::NoGradGuard no_grad;
    fwd = median_ms(dev, reps, [&] { m->forward(x, g, ea); });
  }
  auto xg = x.detach().requires_grad_();
  auto eg = ea.defined() ? ea.detach().requires_grad_() : ea;
  const auto dy = torch::randn({x.size(0), m->options.heads() * m->options.out_channels()}, x.options());
  const double fb = median_ms(dev, reps, [&] {
    m->zero_grad(/*set_to_none=*/true);  // each step's gradients fresh, not accumulated (as a training step)
    xg.mutable_grad().reset();
    if (eg.defined()) eg.mutable_grad().reset();
    m->forward(xg, g, eg).backward(dy);
  });
  return {fwd, fb};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"C++ attention layers (tessera::nn::GATv2Conv, TransformerConv)"};
  std::string device = "auto", spec, hc = "4x64", json_path;
  int64_t edge_dim = 8, in_channels = 128;
  int reps = 7;
  app.add_option("--device", device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--spec", spec, "graph generator spec");
  app.add_option("--hc", hc, "comma-separated HxC list (heads x channels per head)");
  app.add_option("--in", in_channels, "input feature width");
  app.add_option("--edge-dim", edge_dim, "edge feature width (0: none)");
  app.add_option("--reps", reps, "timed repetitions (median)");
  app.add_option("--json", json_path, "write results as JSON");
  CLI11_PARSE(app, argc, argv);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (device == "auto") device = torch::cuda::is_available() ? "cuda" : "cpu";
  if (spec.empty()) spec = device == "cuda" ? "rmat:scale=20,degree=16,seed=1" : "rmat:scale=14,degree=16,seed=1";
  const torch::Device dev(device == "cuda" ? torch::kCUDA : torch::kCPU);
  const auto csr = gen::generate(spec);
  const auto g = pt::Graph::from_core(csr, dev);  // int32 indices when they fit, as the Python layers' graphs
  std::printf("graph %s: %lld nodes, %lld entries; device %s; in %lld, edge_dim %lld\n", spec.c_str(),
              (long long)csr.rows, (long long)csr.nnz(), device.c_str(), (long long)in_channels, (long long)edge_dim);
  torch::manual_seed(1);
  const auto x = torch::randn({csr.rows, in_channels}, torch::TensorOptions().device(dev));
  const auto ea = edge_dim > 0 ? torch::randn({csr.nnz(), edge_dim}, x.options()) : torch::Tensor();
  json results = json::array();
  for (const auto& [heads, channels] : bench::parse_heads_channels(hc)) {
    const int64_t H = heads, C = channels;  // captured by report (a lambda)
    auto report = [&](const char* layer, std::pair<double, double> t) {
      std::printf("%-16s H=%-2lld C=%-4lld forward %9.3f ms  forward+backward %9.3f ms\n", layer, (long long)H,
                  (long long)C, t.first, t.second);
      results.push_back({{"layer", layer}, {"heads", H}, {"channels", C}, {"forward_ms", t.first},
                         {"forward_backward_ms", t.second}});
    };
    {
      nn::GATv2Conv m(nn::GATv2ConvOptions(in_channels, C).heads(H).edge_dim(edge_dim));
      m->to(dev);
      report("GATv2Conv", time_layer(m, g, x, ea, dev, reps));
    }
    {
      nn::TransformerConv m(nn::TransformerConvOptions(in_channels, C).heads(H).edge_dim(edge_dim));
      m->to(dev);
      report("TransformerConv", time_layer(m, g, x, ea, dev, reps));
    }
  }
  if (!json_path.empty()) {
    json doc = {{"benchmark", "attention_layer_cpp"}, {"date", bench::now_utc()}, {"commit", bench::git_commit()},
                {"device", device_name(dev.is_cuda() ? Device{DeviceKind::cuda, 0} : Device{})},
                {"graph", spec}, {"nodes", csr.rows}, {"edges", csr.nnz()},
                {"in_channels", in_channels}, {"edge_dim", edge_dim}, {"dtype", "float32"},
                {"command", std::string(argv[0]) + " --device " + device + " --spec " + spec + " --hc " + hc +
                                " --in " + std::to_string(in_channels) + " --edge-dim " + std::to_string(edge_dim) +
                                " --reps " + std::to_string(reps)},
                {"results", results}};
    if (!bench::write_json(json_path, doc)) return 1;
  }
  return 0;
}
