#pragma once
// A long step of a command, reported on stderr: "tessera: reading x ..." when it starts,
// "still ..." lines after 5, 10, 20, 40 ... seconds while it runs, and "... done in 1.23 s" at the end.
// stdout stays clean for the result (and for --json).
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace tessera::cli {

class Step {
 public:
  explicit Step(std::string what, bool quiet = false)
      : what_(std::move(what)), quiet_(quiet), start_(std::chrono::steady_clock::now()) {
    if (quiet_) return;
    std::fprintf(stderr, "tessera: %s ...\n", what_.c_str());
    ticker_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mu_);
      for (auto wait = std::chrono::seconds(5); !cv_.wait_for(lock, wait, [this] { return done_; });
           wait = std::chrono::seconds(int64_t(elapsed())))  // next report when the elapsed time doubles
        std::fprintf(stderr, "tessera: still %s (%.0f s)\n", what_.c_str(), elapsed());
    });
  }
  ~Step() { stop(); }
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  // Ends the step, prints its time and returns it in seconds.
  double finish() {
    const double s = elapsed();
    stop();
    if (!quiet_) std::fprintf(stderr, "tessera: %s done in %.3f s\n", what_.c_str(), s);
    return s;
  }

 private:
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    if (ticker_.joinable()) ticker_.join();
  }
  std::string what_;
  bool quiet_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread ticker_;
};

}  // namespace tessera::cli
