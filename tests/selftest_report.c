// SPDX-License-Identifier: GPL-2.0
/*
 * selftest_report.c - run the guest init's BPF selftest reporters on the host.
 *
 * Usage: selftest_report test_verifier|test_progs STDOUT_FILE STDERR_FILE
 *
 * Prints, as KTAP, what qemu/guest/init.c would print for a run of the runner whose standard
 * output and error were these files (tests/fixtures/RUNNER.out and .err), so that
 * tests/harness-test.sh can check report_test_verifier() and report_test_progs() with
 * kunit.py without booting. Exits 0 if the reporter passed the run, 1 if it failed it, 2 on
 * a usage error.
 */
#define main guest_init_main
#include "../qemu/guest/init.c"
#undef main

int main(int argc, char **argv)
{
	struct test t = { .kind = "exec" };
	char *log, *err;

	if (argc != 4 || (strcmp(argv[1], "test_verifier") && strcmp(argv[1], "test_progs"))) {
		fprintf(stderr, "usage: %s test_verifier|test_progs STDOUT_FILE STDERR_FILE\n",
			argv[0]);
		return 2;
	}
	t.name = argv[1];
	t.module = argv[1];
	log = read_all(argv[2]);
	err = read_all(argv[3]);
	if (!log || !err) {
		fprintf(stderr, "%s: cannot read %s or %s\n", argv[0], argv[2], argv[3]);
		return 2;
	}
	out("KTAP version 1\n1..1\n");
	if (!strcmp(argv[1], "test_progs"))
		return !report_test_progs(1, &t, log, err, 1);
	return !report_test_verifier(1, &t, log, err, 1);
}
