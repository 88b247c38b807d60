#!/usr/bin/env bash
# Installs what tessera needs from Debian's packages, only what is missing (idempotent).
# Needs root (or sudo) only when something is missing.
set -euo pipefail
PKGS=(build-essential cmake make pkg-config zlib1g-dev libgtest-dev googletest
      libcli11-dev nlohmann-json3-dev libmetis-dev
      libtorch-dev python3-torch libopenblas0-pthread python3-numpy python3-pytest python3-setuptools python3-pip)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing missing Debian packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
