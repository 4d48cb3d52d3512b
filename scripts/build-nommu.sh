#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: build-nommu.sh [-h|--help]

Compile check of the series with CONFIG_MMU=n, where execmem is not built and its users take
the stubs of include/linux/vmalloc.h: applies the series (scripts/apply.sh), configures
riscv64's nommu_virt_defconfig plus qemu/config/nommu.config (BPF syscall, debugfs,
kallsyms) with the kernel's scripts/kconfig/merge_config.sh, checks that every option of the
fragment holds, and builds vmlinux in \$KSERIES_CACHE/build/riscv64-nommu (compiler and
cross prefix from qemu/arch/riscv64.conf). Nothing is booted: a no-MMU riscv64 kernel runs
flat binaries (BINFMT_FLAT), not the harness's static ELF programs.

Options:
  -h, --help   show this help
Exit codes: 0 built, 1 the build or the config check failed, 64 usage."
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case "${1:-}" in
-h|--help) echo "$usage"; exit 0 ;;
"") ;;
*) echo "$usage" >&2; exit 64 ;;
esac
load_arch riscv64
ks_lock
"$KS_ROOT/scripts/apply.sh" >/dev/null
frag=$KS_ROOT/qemu/config/nommu.config
obj=$KS_CACHE/build/riscv64-nommu
mkdir -p "$obj" "$CCACHE_DIR"
export KBUILD_BUILD_TIMESTAMP="$KS_BASE_DATE" KBUILD_BUILD_USER=kseries KBUILD_BUILD_HOST=kseries
kmake "$KS_SRC" O="$obj" -s nommu_virt_defconfig
(cd "$KS_SRC" && ARCH="$KARCH" CROSS_COMPILE="$CROSS" \
	scripts/kconfig/merge_config.sh -O "$obj" "$obj/.config" "$frag" >"$obj/merge.log" 2>&1) ||
	{ cat "$obj/merge.log" >&2; die "merge_config.sh failed"; }
missing=$(config_requests "$frag" | config_missing "$obj/.config")
[ -z "$missing" ] || die "options of nommu.config not set in the final .config:
$missing"
note "building riscv64 with CONFIG_MMU=n in $obj"
kmake "$KS_SRC" O="$obj" -s -j"${JOBS:-$(($(nproc) + 1))}" vmlinux
note "riscv64 CONFIG_MMU=n: built $obj/vmlinux"
