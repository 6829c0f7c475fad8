# odp_gpu: PGXS build of the PostgreSQL side (src/, C) and the engine
# (kernels/, C and CUDA).  Override CUDA_HOME, NVCC, CUDA_ARCH_FLAGS or
# NVCC_OPTFLAGS on the command line; PG_CONFIG picks the server.

EXTENSION = odp_gpu
MODULE_big = odp_gpu
PGFILEDESC = "odp_gpu - outliers, k-NN, correlation, skyline and region matching on the GPU"

DATA = $(wildcard sql/odp_gpu--*.sql)

SRC_OBJS = src/odp_gpu.o src/settings.o src/args.o src/input.o src/input_regions.o \
	src/engine_glue.o src/outliers.o src/knn.o src/pearson.o src/skyline.o \
	src/intervals.o src/aggregates.o src/gpu_info.o src/planner_support.o \
	src/dist_wire.o src/node.o src/shards.o src/node_conn.o src/dist.o
ENGINE_C_OBJS = kernels/engine_common.o kernels/outliers.o kernels/knn.o \
	kernels/cpu_knn.o kernels/topn.o kernels/solvingset.o \
	kernels/cpu_solvingset.o kernels/pearson.o kernels/cpu_pearson.o \
	kernels/skyline.o kernels/cpu_skyline.o kernels/host_tasks.o kernels/host_sort.o \
	kernels/intervals.o kernels/cpu_intervals.o kernels/knn_dist.o kernels/ss_dist.o \
	kernels/device_set.o \
	kernels/pair_relay.o kernels/split_knn.o kernels/split_corr.o \
	kernels/split_skyline.o kernels/split_intervals.o kernels/split_solvingset.o
# WITH_CUDA=no builds a CPU-only library (no CUDA toolkit needed).
WITH_CUDA ?= yes
ifeq ($(WITH_CUDA),no)
ENGINE_CU_OBJS = kernels/gpu_disabled.o
else
ENGINE_CU_OBJS = kernels/gpu_runtime.o kernels/gpu_knn.o kernels/gpu_knn_run.o \
	kernels/gpu_knn_search.o kernels/gpu_knn_tc.o kernels/gpu_outliers.o kernels/gpu_solvingset.o \
	kernels/gpu_blas.o kernels/gpu_pearson.o kernels/gpu_skyline.o \
	kernels/gpu_intervals.o
endif
OBJS = $(SRC_OBJS) $(ENGINE_C_OBJS) $(ENGINE_CU_OBJS)

# Every sql/*.sql that is not an install or upgrade script is a regress test.
REGRESS = $(sort $(patsubst sql/%.sql,%,$(filter-out sql/odp_gpu--%,$(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=.

CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
# Machine code for Ampere and Hopper plus PTX so newer GPUs JIT-compile it.
CUDA_ARCH_FLAGS ?= -gencode=arch=compute_80,code=sm_80 \
	-gencode=arch=compute_90,code=sm_90 \
	-gencode=arch=compute_90,code=compute_90
NVCC_OPTFLAGS ?= -O3
# -fmad=false: distances must not use fused multiply-add, so that the GPU
# computes bit-for-bit what the CPU path computes (see odp_distance.h).
NVCCFLAGS = $(CUDA_ARCH_FLAGS) $(NVCC_OPTFLAGS) -std=c++17 -fmad=false \
	-Xcompiler -fPIC -Xcompiler -fvisibility=hidden -Ikernels \
	-DODP_CUDA_LIBDIR='"$(CUDA_HOME)/lib64"'

PG_CPPFLAGS = -Ikernels
# -ffp-contract=off: same reason as -fmad=false above, for the host
# compiler; -O3 -fno-math-errno let the distance loops vectorise (SSE2,
# lane by lane the same IEEE operations, so the same bits).
ENGINE_CFLAGS = -O3 -fno-math-errno -ffp-contract=off -pthread
# cudart is linked statically: the library then loads on hosts with no
# CUDA runtime and no driver, and finds the driver (libcuda) at first use.
ifeq ($(WITH_CUDA),no)
SHLIB_LINK += -lpthread -lm
else
SHLIB_LINK += -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -lpthread -ldl -lrt -lm
endif

EXTRA_CLEAN = test/engine/test_engine test/bench/ss_bench test/bench/knn_bench \
	test/bench/corr_bench test/bench/corr_bench_trace test/bench/sky_bench \
	test/bench/iv_bench kernels/*.o src/*.o

override with_llvm = no

# The distributed calls reach the nodes with libpq, as postgres_fdw does.
# LIBPQ_LIBS overrides where it is linked from (e.g. a relocated bundle).
PG_CPPFLAGS += -I$(shell $(PG_CONFIG) --includedir)
LIBPQ_LIBS ?= -L$(shell $(PG_CONFIG) --libdir) -lpq
SHLIB_LINK_INTERNAL = $(LIBPQ_LIBS)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(ENGINE_C_OBJS) kernels/gpu_disabled.o: CFLAGS += $(ENGINE_CFLAGS)

kernels/%.o: kernels/%.cu kernels/*.h $(wildcard kernels/*.cuh)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<

$(OBJS): kernels/odp_engine.h
$(SRC_OBJS): $(wildcard src/*.h)
$(ENGINE_C_OBJS) kernels/gpu_disabled.o: $(wildcard kernels/*.h)

# Engine unit tests: no server needed; the GPU part runs where a GPU is.
ENGINE_TEST_SRCS = $(wildcard test/engine/*.c)
test/engine/test_engine: $(ENGINE_TEST_SRCS) $(ENGINE_C_OBJS) $(ENGINE_CU_OBJS)
	$(CC) -std=c11 -O2 -Wall -Ikernels $(ENGINE_CFLAGS) -o $@ $(ENGINE_TEST_SRCS) \
		$(ENGINE_C_OBJS) $(ENGINE_CU_OBJS) $(SHLIB_LINK)

.PHONY: engine-test
engine-test: test/engine/test_engine
	test/engine/test_engine

# SolvingSet benchmark and exactness check (no server; GPU part needs a GPU).
test/bench/ss_bench: test/bench/ss_bench.c $(ENGINE_C_OBJS) $(ENGINE_CU_OBJS)
	$(CC) -std=c11 -O2 -Wall -Ikernels $(ENGINE_CFLAGS) -o $@ $< \
		$(ENGINE_C_OBJS) $(ENGINE_CU_OBJS) $(SHLIB_LINK)

# k-NN benchmark and GPU-vs-CPU check (no server; GPU part needs a GPU).
test/bench/knn_bench: test/bench/knn_bench.c $(ENGINE_C_OBJS) $(ENGINE_CU_OBJS)
	$(CC) -std=c11 -O2 -Wall -Ikernels $(ENGINE_CFLAGS) -o $@ $< \
		$(ENGINE_C_OBJS) $(ENGINE_CU_OBJS) $(SHLIB_LINK)

# Correlation benchmark (no server; GPU part needs a GPU); the _trace
# variant also times the GPU path's stages (a separate build of its file).
test/bench/corr_bench: test/bench/corr_bench.c $(ENGINE_C_OBJS) $(ENGINE_CU_OBJS)
	$(CC) -std=c11 -O2 -Wall -Ikernels $(ENGINE_CFLAGS) -o $@ $< \
		$(ENGINE_C_OBJS) $(ENGINE_CU_OBJS) $(SHLIB_LINK)

test/bench/knn_bench test/bench/corr_bench test/bench/corr_bench_trace \
	test/bench/sky_bench test/bench/iv_bench: test/bench/bench_rng.h

# Skyline workloads and engine timings (no server; GPU part needs a GPU).
test/bench/sky_bench: test/bench/sky_bench.c $(ENGINE_C_OBJS) $(ENGINE_CU_OBJS)
	$(CC) -std=c11 -O2 -Wall -Ikernels $(ENGINE_CFLAGS) -o $@ $< \
		$(ENGINE_C_OBJS) $(ENGINE_CU_OBJS) $(SHLIB_LINK)

# Region matching workloads and engine timings (no server; GPU part needs a GPU).
test/bench/iv_bench: test/bench/iv_bench.c $(ENGINE_C_OBJS) $(ENGINE_CU_OBJS)
	$(CC) -std=c11 -O2 -Wall -Ikernels $(ENGINE_CFLAGS) -o $@ $< \
		$(ENGINE_C_OBJS) $(ENGINE_CU_OBJS) $(SHLIB_LINK) -lm

kernels/gpu_pearson_trace.o: kernels/gpu_pearson.cu kernels/*.h $(wildcard kernels/*.cuh)
	$(NVCC) $(NVCCFLAGS) -DODP_CORR_TRACE -c -o $@ $<

test/bench/corr_bench_trace: test/bench/corr_bench.c $(ENGINE_C_OBJS) \
		$(filter-out kernels/gpu_pearson.o,$(ENGINE_CU_OBJS)) kernels/gpu_pearson_trace.o
	$(CC) -std=c11 -O2 -Wall -Ikernels $(ENGINE_CFLAGS) -DODP_CORR_TRACE -o $@ $< \
		$(ENGINE_C_OBJS) $(filter-out kernels/gpu_pearson.o,$(ENGINE_CU_OBJS)) \
		kernels/gpu_pearson_trace.o $(SHLIB_LINK)
