// SPDX-License-Identifier: GPL-2.0
/*
 * selftest_report.c - run the guest init's BPF selftest reporters on the host.
 *
 * Usage: selftest_report test_verifier|test_progs|ktap STDOUT_FILE STDERR_FILE [STATUS]
 *
 * Prints, as KTAP, what qemu/guest/init.c would print for a run of the runner (or, for
 * ktap, of a guest program printing KTAP) whose standard output and error were these files
 * (tests/fixtures/RUNNER.out and .err) and whose exit status was STATUS (default 1; 256 + N:
 * killed by signal N), so that tests/harness-test.sh can check report_test_verifier(),
 * report_test_progs() and report_ktap() with kunit.py without booting. Exits 0 if the
 * reporter passed the run, 1 if it failed it, 2 on a usage error.
 */
#define main guest_init_main
#include "../qemu/guest/init.c"
#undef main

int main(int argc, char **argv)
{
	struct test t = { .kind = "exec" };
	char *log, *err;
	int status = argc == 5 ? atoi(argv[4]) : 1;

	if ((argc != 4 && argc != 5) || (strcmp(argv[1], "test_verifier") &&
					  strcmp(argv[1], "test_progs") && strcmp(argv[1], "ktap"))) {
		fprintf(stderr,
			"usage: %s test_verifier|test_progs|ktap STDOUT_FILE STDERR_FILE [STATUS]\n",
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
	if (!strcmp(argv[1], "ktap"))
		return !report_ktap(1, &t, log, status);
	if (!strcmp(argv[1], "test_progs"))
		return !report_test_progs(1, &t, log, err, status);
	return !report_test_verifier(1, &t, log, err, status);
}
