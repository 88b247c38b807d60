#include "tessera/core/device.hpp"

#include <cstdlib>
#include <fstream>
#include <new>
#include <string>

#include "tessera/core/error.hpp"

namespace tessera {

#ifdef TESSERA_WITH_CUDA
// Defined in src/cuda/core/runtime.cpp.
Allocator& cuda_default_allocator(const Exec& exec);
bool cuda_runtime_available();
std::string cuda_device_name(int index);
#endif

namespace {
class HostAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes) override {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p && bytes) throw std::bad_alloc();
    return p;
  }
  void deallocate(void* p) override { std::free(p); }
};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      return pos == std::string::npos ? line : line.substr(pos + 2);
    }
  return "unknown";
}
}  // namespace

Allocator& default_allocator(const Exec& exec) {
#ifdef TESSERA_WITH_CUDA
  if (exec.device.is_cuda()) return cuda_default_allocator(exec);
#endif
  TESSERA_CHECK(!exec.device.is_cuda(), "CUDA device requested but tessera was built without CUDA");
  static HostAllocator host;
  return host;
}

Scratch::Scratch(const Exec& exec, size_t bytes)
    : alloc_(exec.alloc ? exec.alloc : &default_allocator(exec)), bytes_(bytes) {
  ptr_ = bytes ? alloc_->allocate(bytes) : nullptr;
}
Scratch::~Scratch() {
  if (ptr_) alloc_->deallocate(ptr_);
}

bool cuda_available() {
#ifdef TESSERA_WITH_CUDA
  return cuda_runtime_available();
#else
  return false;
#endif
}

std::string device_name(const Device& d) {
#ifdef TESSERA_WITH_CUDA
  if (d.is_cuda()) return cuda_device_name(d.index);
#endif
  return "cpu: " + cpu_model();
}

}  // namespace tessera
