#!/usr/bin/env bash
# Installs the Debian 12 packages SIOX needs to build, test and run its demo.
# Idempotent and quick when everything is already there (checks dpkg first).
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git python3 procps iproute2
  libuv1-dev libprotobuf-c-dev protobuf-c-compiler
  libpq-dev postgresql postgresql-client
  liblz4-dev libcmocka-dev libjson-c-dev
  munge libmunge-dev libssl-dev
  graphviz gnuplot-nox python3-jsonschema
  glusterfs-server glusterfs-client libglusterfs-dev liburcu-dev uuid-dev
  openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
  clang libclang-rt-14-dev
  libmicrohttpd-dev libjs-d3 chromium
  valgrind strace
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "siox: installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Debian's postgresql package starts a cluster on port 5432; SIOX runs its own
# private cluster instead and needs nothing from the system one.
