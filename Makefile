# SPDX-License-Identifier: GPL-2.0
# Entry points; every target is a script in scripts/ (run one with --help for its options).
# ARCH from the command line only (make ARCH=arm64): an ARCH exported in the environment,
# as kernel developers often have, does not leak in. bisect defaults to all arches.
ARCH = x86_64
# Command-line variables (ARCH=riscv64, V=1) reach the scripts through the environment only:
# in MAKEFLAGS they would override the kernel's own ARCH=riscv and V in every make the
# scripts run (kbuild, merge_config.sh, the selftests).
MAKEOVERRIDES :=
APPEND =
BUDGET =
FORCE =
BISECT_ARCH = $(if $(filter command line,$(origin ARCH)),$(ARCH),all)

.PHONY: all run debug distro nommu check check-full harness-test base apply export quilt-check deps bisect bisect-verify distro-verify lint \
	cover-letter send maintainers bench-percpu bench-batch bench-execmem bench-bpf-load \
	selftests-compare help

all: run

run:
	scripts/run.sh --append "$(APPEND)" $(ARCH)

debug:
	scripts/run.sh --debug $(ARCH)

# The series on the distributions' configurations (qemu/arch/ARCH-distro.conf: Debian's for
# x86_64 and arm64, defconfig for riscv64), each also with the JIT off (ARCH-distro-interp):
# make distro ARCH=x86_64|arm64|riscv64, all three without ARCH. distro-verify: how many committed runs are current (make check reports it).
distro:
	scripts/run.sh $(foreach a,$(if $(filter all,$(BISECT_ARCH)),x86_64 arm64 riscv64,$(BISECT_ARCH)),$(a)-distro $(a)-distro-interp)

distro-verify:
	scripts/distro-verify.sh

check:
	scripts/check.sh

check-full:
	scripts/check.sh --full

harness-test:
	tests/harness-test.sh

bisect:
	scripts/bisect.sh $(if $(BUDGET),--budget $(BUDGET)) $(if $(FORCE),--force) $(BISECT_ARCH)

bisect-verify:
	scripts/bisect-verify.sh

lint:
	scripts/lint-series.sh

cover-letter:
	scripts/cover-letter.sh

send:
	scripts/send.sh

bench-percpu:
	scripts/bench-percpu.sh $(BISECT_ARCH)

bench-batch:
	scripts/bench-batch.sh

bench-execmem:
	scripts/bench-execmem.sh $(BISECT_ARCH)

bench-bpf-load:
	scripts/bench-bpf-load.sh $(BISECT_ARCH)

selftests-compare:
	scripts/selftests-compare.sh $(BISECT_ARCH)

maintainers:
	scripts/maintainers-check.sh

deps:
	scripts/deps.sh

nommu:
	scripts/build-nommu.sh

base:
	scripts/fetch-base.sh

apply:
	scripts/apply.sh

export:
	scripts/export.sh

quilt-check:
	scripts/quilt-check.sh

help:
	@sed -n 's/^usage="//p' scripts/*.sh tests/*.sh
