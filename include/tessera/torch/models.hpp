#pragma once
// Node-classification models by name: the hook `tessera train --model NAME` uses. A family adds
// its model in its own source file with a static registrar, e.g. in src/torch/sage.cpp:
//
//   static tessera::nn::ModelRegistrar reg("sage", "GraphSAGE (mean)", [](const ModelConfig& c) {
//     return std::make_shared<SageModel>(c);
//   });
//
// Every model maps (features [N, in], graph) to logits [N, classes] and owns its layers as
// registered submodules, so optimizers, state_dict and .to(device) work as usual.
#include <torch/torch.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/torch/graph.hpp"

namespace tessera::nn {

struct ModelConfig {
  int64_t in_channels = 0, hidden = 64, out_channels = 0;
  int layers = 2;
  double dropout = 0.5;
  std::map<std::string, std::string> extra;  // family-specific options (heads=8, aggr=mean, ...)
};

class NodeModel : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(const torch::Tensor& x, const pt::Graph& graph) = 0;
};

using ModelFactory = std::function<std::shared_ptr<NodeModel>(const ModelConfig&)>;

struct ModelEntry {
  std::string help;
  ModelFactory make;
};

inline std::map<std::string, ModelEntry>& model_registry() {
  static std::map<std::string, ModelEntry> registry;
  return registry;
}

struct ModelRegistrar {
  ModelRegistrar(const std::string& name, std::string help, ModelFactory make) {
    model_registry()[name] = ModelEntry{std::move(help), std::move(make)};
  }
};

inline std::shared_ptr<NodeModel> make_model(const std::string& name, const ModelConfig& cfg) {
  auto& reg = model_registry();
  auto it = reg.find(name);
  if (it == reg.end()) {
    std::string known;
    for (const auto& [n, e] : reg) known += (known.empty() ? "" : ", ") + n;
    fail("unknown model '", name, "' (known: ", known, ")");
  }
  return it->second.make(cfg);
}

}  // namespace tessera::nn
