#pragma once
// Where an operator runs and with which stream and allocator. The core never uses the legacy
// default stream and never calls cudaMalloc in a hot path: the caller passes its stream and
// (optionally) an allocator; the torch layer passes torch's current stream and caching allocator.
#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera {

enum class DeviceKind : uint8_t { cpu, cuda };

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;
  bool is_cuda() const { return kind == DeviceKind::cuda; }
  bool operator==(const Device&) const = default;
  std::string str() const { return is_cuda() ? "cuda:" + std::to_string(index) : "cpu"; }
};

// Scratch memory on the operator's device. Implementations: torch's caching allocator (torch
// layer), a stream-ordered pool (default for CUDA), malloc (CPU).
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p) = 0;
};

struct Exec {
  Device device{};
  void* stream = nullptr;         // cudaStream_t on CUDA; nullptr means a per-thread stream
  Allocator* alloc = nullptr;     // nullptr: the default allocator for the device
  int threads = 0;                // CPU threads; 0 = OpenMP's default
  static Exec cpu() { return Exec{}; }
};

// The default allocator for a device (stream-ordered pool on CUDA, malloc on CPU).
Allocator& default_allocator(const Exec& exec);

// A scratch buffer from exec's allocator, released at scope exit.
class Scratch {
 public:
  Scratch(const Exec& exec, size_t bytes);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return ptr_; }
  template <class T> T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }
 private:
  Allocator* alloc_;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// True when the CUDA backend is compiled in and a device is visible.
bool cuda_available();
// "NVIDIA H200 (sm_90)" or "cpu: <model>"; used as the tuner-cache key and in benchmark JSON.
std::string device_name(const Device& d);

}  // namespace tessera
