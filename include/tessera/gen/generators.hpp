#pragma once
// Seeded, deterministic graph generators (the same seed gives the same graph on every machine
// and thread count), fast enough for 10^8 edges. They return edge lists; build_csr turns them
// into graphs. Specs like "rmat:scale=20,degree=16,seed=1" parse into these calls.
#include <cstdint>
#include <string>

#include "tessera/graph/csr.hpp"
#include "tessera/graph/dataset.hpp"

namespace tessera::gen {

// Undirected generators (er, ba, ws, grid, clustered, sbm) return every edge in both directions,
// so the CSR's mean row length is the average degree; R-MAT is directed (symmetrize if needed).
// Duplicate edges can occur (G(n,m) and BA sample with replacement): build_csr merges them.
Coo<int64_t> erdos_renyi(int64_t n, double avg_degree, uint64_t seed);            // G(n, m)
Coo<int64_t> barabasi_albert(int64_t n, int m, uint64_t seed);                    // m edges per new node
Coo<int64_t> rmat(int scale, double avg_degree, uint64_t seed,
                  double a = 0.57, double b = 0.19, double c = 0.19);            // Graph500 defaults
struct RmatOptions {
  int scale = 16;                 // 2^scale nodes
  double avg_degree = 16;         // edges = avg_degree * 2^scale (Graph500 edge factor)
  uint64_t seed = 1;
  double a = 0.57, b = 0.19, c = 0.19;  // d = 1 - a - b - c
  double noise = 0;               // noisy R-MAT (Seshadhri, Pinar & Kolda 2013): per-level jitter
  bool scramble = false;          // relabel nodes by a seeded bijection (Graph500), hiding the id locality
};
Coo<int64_t> rmat(const RmatOptions& opt);
Coo<int64_t> watts_strogatz(int64_t n, int k, double p, uint64_t seed);           // Newman-Watts: shortcuts added
Coo<int64_t> grid2d(int64_t rows, int64_t cols);                                  // 4-neighbour road-like lattice
// Clustered graph: `clusters` dense communities of average degree `degree` (mostly intra).
Coo<int64_t> clustered(int64_t n, int64_t clusters, double degree, double p_in, uint64_t seed);

struct SbmOptions {
  int64_t nodes = 2000;
  int classes = 5;
  double avg_degree = 10;
  double p_in_share = 0.8;        // share of a node's edges inside its own class
  int features = 64;
  double feature_signal = 1.0;    // class-mean separation relative to unit noise
  double train = 0.1, val = 0.2;  // shares; the rest is test
  uint64_t seed = 1;
};
// Planted-partition node-classification task: class-informative Gaussian features, symmetric
// graph, stratified random split. The embedded default data set ("sbm").
NodeDataset sbm_task(const SbmOptions& opt);

// Parses "name:key=value,..." (names: er, ba, rmat, ws, grid, clustered, sbm) and builds the
// graph with the given options. Throws tessera::Error naming the unknown key or bad value.
bool is_generator_spec(const std::string& spec);
std::string generator_help();   // one line per generator with its keys and defaults
Csr<int64_t> generate(const std::string& spec, const BuildOptions& build = {});
NodeDataset generate_task(const std::string& spec);  // "sbm:nodes=...,classes=..."

}  // namespace tessera::gen
