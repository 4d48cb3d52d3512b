#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
usage="usage: bench-percpu.sh [-h|--help] [--out DIR] [ARCH...]

Per-CPU BPF access benchmark: the unpatched base against the series tip, in one run, for each
ARCH (default: all), on kernels built with -O2 as distributions build theirs (the variant
ARCH-o2, qemu/arch/ARCH-o2.conf: the everyday guest's configuration and
qemu/config/o2.config, in a build directory of its own). For each kernel (branch bench-base:
no patch; bench-tip: the whole series) it builds (scripts/build.sh), boots with
harness.list=bench harness.only=bpf_percpu_trig,bpf_percpu_bench and collects:

  trigger   qemu/guest/bench/bpf_percpu_trig.c, the shape of the trigger benchmark the seed
            series was measured with: raw tracepoint programs running their body 100 times
            per invocation in a bounded loop (glob-arr-inc with the CPU id fetched once per
            invocation, arr-inc, hash-inc; cpu-id, the helper alone), invoked by test runs
            timed from user space; M ops/s = iterations per second, 5 runs each, reported as
            the median with the min-max spread
  per run   qemu/guest/bench/bpf_percpu_bench.c: the same accesses once per
            BPF_PROG_TEST_RUN repetition, timed in the kernel (median of 5 trials of 10^6
            runs): every number carries a test run's own cost, which compresses the change;
            kept, labelled, because it is the older table's shape
  JIT size  the JIT-ed size of a program calling bpf_get_smp_processor_id() next to one
            calling bpf_ktime_get_ns()

Writes DIR/percpu-bench.tsv (all numbers), DIR/percpu-bench.md (tables: M ops/s base, tip,
change, with the seed series' numbers where it has them) and DIR/percpu-bench-ARCH.png
(gnuplot, the trigger medians with their spread). Under QEMU TCG the rates reflect the
emulator's cost per guest instruction (not hardware's: segment-relative accesses, for one,
differ); compare base and tip of one arch only, and do not read them as hardware speed.

Options:
  --out DIR   write the results into DIR (default: results/ of the repo)
  -h, --help  show this help
Exit codes: 0 done, 5 a build, boot or benchmark failed (nothing written), 64 usage."
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out='' tmp='' npatches='' bench_words=()	# set by bench_options and bench_prepare (lib.sh)
bench_options "$usage" "$@"
arches=$(expand_arches "${bench_words[@]:-all}") || exit 64
bench_prepare
printf 'arch\tkernel\tshape\tname\trun\tmops\tns\tjited_bytes\n' > "$tmp/tsv"

# bench_one ARCH KERNEL APPLY-ARGS...: apply, build, boot the benchmarks on ARCH's -O2
# variant, append to tsv
bench_one() {
	local a=$1 kernel=$2 log
	shift 2
	log=$KS_CACHE/out/$a-o2/bench-percpu-$kernel.log
	bench_boot "$a-o2" "$kernel" bpf_percpu_trig,bpf_percpu_bench "$log" "$@"
	# "# bench: trig NAME run=R mops=M calls=C ms=T", "# bench: NAME mops=M ns=N ..." and
	# "# bench: jited NAME bytes=B", KTAP-nested
	console_ktap "$log" | sed -n 's/^[[:space:]]*# bench: //p' | awk -v a="$a" -v k="$kernel" '
		{ delete v; for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		$1 == "jited" { printf "%s\t%s\tjited\t%s\t\t\t\t%s\n", a, k, $2, v["bytes"]; next }
		$1 == "trig" { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			printf "%s\t%s\ttrigger\t%s\t%s\t%s\t\t\n", a, k, $2, v["run"], v["mops"]; next }
		{ printf "%s\t%s\tper-run\t%s\t1\t%s\t%s\t\n", a, k, $1, v["mops"], v["ns"] }' \
		> "$tmp/one"
	[ "$(grep -c "	trigger	" "$tmp/one")" -eq 20 ] ||
		die "$a $kernel: bpf_percpu_trig did not report 4 x 5 runs (see $log)"
	cat "$tmp/one" >> "$tmp/tsv"
}

for a in $arches; do
	bench_one "$a" base --upto 0
	bench_one "$a" tip
done

# The seed series' changes (../shared/DESIGN.md, section 4: its trigger benchmarks), by arch
# and program; hash-inc's +32.2 % on riscv64 is within the spread of its own "before" runs.
cat > "$tmp/seed" <<'SEED'
arm64	glob-arr-inc	+10.7 %
arm64	arr-inc	+5.4 %
arm64	hash-inc	+2.1 %
riscv64	glob-arr-inc	+24.0 %
riscv64	arr-inc	+23.6 %
riscv64	hash-inc	+32.2 % (noise)
SEED

# Per arch, shape, program and kernel: median, min and max of the runs' M ops/s (awk: mawk
# has no sort function).
awk -F'\t' '
	function median(list,    a, n, i, j, x) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) {
			x = a[i] + 0
			for (j = i - 1; j >= 1 && a[j] + 0 > x; j--)
				a[j + 1] = a[j]
			a[j + 1] = x
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	NR > 1 && $3 != "jited" {
		g = $1 FS $3 FS $4
		if (!(g in seen)) { seen[g] = 1; order[++n] = g }
		k = g FS $2
		runs[k] = runs[k] " " $6
		if (!(k in lo) || $6 + 0 < lo[k]) lo[k] = $6 + 0
		if (!(k in hi) || $6 + 0 > hi[k]) hi[k] = $6 + 0
	}
	END {
		for (i = 1; i <= n; i++) {
			b = order[i] FS "base"; t = order[i] FS "tip"
			printf "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", order[i], median(runs[b]),
				lo[b], hi[b], median(runs[t]), lo[t], hi[t]
		}
	}' "$tmp/tsv" > "$tmp/med"

mkdir -p "$out"
cp "$tmp/tsv" "$out/percpu-bench.tsv"
{
	echo "# Per-CPU BPF access: base against series tip"
	echo
	echo "Generated by: \`scripts/bench-percpu.sh ${arches//$'\n'/ }\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Base: Debian $BASE_PKG $BASE_DEB_VERSION (Linux $BASE_UPSTREAM); tip: the $npatches patches of \`series\`."
	echo "Kernels built with -O2 (\`qemu/arch/ARCH-o2.conf\`: the everyday guest's configuration and"
	echo "\`qemu/config/o2.config\`, CC_OPTIMIZE_FOR_PERFORMANCE, as Debian builds). QEMU TCG on the"
	echo "development machine (2 cores): emulator cost, not hardware speed; compare base and tip"
	echo "within one arch only. Raw numbers: \`percpu-bench.tsv\`."
	echo
	echo "Trigger shape (\`qemu/guest/bench/bpf_percpu_trig.c\`; 100 iterations per invocation, M ops/s ="
	echo "iterations per second, median of 5 runs with the min-max spread; the seed's change where"
	echo "the seed measured it):"
	echo
	echo "| arch | program | base M ops/s | base min-max | tip M ops/s | tip min-max | change | seed |"
	echo "| ---- | ------- | -----------: | -----------: | ----------: | ----------: | -----: | ---: |"
	awk -F'\t' 'NR == FNR { seed[$1 FS $2] = $3; next }
		$2 == "trigger" { s = ($1 FS $3) in seed ? seed[$1 FS $3] : "-"
			printf "| %s | %s | %.2f | %.2f-%.2f | %.2f | %.2f-%.2f | %+.1f %% | %s |\n", $1, $3,
				$4, $5, $6, $7, $8, $9, ($7 / $4 - 1) * 100, s }' "$tmp/seed" "$tmp/med"
	echo
	echo "Per-run shape (\`qemu/guest/bench/bpf_percpu_bench.c\`; one access per BPF_PROG_TEST_RUN"
	echo "repetition, timed in the kernel, median of 5 trials of 10^6 runs: each number carries the cost"
	echo "of a repetition, which compresses the change):"
	echo
	echo "| arch | program | base M ops/s | tip M ops/s | change |"
	echo "| ---- | ------- | -----------: | ----------: | -----: |"
	awk -F'\t' '$2 == "per-run" { printf "| %s | %s | %.2f | %.2f | %+.1f %% |\n", $1, $3, $4, $7,
		($7 / $4 - 1) * 100 }' "$tmp/med"
	echo
	echo "JIT-ed size in bytes of \`call HELPER; exit\` (a call of bpf_ktime_get_ns, which no JIT inlines, for scale):"
	echo
	echo "| arch | helper | base | tip |"
	echo "| ---- | ------ | ---: | --: |"
	awk -F'\t' 'NR > 1 && $3 == "jited" { v[$1 FS $4 FS $2] = $8; if (!seen[$1 FS $4]++) o[n++] = $1 FS $4 }
		END { for (i = 0; i < n; i++) { split(o[i], p, FS)
			printf "| %s | %s | %s | %s |\n", p[1], p[2], v[o[i] FS "base"], v[o[i] FS "tip"] } }' "$tmp/tsv"
} > "$out/percpu-bench.md"

for a in $arches; do
	awk -F'\t' -v a="$a" '$1 == a && $2 == "trigger" { print $3, $4, $5, $6, $7, $8, $9 }' \
		"$tmp/med" > "$tmp/$a.dat"
	gnuplot <<-GP
	set terminal pngcairo size 720,420 noenhanced
	set output "$out/percpu-bench-$a.png"
	set title "$a, -O2, QEMU TCG: per-CPU BPF access, trigger shape (scripts/bench-percpu.sh)"
	set style data histograms
	set style histogram errorbars gap 1 lw 1
	set style fill solid 0.8 border -1
	set ylabel "M ops/s, median and min-max of 5 runs"
	set yrange [0:*]
	set key top left
	plot "$tmp/$a.dat" using 2:3:4:xtic(1) title "base 6.1", "" using 5:6:7 title "series tip"
	GP
done
note "wrote $out/percpu-bench.md, percpu-bench.tsv and percpu-bench-*.png"
