// The tessera op library (libtessera_torch.so). This file opens the `tessera` namespace; each
// operator family adds its schemas with TORCH_LIBRARY_FRAGMENT(tessera, m) in its own file
// (src/torch/<family>_op.cpp) and registers CPU / CUDA / Autograd kernels there.
#include <torch/library.h>

#include <string>

namespace {
std::string version() { return "0.1.0"; }
}  // namespace

TORCH_LIBRARY(tessera, m) {
  m.def("version() -> str", &version);
}
