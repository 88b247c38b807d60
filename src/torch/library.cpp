// The tessera op library: TORCH_LIBRARY(tessera, m) declares every op schema here, so the schema
// list is in one place; each family's file registers its CPU/CUDA/Autograd kernels.
#include <torch/library.h>

TORCH_LIBRARY(tessera, m) {
  m.def("version() -> str");
}

namespace {
std::string version() { return "0.1.0"; }
}  // namespace

TORCH_LIBRARY_IMPL(tessera, CompositeExplicitAutograd, m) {
  m.impl("version", TORCH_FN(version));
}
