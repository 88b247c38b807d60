// tessera train: full-batch node classification (the main job). Loads a data set (Planetoid
// directory or generator spec, default the embedded SBM task), builds a model by name from
// tessera::nn::model_registry() (gcn here; other families register theirs), trains with Adam,
// early-stops on validation accuracy and prints a summary: test accuracy at the best
// validation epoch, time per epoch, peak memory and the variants the tuner chose.
// Built only when the torch layer is (TESSERA_WITH_TORCH).
#ifdef TESSERA_WITH_TORCH
#include <sys/resource.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#ifdef TESSERA_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "command.hpp"
#include "progress.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/torch/graph.hpp"
#include "tessera/torch/models.hpp"
#include "tessera/tune/tuner.hpp"

namespace tessera::cli {
namespace {

struct TrainArgs {
  std::string model = "gcn", data = "sbm", device = "cpu";
  int64_t hidden = 16;
  int layers = 2, epochs = 200, patience = 100;
  double lr = 0.01, weight_decay = 5e-4, dropout = 0.5;
  uint64_t seed = 1;
  bool quiet = false;
  int64_t heads = 0;  // attention models (gatv2, transformer); 0 = the model's default
  std::string aggr;   // sage: max, min, sum or mean ("" = the model's default, mean)
};

NodeDataset load(const std::string& data) {
  if (std::filesystem::is_directory(data)) return io::read_planetoid(data);
  if (gen::is_generator_spec(data)) return gen::generate_task(data);
  fail("--data '", data, "' is neither a Planetoid directory nor a task generator spec (e.g. sbm, sbm:nodes=5000)");
}

torch::Tensor index_tensor(const std::vector<int64_t>& idx, const torch::Device& dev) {
  return torch::tensor(idx, torch::kLong).to(dev);
}

double accuracy(const torch::Tensor& logits, const torch::Tensor& labels, const torch::Tensor& idx) {
  if (idx.numel() == 0) return 0.0;
  auto pred = logits.index_select(0, idx).argmax(1);
  return pred.eq(labels.index_select(0, idx)).to(torch::kDouble).mean().item<double>();
}

double peak_memory_mib(const torch::Device& dev) {
#ifdef TESSERA_TORCH_CUDA
  if (dev.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(dev.index());
    return double(stats.allocated_bytes[0].peak) / (1024.0 * 1024.0);  // [0] = aggregate over pools
  }
#endif
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;  // KiB -> MiB
}

// The model's layers as they print themselves, e.g. "GATv2Conv(1433, 2, heads=8) -> GATv2Conv(16, 7,
// heads=1)": what the summary's family name and widths leave out (heads per layer, aggregation).
std::string layer_list(const torch::nn::Module& model) {
  constexpr std::string_view kNamespace = "tessera::nn::";
  std::string list;
  for (const auto& layer : model.children()) {
    std::ostringstream text;
    layer->pretty_print(text);
    std::string name = text.str();
    if (name.rfind(kNamespace, 0) == 0) name.erase(0, kNamespace.size());
    list += (list.empty() ? "" : " -> ") + name;
  }
  return list;
}

void sync(const torch::Device& dev) {
#ifdef TESSERA_TORCH_CUDA
  if (dev.is_cuda()) torch::cuda::synchronize(dev.index());
#endif
}

// One line, rewritten in place with \r: [=====>     ] epoch 37/200 loss 0.5320 train 0.930 val 0.781
void progress(int epoch, int epochs, double loss, double train_acc, double val_acc, bool final_line) {
  constexpr int width = 24;
  const int filled = epochs > 0 ? int(double(width) * epoch / epochs) : width;
  std::string bar(size_t(filled), '=');
  if (filled < width) bar += '>' + std::string(size_t(width - filled - 1), ' ');
  std::fprintf(stderr, "\r[%s] epoch %d/%d  loss %.4f  train %.3f  val %.3f", bar.c_str(), epoch, epochs, loss,
               train_acc, val_acc);
  if (final_line) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

// Every epoch allocates the same activations again. glibc serves each block above its mmap
// threshold (at most 32 MiB) with a fresh mmap, so on the CPU every epoch page-faults its large
// tensors in anew. Kept for reuse instead: 1084-1124 -> 833-844 ms per epoch on a 65536-node SBM
// task at hidden 128 (2 cores), peak RSS 538 -> 782 MiB (README.md, CPU memory note).
// A user's own MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ wins.
void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  if (!std::getenv("MALLOC_MMAP_THRESHOLD_")) mallopt(M_MMAP_THRESHOLD, 1 << 30);
  if (!std::getenv("MALLOC_TRIM_THRESHOLD_")) mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int run_train(const TrainArgs& a) {
  TESSERA_CHECK(a.device == "cpu" || a.device == "cuda", "--device must be cpu or cuda, got '", a.device, "'");
  if (a.device == "cuda")
    TESSERA_CHECK(torch::cuda::is_available(), "--device cuda: no CUDA device visible to torch (or this build's "
                                               "torch has no CUDA)");
  const torch::Device dev(a.device == "cuda" ? torch::kCUDA : torch::kCPU, a.device == "cuda" ? 0 : -1);
  if (a.device == "cpu") keep_freed_memory_for_reuse();
  torch::manual_seed(a.seed);

  Step load_step("loading " + a.data, a.quiet);
  const NodeDataset ds = load(a.data);
  load_step.finish();
  TESSERA_CHECK(!ds.train.empty(), "data set ", ds.name, " has no training nodes");
  const int64_t n = ds.graph.rows;
  auto x = torch::from_blob(const_cast<float*>(ds.features.data.data()), {ds.features.rows, ds.features.cols},
                            torch::kFloat)
               .clone()
               .to(dev);
  auto labels = torch::tensor(std::vector<int64_t>(ds.labels.begin(), ds.labels.end()), torch::kLong).to(dev);
  const auto train_idx = index_tensor(ds.train, dev), val_idx = index_tensor(ds.val, dev),
             test_idx = index_tensor(ds.test, dev);
  const pt::Graph graph = pt::Graph::from_core(ds.graph, dev);

  nn::ModelConfig cfg;
  cfg.in_channels = ds.features.cols;
  cfg.hidden = a.hidden;
  cfg.out_channels = ds.num_classes;
  cfg.layers = a.layers;
  cfg.dropout = a.dropout;
  if (a.heads > 0) cfg.extra["heads"] = std::to_string(a.heads);
  if (!a.aggr.empty()) cfg.extra["aggr"] = a.aggr;
  auto model = nn::make_model(a.model, cfg);
  model->to(dev);
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(a.lr).weight_decay(a.weight_decay));

  std::printf("data: %s  nodes %lld  edges %lld  features %lld  classes %d  split %zu/%zu/%zu\n", ds.name.c_str(),
              (long long)n, (long long)ds.graph.nnz(), (long long)ds.features.cols, ds.num_classes, ds.train.size(),
              ds.val.size(), ds.test.size());
  std::printf("model: %s  layers %d  hidden %lld  dropout %.2f  lr %g  weight decay %g  device %s\n", a.model.c_str(),
              a.layers, (long long)a.hidden, a.dropout, a.lr, a.weight_decay, dev.str().c_str());
  std::printf("layers: %s\n", layer_list(*model).c_str());

  double best_val = -1, best_val_loss = 1e300, test_at_best = 0;
  int best_epoch = 0, ran = 0;
  double train_s = 0;
  const bool tty = isatty(fileno(stderr));
  for (int epoch = 1; epoch <= a.epochs; ++epoch) {
    sync(dev);
    const auto t0 = std::chrono::steady_clock::now();
    model->train();
    opt.zero_grad();
    auto logits = model->forward(x, graph);
    auto loss = torch::nn::functional::cross_entropy(logits.index_select(0, train_idx),
                                                     labels.index_select(0, train_idx));
    loss.backward();
    opt.step();
    model->eval();
    torch::Tensor eval_logits;
    {
      torch::NoGradGuard no_grad;
      eval_logits = model->forward(x, graph);
    }
    sync(dev);
    train_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ran = epoch;
    const double train_acc = accuracy(eval_logits, labels, train_idx);
    const double val_acc = accuracy(eval_logits, labels, val_idx);
    const double val_loss = ds.val.empty() ? 0.0
                                           : torch::nn::functional::cross_entropy(eval_logits.index_select(0, val_idx),
                                                                                   labels.index_select(0, val_idx))
                                                 .item<double>();
    // Best = highest validation accuracy, ties broken by lower validation loss.
    if (val_acc > best_val || (val_acc == best_val && val_loss < best_val_loss)) {
      best_val = val_acc;
      best_val_loss = val_loss;
      best_epoch = epoch;
      test_at_best = accuracy(eval_logits, labels, test_idx);
    }
    const bool stop = a.patience > 0 && epoch - best_epoch >= a.patience;
    if (!a.quiet && (tty || epoch % 10 == 0 || epoch == a.epochs || stop))
      progress(epoch, a.epochs, loss.item<double>(), train_acc, val_acc, !tty);
    if (stop) break;
  }
  if (!a.quiet && tty) std::fprintf(stderr, "\n");

  std::printf("stopped after %d epochs%s; best validation accuracy %.4f at epoch %d\n", ran,
              ran < a.epochs ? " (early stopping)" : "", best_val, best_epoch);
  std::printf("test accuracy: %.4f\n", test_at_best);
  std::printf("time per epoch: %.3f ms (train step + evaluation)\n", 1000.0 * train_s / std::max(ran, 1));
  std::printf("peak memory: %.1f MiB (%s)\n", peak_memory_mib(dev),
              dev.is_cuda() ? "CUDA max allocated" : "process max RSS");
  // The tuner's log: one line per distinct (family, key) -> variant.
  std::map<std::string, std::string> choices;
  for (const auto& [family, c] : tune::recorded_choices()) choices[family] = c.variant + " (" + c.source + ")";
  if (choices.empty()) std::printf("tuner choices: none recorded\n");
  for (const auto& [family, v] : choices) std::printf("tuner choice: %s -> %s\n", family.c_str(), v.c_str());
  return 0;
}

}  // namespace
}  // namespace tessera::cli

TESSERA_CLI_COMMAND("train", "Full-batch node classification with a registered GNN (--model)", 30, [](CLI::App& sub) {
  auto a = std::make_shared<tessera::cli::TrainArgs>();
  std::string models;
  std::vector<std::string> names;
  for (const auto& [name, e] : tessera::nn::model_registry()) {
    models += "\n  " + name + ": " + e.help;
    names.push_back(name);
  }
  // Checked while parsing: a misspelled model is a usage error before any data is loaded.
  sub.add_option("--model", a->model, "model name; registered:" + models)
      ->capture_default_str()
      ->check(CLI::IsMember(names));
  sub.add_option("--data", a->data, "Planetoid directory (e.g. ../shared/data/cora) or task generator spec (sbm[:...])")
      ->capture_default_str();
  sub.add_option("--heads", a->heads, "attention heads of the gatv2 / transformer models (0 = model default)")
      ->check(tessera::cli::non_negative());
  sub.add_option("--aggr", a->aggr, "neighbour aggregation of the sage model: max, min, sum or mean (default mean)")
      ->check(CLI::IsMember({"max", "min", "sum", "add", "mean"}));
  sub.add_option("--hidden", a->hidden, "hidden channels")->capture_default_str()->check(tessera::cli::positive());
  sub.add_option("--layers", a->layers, "number of layers")->capture_default_str()->check(tessera::cli::positive());
  sub.add_option("--epochs", a->epochs, "maximum epochs")->capture_default_str()->check(tessera::cli::non_negative());
  sub.add_option("--lr", a->lr, "Adam learning rate")->capture_default_str()->check(tessera::cli::positive());
  sub.add_option("--weight-decay", a->weight_decay, "Adam weight decay")->capture_default_str()->check(tessera::cli::non_negative());
  sub.add_option("--dropout", a->dropout, "dropout probability")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  sub.add_option("--device", a->device, "cpu or cuda")->capture_default_str()->check(CLI::IsMember({"cpu", "cuda"}));
  sub.add_option("--seed", a->seed, "random seed (initialization, dropout)")->capture_default_str();
  sub.add_option("--patience", a->patience, "stop after this many epochs without a better validation accuracy (0 = off)")
      ->capture_default_str()->check(tessera::cli::non_negative());
  sub.add_flag("-q,--quiet", a->quiet, "no progress bar");
  return std::function<int()>([a] { return tessera::cli::run_train(*a); });
});
#endif  // TESSERA_WITH_TORCH
