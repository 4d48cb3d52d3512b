#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: deps.sh [-h|--help] [--check]

Install the Debian 12 packages the harness needs (as root, with apt-get), or, when not root,
print the exact apt-get line and fail. Packages already installed are not touched.

Options:
  --check      only report what is missing (exit 1 if anything is)
  -h, --help   show this help"
set -euo pipefail
. "$(dirname "$0")/lib.sh"

check=
case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
--check) check=1 ;;
"") ;;
*) echo "$usage" >&2; exit 64 ;;
esac

pkgs="make gcc git python3 jq bc flex bison cpio gzip xz-utils kmod libelf-dev libssl-dev
	dwarves ccache gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu gcc-arm-linux-gnueabihf
	libc6-dev-arm64-cross libc6-dev-riscv64-cross
	qemu-system-x86 qemu-system-arm qemu-system-misc opensbi
	busybox-static quilt b4 gnuplot-nox shellcheck zlib1g-dev dpkg-dev clang llvm lld rsync
	libelf-dev:arm64 zlib1g-dev:arm64"
# The BPF selftest runners link libelf and zlib statically: arm64's come from Debian's
# multiarch packages (scripts/build-selftests.sh); riscv64's are built from Debian's source
# packages, which apt-get source unpacks with dpkg-dev's dpkg-source.
foreign=arm64
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	note "all packages present"
	exit 0
fi
line="dpkg --add-architecture $foreign && apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y$missing"
[ -z "$check" ] || { note "missing:$missing"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
	die "missing Debian packages; run as root:
  $line"
fi
note "installing:$missing"
dpkg --print-foreign-architectures | grep -qx "$foreign" || dpkg --add-architecture "$foreign"
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
