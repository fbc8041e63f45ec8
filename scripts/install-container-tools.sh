#!/usr/bin/env bash
# (nftables: the host firewall that keeps app containers off host services, src/containers/appNetworkFirewall.ts.)
# Installs the container tooling graphx uses (podman serving the Docker Engine API, runc, buildah, skopeo,
# mmdebstrap for the offline base image, docker-registry for the loopback registry in tests, busybox-static for
# the engine tests' one-file image, Debian's python3 whose crypt module hashes the test registry's htpasswd), and the
# test tools of the same kind: chromium (headless browser tests, driven by playwright-core) and docker-compose (`docker-compose config` of the project's compose file).
# Idempotent: apt runs only when a tool is missing, and `apt-get update` at most once.
set -euo pipefail

packages=(podman runc buildah skopeo mmdebstrap docker-registry busybox-static python3 chromium docker-compose nftables)
# The command each package provides, to tell whether it is already there without asking dpkg per call.
declare -A probe=(
  [podman]=podman [runc]=runc [buildah]=buildah [skopeo]=skopeo [mmdebstrap]=mmdebstrap
  [docker-registry]=docker-registry [busybox-static]=busybox [python3]=/usr/bin/python3 [chromium]=chromium
  [docker-compose]=docker-compose [nftables]=nft
)

missing=()
for pkg in "${packages[@]}"; do
  command -v "${probe[$pkg]}" >/dev/null 2>&1 || missing+=("$pkg")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "== container tools present"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "== container tools missing (${missing[*]}) and no apt-get: the process runner will be used" >&2
  exit 0
fi

echo "== installing container tools: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q "${missing[@]}"
