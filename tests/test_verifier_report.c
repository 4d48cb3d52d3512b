// SPDX-License-Identifier: GPL-2.0
/*
 * test_verifier_report.c - run the guest init's test_verifier reporter on the host.
 *
 * Usage: test_verifier_report STDOUT_FILE STDERR_FILE
 *
 * Prints, as KTAP, what qemu/guest/init.c would print for a test_verifier run whose standard
 * output and error were these files (tests/fixtures/test_verifier.out and .err), so that
 * tests/harness-test.sh can check report_test_verifier() with kunit.py without booting.
 * Exits 0 if the reporter passed the run, 1 if it failed it, 2 on a usage error.
 */
#define main guest_init_main
#include "../qemu/guest/init.c"
#undef main

int main(int argc, char **argv)
{
	struct test t = { .name = "test_verifier", .kind = "test_verifier",
			  .module = "test_verifier" };
	char *log, *err;

	if (argc != 3) {
		fprintf(stderr, "usage: %s STDOUT_FILE STDERR_FILE\n", argv[0]);
		return 2;
	}
	log = read_all(argv[1]);
	err = read_all(argv[2]);
	if (!log || !err) {
		fprintf(stderr, "%s: cannot read %s or %s\n", argv[0], argv[1], argv[2]);
		return 2;
	}
	out("KTAP version 1\n1..1\n");
	return !report_test_verifier(1, &t, log, err, 1);
}
