#!/usr/bin/env bash
# Prepares .carry/ (ignored by git) for the GPU machine, which installs nothing: Debian packages
# it lacks (unpacked there by gpu_session.sh into .carry/root, never into /) and GoogleTest source.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.carry/' .git/info/exclude 2>/dev/null || echo '/.carry/' >> .git/info/exclude
mkdir -p .carry/debs .carry/data
for d in mutag ptc_mr enzymes proteins nci1 cora pubmed citeseer road-chicago-regional; do
  if [ -d "../shared/data/$d" ]; then cp -r "../shared/data/$d" .carry/data/; fi
done
(cd .carry/debs && apt-get download libmetis5 libmetis-dev zlib1g-dev libcli11-dev nlohmann-json3-dev)
rm -rf .carry/googletest && cp -r /usr/src/googletest .carry/googletest
git rev-parse HEAD > .carry/COMMIT  # the GPU machine gets no .git: gpu_session.sh reads the commit here
