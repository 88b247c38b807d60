#pragma once
// Provenance shared by the C++ benchmark drivers (bench_common.py is the Python twin): every JSON
// record carries the UTC date and the commit it measured.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace tessera::bench {

inline std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// TESSERA_COMMIT when set (scripts/gpu_session.sh exports it: on the GPU machine the tree is a
// copy inside a stale git checkout, whose HEAD would be wrong), else the source tree's git HEAD,
// else "unknown".
inline std::string git_commit() {
  if (const char* c = std::getenv("TESSERA_COMMIT"); c && *c) return c;
  const std::string cmd = std::string("git -C ") + TESSERA_SOURCE_DIR + " rev-parse HEAD 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "unknown";
  char buf[64] = {0};
  const bool ok = std::fgets(buf, sizeof buf, p) != nullptr;
  pclose(p);
  std::string s = ok ? buf : "unknown";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s.empty() ? "unknown" : s;
}

}  // namespace tessera::bench
