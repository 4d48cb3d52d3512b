# SPDX-License-Identifier: GPL-2.0
# Entry points; every target is a script in scripts/ (run one with --help for its options).
ARCH ?= x86_64
APPEND ?=

.PHONY: all run check harness-test base apply export quilt-check deps bisect bisect-verify lint help

all: run

run:
	scripts/run.sh --append "$(APPEND)" $(ARCH)

check:
	scripts/check.sh

harness-test:
	tests/harness-test.sh

bisect:
	scripts/bisect.sh $(ARCH)

bisect-verify:
	scripts/bisect-verify.sh

lint:
	scripts/lint-series.sh

deps:
	scripts/deps.sh

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
