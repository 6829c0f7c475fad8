/*-------------------------------------------------------------------------
 *
 * runner.c
 *	  The engine unit tests' entry point (test/engine/test_engine): probes
 *	  the GPU, runs the tests of the analytics named by its flags, or of
 *	  every one without a flag, and prints the count.
 *
 *	  test_engine                  every test, in the order below
 *	  test_engine --outliers       outlier scores, odp_top_n and SolvingSet
 *	  test_engine --knn            k nearest neighbours, the cost model
 *	  test_engine --integer        k-NN and outliers on integer data, ties
 *	  test_engine --precision      k-NN and outliers on float64 rows
 *	  test_engine --pearson        correlations
 *	  test_engine --skyline        skylines and skybands
 *	  test_engine --intervals      region matching
 *	  test_engine --distributed    the distributed forms (sharded tables)
 *	  test_engine --devices        device sets (several GPUs)
 *	  test_engine --pieces         device copies made piece by piece
 *
 * Several flags run those tests, in the order above.  Output: one line per
 * check, then "N passed, N failed"; the exit status is non-zero when a
 * check failed (2 for an unknown argument).
 *
 * Copyright (c) 2026, odp_gpu developers
 *
 * IDENTIFICATION
 *	  test/engine/runner.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* Each analytic's tests, behind its flag; an analytic may have several. */
static const struct
{
	const char *flag;
	void		(*run) (void);
}			suites[] = {
	{"--outliers", run_outlier_tests},
	{"--outliers", run_solvingset_tests},
	{"--knn", run_knn_tests},
	{"--knn", run_knn_cost_tests},
	{"--integer", run_integer_tests},
	{"--spatial", run_spatial_tests},
	{"--precision", run_precision_tests},
	{"--pearson", run_pearson_tests},
	{"--skyline", run_skyline_tests},
	{"--intervals", run_interval_tests},
	{"--distributed", run_distributed_tests},
	{"--devices", run_device_tests},
	{"--pieces", run_piece_copy_tests},
};

#define SUITE_COUNT (sizeof(suites) / sizeof(suites[0]))

/* Whether flag is one of the suites' flags. */
static bool
known_flag(const char *flag)
{
	for (size_t s = 0; s < SUITE_COUNT; s++)
		if (strcmp(suites[s].flag, flag) == 0)
			return true;
	return false;
}

/* Whether the command line names flag (no argument: every flag). */
static bool
wanted(int argc, char **argv, const char *flag)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], flag) == 0)
			return true;
	return false;
}

int
main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!known_flag(argv[i]))
		{
			fprintf(stderr, "unknown argument %s; usage: %s [--outliers] [--knn] [--integer] [--spatial] "
					"[--precision] [--pearson] [--skyline] [--intervals] [--distributed] [--devices] [--pieces]\n",
					argv[i], argv[0]);
			return 2;
		}
	probe_gpu();
	for (size_t s = 0; s < SUITE_COUNT; s++)
		if (wanted(argc, argv, suites[s].flag))
			suites[s].run();
	return test_summary();
}
