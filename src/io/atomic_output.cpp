#include "io/atomic_output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/text_input.hpp"
#include "tessera/core/error.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::io::detail {

AtomicOutput::AtomicOutput(std::string path) : path_(std::move(path)) {
  tmp_ = path_ + ".tmp." + std::to_string(::getpid());
  if (ends_with(path_, ".gz")) {
    gz_ = gzopen(tmp_.c_str(), "wb6");
    if (!gz_) fail(path_, ": cannot create ", tmp_, ": ", std::strerror(errno ? errno : EIO));
  } else {
    file_ = std::fopen(tmp_.c_str(), "wb");
    if (!file_) fail(path_, ": cannot create ", tmp_, ": ", std::strerror(errno));
  }
  buf_.reserve(kFlushAt + 64);
}

AtomicOutput::~AtomicOutput() {
  if (done_) return;
  if (gz_) gzclose(gz_);
  if (file_) std::fclose(file_);
  std::remove(tmp_.c_str());
}

void AtomicOutput::fail_io(const char* what) {
  const int e = errno;
  if (gz_) {
    int zerr = 0;
    const char* msg = gzerror(gz_, &zerr);
    fail(path_, ": ", what, " failed: ", zerr == Z_ERRNO ? std::strerror(e) : (msg ? msg : "?"));
  }
  fail(path_, ": ", what, " failed: ", std::strerror(e ? e : EIO));
}

void AtomicOutput::flush_buffer() {
  if (buf_.empty()) return;
  const std::string pending = std::move(buf_);
  buf_.clear();
  buf_.reserve(kFlushAt + 64);
  write(pending.data(), pending.size());
}

void AtomicOutput::write(const void* data, size_t bytes) {
  if (!buf_.empty()) flush_buffer();
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const size_t n = bytes < (size_t(1) << 30) ? bytes : (size_t(1) << 30);
    if (gz_) {
      if (gzwrite(gz_, p, unsigned(n)) != int(n)) fail_io("write");
    } else if (std::fwrite(p, 1, n, file_) != n) {
      fail_io("write");
    }
    p += n;
    bytes -= n;
  }
}

void AtomicOutput::commit() {
  flush_buffer();
  if (gz_) {
    gzFile g = gz_;
    gz_ = nullptr;
    const int rc = gzclose(g);
    if (rc != Z_OK) fail(path_, ": closing ", tmp_, " failed (zlib error ", rc, ")");
  } else {
    FILE* f = file_;
    file_ = nullptr;
    if (std::fflush(f) != 0) {
      const int e = errno;
      std::fclose(f);
      fail(path_, ": flush failed: ", std::strerror(e));
    }
    if (std::fclose(f) != 0) fail(path_, ": close failed: ", std::strerror(errno));
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    fail(path_, ": cannot rename ", tmp_, " onto it: ", std::strerror(errno));
  done_ = true;
}

}  // namespace tessera::io::detail

namespace tessera::io {

void write_file(const std::string& path, std::string_view bytes) {
  detail::AtomicOutput out(path);
  out.write(bytes.data(), bytes.size());
  out.commit();
}

}  // namespace tessera::io
