#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: build.sh [-h|--help] [--debug] [--fragment FILE] [--config-only] [--src DIR] ARCH

Configure and build the guest kernel for ARCH out of tree (O=) with ccache: tinyconfig, then
qemu/config/common.config, qemu/config/BUILD_NAME.config (or the fragments CONFIG_FRAGMENTS
of the arch file names, e.g. riscv64 and up for riscv64-up), the options of
qemu/config/series.config whose symbol the tree's Kconfig defines (checked only where their
'if CONFIG_COND' holds), and
qemu/config/debug.config with --debug, merged by the kernel's scripts/kconfig/merge_config.sh. Fails, listing them, if any
option the fragments request is not set so in the final .config. Image and modules are built in one make
invocation (module BTF must match vmlinux).

An arch file with BASE_CONFIG=defconfig or debian:DEBARCH (make distro) starts from the
kernel's defconfig or from Debian's configuration (scripts/fetch-distro-config.sh) instead of
tinyconfig and common.config, and the build fails if the final .config changes any option of
that configuration that no fragment names (scripts/distro-config-check.sh). Of its modules
only those qemu/guest/*.list name are built (single-module targets, after the image), as
the guest loads no other.

A finished build writes the git tree id of the sources it was made from (uncommitted changes
included) into BUILD-DIR/source-tree; scripts/boot.sh boots it only for that tree.

Options:
  --debug      also merge qemu/config/debug.config (KASAN, lockdep, kmemleak, DEBUG_WX;
               the arch file's DEBUG_FRAGMENTS instead, if it names any),
               building in its own directory (\$KSERIES_CACHE/build/BUILD_NAME-debug); the
               same as KSERIES_DEBUG=1 in the environment
  --fragment FILE
               merge FILE (a kconfig fragment) last; may be given more than once
  --config-only
               stop after making and checking the .config (nothing is built)
  --src DIR    kernel source tree (default: the cached base tree, see scripts/lib.sh)
  -h, --help   show this help

Environment: JOBS (make -j, default: number of CPUs + 1), KSERIES_CACHE, KSERIES_DEBUG."
set -euo pipefail
. "$(dirname "$0")/lib.sh"

extra_frags=()
config_only=
src=$KS_SRC
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) echo "$usage"; exit 0 ;;
	--debug) export KSERIES_DEBUG=1 ;;
	--fragment) extra_frags+=("$(realpath "$2")"); shift ;;
	--config-only) config_only=1 ;;
	--src) src=$2; shift ;;
	-*) echo "$usage" >&2; exit 64 ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 1 ] || { echo "$usage" >&2; exit 64; }
load_arch "$1"
ks_lock
[ -f "$src/Makefile" ] || die "no kernel tree at $src (run scripts/fetch-base.sh)"

cfgdir=$KS_CACHE/config/$BUILD_NAME
mkdir -p "$KS_BUILD" "$cfgdir" "$CCACHE_DIR"
jobs=${JOBS:-$(($(nproc) + 1))}
# Fixed build version (the "#N" that counts links), date, user and host: identical sources
# give a byte-identical image (scripts/bisect.sh shares one boot among such cells).
export KBUILD_BUILD_VERSION=1 KBUILD_BUILD_TIMESTAMP="$KS_BASE_DATE" KBUILD_BUILD_USER=kseries \
	KBUILD_BUILD_HOST=kseries

# Variants of an arch (same BUILD_NAME) share its build and its fragment; a variant with its
# own build lists its fragments in CONFIG_FRAGMENTS. common.config completes tinyconfig into
# a guest; a distribution's configuration is one already.
frags=()
[ -n "${BASE_CONFIG:-}" ] || frags+=("$KS_ROOT/qemu/config/common.config")
for f in ${CONFIG_FRAGMENTS:-$BUILD_NAME}; do
	frags+=("$KS_ROOT/qemu/config/$f.config")
done
# Options the series adds: only those this tree (a bisection step, the base) knows; an
# option whose condition ("if CONFIG_COND") ends up unset is excused from the check below.
: > "$cfgdir/series.config"
excusable=()
while read -r opt _ cond; do
	case "$opt" in
	CONFIG_*=*) ;;
	*) continue ;;
	esac
	sym=${opt%%=*}; sym=${sym#CONFIG_}
	if grep -rqsx --include='Kconfig*' -e "config $sym" -e "menuconfig $sym" "$src"; then
		echo "$opt" >> "$cfgdir/series.config"
		[ -z "$cond" ] || excusable+=("$opt $cond")
	fi
done < <(grep -v '^#' "$KS_ROOT/qemu/config/series.config")
frags+=("$cfgdir/series.config")
if [ -n "${KSERIES_DEBUG:-}" ]; then
	for f in ${DEBUG_FRAGMENTS:-debug}; do
		frags+=("$KS_ROOT/qemu/config/$f.config")
	done
fi
frags+=("${extra_frags[@]}")

# Make the config in a scratch build dir, and install it only when it changed, so an
# unchanged config never dirties the real build.
case "${BASE_CONFIG:-tinyconfig}" in
tinyconfig|defconfig)
	kmake "$src" O="$cfgdir" -s "${BASE_CONFIG:-tinyconfig}" >/dev/null
	cp "$cfgdir/.config" "$cfgdir/base.config"
	;;
debian:*)
	dcfg=$("$KS_ROOT/scripts/fetch-distro-config.sh" "${BASE_CONFIG#debian:}") ||
		die "no Debian configuration for $ARCH_NAME"
	cp "$dcfg" "$cfgdir/base.config"
	;;
*) die "qemu/arch/$ARCH_NAME.conf: BASE_CONFIG '$BASE_CONFIG' is none of tinyconfig, defconfig, debian:DEBARCH" ;;
esac
# shellcheck disable=SC2086 # MAKE_EXTRA: make variables, split on spaces
(cd "$src" && env ARCH="$KARCH" CROSS_COMPILE="$CROSS" CC="$(kcc)" LLVM="${LLVM:-}" ${MAKE_EXTRA:-} \
	scripts/kconfig/merge_config.sh -O "$cfgdir" "$cfgdir/base.config" "${frags[@]}" \
	>"$cfgdir/merge.log" 2>&1) || { cat "$cfgdir/merge.log" >&2; die "merge_config.sh failed"; }

# The request for an option is its line in the last fragment that names it (a later
# fragment overrides an earlier one, as in merge_config.sh).
requests=$(config_requests "${frags[@]}")
for e in "${excusable[@]}"; do
	read -r opt cond <<< "$e"
	grep -qx "$cond=y" "$cfgdir/.config" ||
		requests=$(grep -vF -- "$(printf '\t%s' "$opt")" <<< "$requests" || true)
done
missing=$(config_missing "$cfgdir/.config" <<< "$requests")
[ -z "$missing" ] || die "requested options not set in the final .config for $ARCH_NAME:
$missing"
if [ -n "${BASE_CONFIG:-}" ]; then
	"$KS_ROOT/scripts/distro-config-check.sh" "$cfgdir/base.config" "$cfgdir/.config" \
		"${frags[@]}" || die "the .config for $ARCH_NAME differs from its $BASE_CONFIG base"
fi
if [ -n "$config_only" ]; then
	note "config for $ARCH_NAME checked: $cfgdir/.config"
	exit 0
fi

# The source tree of this build is recorded once the build has finished (scripts/boot.sh
# refuses to boot a build of another tree); a build that stops half-way records none.
tree=$(src_tree "$src")
rm -f "$KS_BUILD/$KS_TREE_RECORD"
if ! cmp -s "$cfgdir/.config" "$KS_BUILD/.config"; then
	cp "$cfgdir/.config" "$KS_BUILD/.config"
fi
kmake "$src" O="$KS_BUILD" -s olddefconfig
# The tree's own pahole options without -j: pahole 1.24 (Debian 12) encodes BTF in parallel
# threads that emit types in the order they finish, so each link gives another .BTF section
# and another image (pahole 1.26 added --btf_features=reproducible_build for this).
pahole_flags=$(PAHOLE=pahole "$src/scripts/pahole-flags.sh" | sed 's/\(^\| \)-j\( \|$\)/\1/')
note "building $ARCH_NAME in $KS_BUILD (-j$jobs)"
if [ -z "${BASE_CONFIG:-}" ]; then
	kmake "$src" O="$KS_BUILD" -j"$jobs" PAHOLE_FLAGS="$pahole_flags" all
else
	kmake "$src" O="$KS_BUILD" -j"$jobs" PAHOLE_FLAGS="$pahole_flags" "${IMAGE##*/}"
	# The guest's modules that this configuration has (=m), as single-module targets.
	kos=()
	for m in $(guest_modules); do
		ko=$(module_path "$src" "$KS_BUILD/.config" "$m")
		[ -z "$ko" ] || kos+=("$ko")
	done
	[ ${#kos[@]} -eq 0 ] ||
		kmake "$src" O="$KS_BUILD" -j"$jobs" PAHOLE_FLAGS="$pahole_flags" "${kos[@]}"
fi
[ -f "$KS_BUILD/$IMAGE" ] || die "build finished without $IMAGE"
now=$(src_tree "$src")
[ "$now" = "$tree" ] ||
	die "the sources in $src changed during the build (tree $tree, now $now); build again"
echo "$tree" > "$KS_BUILD/$KS_TREE_RECORD"
note "built $KS_BUILD/$IMAGE"
