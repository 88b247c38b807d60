// tessera kernel DATASET: the marginalized-graph-kernel Gram matrix of a TU collection or of the
// molecules of a SMILES file (.csv with a SMILES column, .smi; RDKit builds only), written as .npy
// or .csv[.gz] (io::write_dense: to a temporary name, then renamed), with progress (pairs per
// second) on stderr and convergence statistics; pairs that did not converge are listed and make
// the exit code 3.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "command.hpp"
#include "progress.hpp"
#include "tessera/core/error.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/io/smiles.hpp"
#include "tessera/kernels/marginalized.hpp"

namespace tessera::cli {
namespace {
namespace fs = std::filesystem;

struct KernelArgs {
  std::string dataset, output = "gram.npy", device = "cpu", dtype = "float64", reorder = "rcm";
  std::string node_kernel, edge_kernel, smiles_column;
  double q = 0.05, tol = 0;
  int max_iter = 4000, lmin = 0, threads = 0;
  int64_t limit = 0;
  bool normalize = false, json = false, skip_invalid = false;
};

int run_kernel(const KernelArgs& a) {
  using namespace tessera::kernels;
  GraphCollection col;
  int64_t skipped = 0;
  {
    Step step("reading " + a.dataset, a.json);
    // A file named .csv/.smi[.gz] holds SMILES; anything else is a TU collection directory.
    if (!fs::is_directory(a.dataset) && io::is_smiles_file(a.dataset)) {
      io::SmilesFileOptions so;
      so.column = a.smiles_column;
      so.skip_invalid = a.skip_invalid;
      so.limit = a.limit;  // big files (HIV: 41k molecules) need not be parsed whole
      io::SmilesFile sf = io::read_smiles_file(a.dataset, so);
      col = std::move(sf.collection);
      skipped = int64_t(sf.skipped.size());
      if (!a.json)
        for (size_t k = 0; k < sf.skipped.size() && k < 20; ++k)
          std::fprintf(stderr, "tessera: skipped %s\n", sf.skipped[k].c_str());
    } else {
      TESSERA_CHECK(a.smiles_column.empty() && !a.skip_invalid, "kernel: ", a.dataset,
                    ": --smiles-column and --skip-invalid apply to SMILES files (.csv, .smi, .smiles[.gz])");
      col = io::read_tu(a.dataset);
    }
    step.finish();
  }
  if (a.limit > 0 && int64_t(col.graphs.size()) > a.limit) col.graphs.resize(size_t(a.limit));
  const bool has_node_labels = !col.graphs.empty() && !col.graphs[0].node_labels.empty();
  const bool has_edge_labels = !col.graphs.empty() && !col.graphs[0].edge_labels.empty();
  Options o;
  o.q = a.q;
  o.tol = a.tol;
  o.max_iter = a.max_iter;
  o.lmin = a.lmin;
  o.normalize = a.normalize;
  o.threads = a.threads;
  o.dtype = parse_dtype(a.dtype);
  o.reorder = reorder::parse_method(a.reorder);
  o.device = a.device == "cpu" ? Device{} : Device{DeviceKind::cuda, 0};
  TESSERA_CHECK(a.device == "cpu" || a.device == "cuda", "kernel: --device ", a.device, " (cpu or cuda)");
  o.node_kernel = !a.node_kernel.empty() ? parse_base_kernel(a.node_kernel)
                  : has_node_labels      ? BaseKernel::KroneckerDelta(0.5)
                                         : BaseKernel::Constant(1.0);
  o.edge_kernel = !a.edge_kernel.empty() ? parse_base_kernel(a.edge_kernel)
                  : has_edge_labels      ? BaseKernel::KroneckerDelta(0.5)
                                         : BaseKernel::Constant(1.0);
  const int64_t N = int64_t(col.graphs.size());
  const int64_t total = N * (N + 1) / 2;
  const auto t0 = std::chrono::steady_clock::now();
  if (!a.json)
    o.progress = [t0](int64_t done, int64_t all) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "\rtessera: %lld / %lld pairs (%.1f%%), %.0f pairs/s   ", (long long)done, (long long)all,
                   100.0 * double(done) / double(std::max<int64_t>(1, all)), s > 0 ? double(done) / s : 0.0);
      if (done == all) std::fprintf(stderr, "\n");
    };
  const MarginalizedGraphKernel mgk(o);
  if (!a.json)
    std::fprintf(stderr, "tessera: %lld graphs, %lld pairs (i <= j), node kernel %s, edge kernel %s, q = %g, %s on %s\n",
                 (long long)N, (long long)total, o.node_kernel.describe().c_str(), o.edge_kernel.describe().c_str(),
                 o.q, dtype_name(o.dtype), o.device.str().c_str());
  const GramResult g = mgk.gram(col.graphs);
  io::write_dense(a.output, g.K);
  const auto& st = g.stats;
  nlohmann::json j = {{"dataset", a.dataset},
                      {"graphs", N},
                      {"skipped_molecules", skipped},
                      {"pairs", st.pairs},
                      {"converged", st.converged},
                      {"failed", st.failed.size()},
                      {"seconds", st.seconds},
                      {"pairs_per_second", st.pairs_per_second()},
                      {"mean_iterations", st.mean_iterations},
                      {"max_iterations", st.max_iterations},
                      {"max_residual", st.max_residual},
                      {"matvec_gflops", st.seconds > 0 ? st.matvec_flops / st.seconds * 1e-9 : 0.0},
                      {"node_kernel", o.node_kernel.describe()},
                      {"edge_kernel", o.edge_kernel.describe()},
                      {"q", o.q},
                      {"dtype", dtype_name(o.dtype)},
                      {"device", device_name(o.device)},
                      {"output", a.output}};
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("gram %lld x %lld -> %s\n", (long long)N, (long long)N, a.output.c_str());
    std::printf("pairs %lld in %.3f s (%.0f pairs/s), PCG iterations mean %.1f max %d, max residual %.2e, "
                "mat-vec %.2f GFLOP/s\n",
                (long long)st.pairs, st.seconds, st.pairs_per_second(), st.mean_iterations, st.max_iterations,
                st.max_residual, st.seconds > 0 ? st.matvec_flops / st.seconds * 1e-9 : 0.0);
  }
  if (!st.failed.empty()) {
    std::fprintf(stderr, "tessera: %zu pair(s) did not converge within %d iterations:\n", st.failed.size(), o.max_iter);
    for (size_t k = 0; k < st.failed.size() && k < 20; ++k)
      std::fprintf(stderr, "  graphs (%lld, %lld): residual %.3e after %d iterations\n", (long long)st.failed[k].i,
                   (long long)st.failed[k].j, st.failed[k].stats.residual, st.failed[k].stats.iterations);
    return 3;
  }
  return 0;
}
}  // namespace
}  // namespace tessera::cli

TESSERA_CLI_COMMAND(
    "kernel", "Marginalized graph kernel: Gram matrix of a TU graph collection or SMILES file", 40, [](CLI::App& sub) {
      auto a = std::make_shared<tessera::cli::KernelArgs>();
      sub.add_option("dataset", a->dataset,
                     "TU collection directory (e.g. ../shared/data/mutag), or a SMILES file .csv/.smi[.gz] "
                     "(molecules through RDKit: element, charge, aromaticity node labels; bond order and "
                     "conjugation edge labels)")
          ->required();
      sub.add_option("--smiles-column", a->smiles_column,
                     "CSV column holding the SMILES (default: the column named smiles, any case), e.g. mol");
      sub.add_flag("--skip-invalid", a->skip_invalid, "drop molecules RDKit rejects (listed on stderr) instead of failing");
      sub.add_option("-o,--output", a->output, "Gram matrix file, .npy (float64) or .csv[.gz]")
          ->capture_default_str()
          ->check(tessera::cli::output_file(tessera::io::check_dense_path));
      sub.add_option("--q", a->q, "stopping probability in (0, 1)")->capture_default_str();
      sub.add_flag("--normalize", a->normalize, "K(G,G') / sqrt(K(G,G) K(G',G'))");
      sub.add_option("--lmin", a->lmin, "1: subtract the single-vertex term")->capture_default_str();
      sub.add_option("--device", a->device, "cpu or cuda")->capture_default_str();
      sub.add_option("--dtype", a->dtype, "solver precision: float32 or float64")->capture_default_str();
      sub.add_option("--node-kernel", a->node_kernel,
                     "node base kernel, e.g. delta:0.5, sqexp:1.0@attributes, product(delta:0.5,sqexp:2@attributes) "
                     "(default: delta:0.5 with node labels, else constant:1)");
      sub.add_option("--edge-kernel", a->edge_kernel, "edge base kernel, e.g. delta:0.5, constant:1 (labels only)");
      sub.add_option("--tol", a->tol, "PCG relative residual (0: 1e-12 float64, 1e-6 float32)")->capture_default_str();
      sub.add_option("--max-iter", a->max_iter, "PCG iteration limit per pair")->capture_default_str();
      sub.add_option("--reorder", a->reorder, "node order for the octiles: none, rcm, partition")->capture_default_str();
      sub.add_option("--limit", a->limit, "use only the first N graphs")->check(tessera::cli::positive());
      sub.add_option("--threads", a->threads, "CPU threads (0 = all)")->check(tessera::cli::non_negative());
      sub.add_flag("--json", a->json, "print the statistics as JSON (no progress lines)");
      return std::function<int()>([a] { return tessera::cli::run_kernel(*a); });
    });
