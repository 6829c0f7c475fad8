# odp_gpu: PGXS build of the PostgreSQL side (src/, C) and the engine
# (kernels/, C and CUDA).  Override CUDA_HOME, NVCC, CUDA_ARCH_FLAGS or
# NVCC_OPTFLAGS on the command line; PG_CONFIG picks the server.
#
# Include paths say who may include what: src/ sees kernels/include/ (the
# engine's public API) and PostgreSQL; the engine sees kernels/ and writes
# every include with its folder ("knn/knn_internal.h"), never a PostgreSQL
# header; the engine tests and benchmarks see kernels/ as the engine does.

EXTENSION = odp_gpu
MODULE_big = odp_gpu
PGFILEDESC = "odp_gpu - outliers, k-NN, correlation, skyline and region matching on the GPU"

DATA = $(wildcard sql/odp_gpu--*.sql)

# The PostgreSQL side, folder by folder (the map: README.md, "Where things
# are"): at the top the SQL entry points of each analytic and what they
# share (module entry, settings, arguments, engine calls), then the input
# layer, the sharded sources and the GPU service.  Every file of src/
# includes by its path from src/ ("input/input.h", "args.h").
SRC_OBJS = src/odp_gpu.o src/settings.o src/args.o src/engine_glue.o \
	src/engine_call.o src/shared_buffers.o src/table_cache_load.o src/backend_staging.o src/dsm_room.o src/gpu_info.o src/planner_support.o src/output.o \
	src/outliers.o src/outliers_aggregates.o src/knn.o src/knn_cost.o src/pearson.o \
	src/skyline_band.o src/skyline.o src/intervals.o src/intervals_pieces.o \
	$(INPUT_OBJS) $(DISTRIBUTED_OBJS) $(SERVICE_OBJS)

# The input layer (src/input/input.h)
INPUT_OBJS = src/input/input_source.o src/input/input_columns.o \
	src/input/input_buffer.o src/input/input_place.o src/input/input_stream.o \
	src/input/input_exact.o src/input/input_regions.o \
	src/input/input_decode.o src/input/input_parallel.o src/input/input_reader.o \
	src/input/input_aggregate.o src/input/input_pgvector.o \
	src/input/input_argument.o src/input/input_cache.o src/input/input_direct.o

# Sharded sources (src/distributed/distributed.h)
DISTRIBUTED_OBJS = src/distributed/distributed.o src/distributed/distributed_wire.o \
	src/distributed/distributed_node.o src/distributed/distributed_conn.o \
	src/distributed/distributed_shards.o

# The GPU service (src/service/service.h): its worker and the backends' side
SERVICE_OBJS = src/service/service_shmem.o src/service/service_worker.o \
	src/service/service_engine_proc.o src/service/service_ring.o \
	src/service/service_client.o src/service/service_views.o \
	src/service/service_staging.o src/service/service_resident.o \
	src/service/table_cache.o src/service/table_cache_sql.o

# The service's engine process, a program of its own with no PostgreSQL in
# it (src/service/service_engine.h): its main, the request threads, the
# rings, the node states it keeps, the engine calls and the engine.
ENGINE_PROGRAM_BIN = src/service/odp_gpu_engine
ENGINE_PROGRAM_OBJS = src/service/engine_process.o src/service/service_thread.o \
	src/service/service_ring.o src/service/service_objects.o src/engine_call.o

# The engine, folder by folder (the map: README.md, "Where things are", and
# kernels/include/odp_engine.h).  Each folder lists its C objects, its CUDA
# objects and what replaces the CUDA objects in a build without CUDA.
COMMON_C_OBJS = kernels/common/engine_common.o kernels/common/host_threads.o \
	kernels/common/host_sort.o kernels/common/topn.o
GPU_CU_OBJS = kernels/gpu/gpu_runtime.o kernels/gpu/gpu_blas.o kernels/gpu/gpu_pieces.o
GPU_C_OBJS = kernels/gpu/gpu_resident.o
GPU_NOCUDA_OBJS = kernels/gpu/gpu_disabled.o
DEVICES_C_OBJS = kernels/devices/device_set.o kernels/devices/pair_relay.o
KNN_C_OBJS = kernels/knn/knn.o kernels/knn/knn_batch.o kernels/knn/knn_cost.o kernels/knn/knn_cost_calibrate.o kernels/knn/knn_cpu.o kernels/knn/knn_cpu_bits.o kernels/knn/knn_split.o kernels/knn/knn_team.o \
	kernels/knn/knn_distributed.o kernels/knn/knn_wide_filter.o \
	kernels/knn/spatial.o kernels/knn/spatial_cpu.o
KNN_CU_OBJS = kernels/knn/knn_gpu.o kernels/knn/knn_gpu_run.o \
	kernels/knn/knn_gpu_search.o kernels/knn/knn_gpu_tc.o \
	kernels/knn/knn_gpu_tc_prep.o kernels/knn/knn_gpu_tc_mma.o \
	kernels/knn/knn_gpu_tc_reg.o kernels/knn/knn_gpu_tc_wg.o \
	kernels/knn/knn_gpu_tc_refine.o \
	kernels/knn/knn_gpu_int.o kernels/knn/knn_gpu_wide.o \
	kernels/knn/knn_gpu_filter64.o kernels/knn/knn_gpu_few.o kernels/knn/spatial_gpu.o
KNN_NOCUDA_OBJS = kernels/knn/knn_gpu_disabled.o kernels/knn/spatial_gpu_disabled.o
OUTLIERS_C_OBJS = kernels/outliers/outliers.o kernels/outliers/outliers_split.o \
	kernels/outliers/solvingset.o kernels/outliers/solvingset_first.o \
	kernels/outliers/solvingset_cpu.o kernels/outliers/solvingset_split.o \
	kernels/outliers/solvingset_distributed.o kernels/outliers/solvingset_wide.o
OUTLIERS_CU_OBJS = kernels/outliers/outliers_gpu.o kernels/outliers/solvingset_gpu.o \
	kernels/outliers/solvingset_gpu_passes.o kernels/outliers/solvingset_gpu_fused.o \
	kernels/outliers/solvingset_gpu_external.o kernels/outliers/solvingset_gpu_select.o
OUTLIERS_NOCUDA_OBJS = kernels/outliers/outliers_gpu_disabled.o
PEARSON_C_OBJS = kernels/pearson/pearson.o kernels/pearson/pearson_pairs.o \
	kernels/pearson/pearson_cpu.o kernels/pearson/pearson_split.o
PEARSON_CU_OBJS = kernels/pearson/pearson_gpu.o kernels/pearson/pearson_gpu_prep.o \
	kernels/pearson/pearson_gpu_tiles.o kernels/pearson/pearson_gpu_pairs.o \
	kernels/pearson/pearson_gpu_top.o
PEARSON_NOCUDA_OBJS = kernels/pearson/pearson_gpu_disabled.o
# The benchmark build that times the GPU path's stages (-DODP_PEARSON_TRACE).
PEARSON_TRACE_OBJS = $(PEARSON_CU_OBJS:.o=_trace.o)
SKYLINE_C_OBJS = kernels/skyline/skyline.o kernels/skyline/skyline_presort.o \
	kernels/skyline/skyline_cpu.o kernels/skyline/skyline_split.o \
	kernels/skyline/skyline_team.o
SKYLINE_CU_OBJS = kernels/skyline/skyline_gpu.o
SKYLINE_NOCUDA_OBJS = kernels/skyline/skyline_gpu_disabled.o
INTERVALS_C_OBJS = kernels/intervals/intervals.o kernels/intervals/intervals_prep.o \
	kernels/intervals/intervals_match.o kernels/intervals/intervals_cpu.o \
	kernels/intervals/intervals_split.o
INTERVALS_CU_OBJS = kernels/intervals/intervals_gpu.o
INTERVALS_NOCUDA_OBJS = kernels/intervals/intervals_gpu_disabled.o

ENGINE_C_OBJS = $(COMMON_C_OBJS) $(GPU_C_OBJS) $(DEVICES_C_OBJS) $(KNN_C_OBJS) \
	$(OUTLIERS_C_OBJS) $(PEARSON_C_OBJS) $(SKYLINE_C_OBJS) $(INTERVALS_C_OBJS)
# WITH_CUDA=no builds a CPU-only library (no CUDA toolkit needed).
WITH_CUDA ?= yes
ifeq ($(WITH_CUDA),no)
ENGINE_CU_OBJS = $(GPU_NOCUDA_OBJS) $(KNN_NOCUDA_OBJS) $(OUTLIERS_NOCUDA_OBJS) \
	$(PEARSON_NOCUDA_OBJS) $(SKYLINE_NOCUDA_OBJS) $(INTERVALS_NOCUDA_OBJS)
else
ENGINE_CU_OBJS = $(GPU_CU_OBJS) $(KNN_CU_OBJS) $(OUTLIERS_CU_OBJS) \
	$(PEARSON_CU_OBJS) $(SKYLINE_CU_OBJS) $(INTERVALS_CU_OBJS)
endif
ENGINE_OBJS = $(ENGINE_C_OBJS) $(ENGINE_CU_OBJS)
OBJS = $(SRC_OBJS) $(ENGINE_OBJS)

# Every sql/*.sql that is not an install or upgrade script is a regress test.
REGRESS = $(sort $(patsubst sql/%.sql,%,$(filter-out sql/odp_gpu--%,$(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=.

CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
# Machine code for Ampere and Hopper plus PTX so newer GPUs JIT-compile it.
# Hopper's is sm_90a, which has the warpgroup products (gpu/gpu_wgmma.cuh).
CUDA_ARCH_FLAGS ?= -gencode=arch=compute_80,code=sm_80 \
	-gencode=arch=compute_90a,code=sm_90a \
	-gencode=arch=compute_90,code=compute_90
NVCC_OPTFLAGS ?= -O3
# -fmad=false: distances must not use fused multiply-add, so that the GPU
# computes bit-for-bit what the CPU path computes (see odp_distance.h).
NVCCFLAGS = $(CUDA_ARCH_FLAGS) $(NVCC_OPTFLAGS) -std=c++17 -fmad=false \
	-Xcompiler -fPIC -Xcompiler -fvisibility=hidden -Ikernels \
	-DODP_CUDA_LIBDIR='"$(CUDA_HOME)/lib64"'

# src/ sees the engine's public headers only (and libpq's, below); -Isrc
# lets its files include each other by their path from src/.
PG_CPPFLAGS = -Ikernels/include -Isrc
# -ffp-contract=off: same reason as -fmad=false above, for the host
# compiler; -O3 -fno-math-errno let the distance loops vectorise (SSE2,
# lane by lane the same IEEE operations, so the same bits).
ENGINE_CFLAGS = -O3 -fno-math-errno -ffp-contract=off -pthread
# The engine's include path: kernels/ and no PostgreSQL directory.
ENGINE_CPPFLAGS = -Ikernels
# cudart is linked statically: the library then loads on hosts with no
# CUDA runtime and no driver, and finds the driver (libcuda) at first use.
ifeq ($(WITH_CUDA),no)
SHLIB_LINK += -lpthread -lm
else
SHLIB_LINK += -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -lpthread -ldl -lrt -lm
endif

ENGINE_TESTS = test/engine/test_engine
# Engine benchmarks: test/bench/<analytic>_engine_bench (the SQL ones are
# test/bench/<analytic>_bench.sh).
BENCHES = test/bench/outliers_engine_bench test/bench/knn_engine_bench \
	test/bench/knn_engine_bench_trace \
	test/bench/pearson_engine_bench test/bench/pearson_engine_bench_trace \
	test/bench/skyline_engine_bench test/bench/intervals_engine_bench \
	test/bench/knn_cost_bench
EXTRA_CLEAN = $(ENGINE_TESTS) $(BENCHES) $(PEARSON_TRACE_OBJS) kernels/knn/knn_gpu_tc_trace.o \
	$(ENGINE_PROGRAM_BIN) \
	$(wildcard src/*.o src/*/*.o kernels/*/*.o src/*.d src/*/*.d kernels/*/*.d)

override with_llvm = no

# The distributed calls reach the nodes with libpq, as postgres_fdw does.
# LIBPQ_LIBS overrides where it is linked from (e.g. a relocated bundle).
PG_CPPFLAGS += -I$(shell $(PG_CONFIG) --includedir)
LIBPQ_LIBS ?= -L$(shell $(PG_CONFIG) --libdir) -lpq
SHLIB_LINK_INTERNAL = $(LIBPQ_LIBS)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Dependencies on headers come from the compilers (-MMD -MP: one .d file
# beside each object), not from hand-kept lists.
$(SRC_OBJS) $(ENGINE_PROGRAM_OBJS): override CFLAGS += -MMD -MP

# The engine process's program, built with the library and installed
# beside it (the service runs $libdir/odp_gpu_engine).
all: $(ENGINE_PROGRAM_BIN)
$(ENGINE_PROGRAM_BIN): $(ENGINE_PROGRAM_OBJS) $(ENGINE_OBJS)
	$(CC) $(CFLAGS) -o $@ $(ENGINE_PROGRAM_OBJS) $(ENGINE_OBJS) $(SHLIB_LINK) $(LDFLAGS_EX)

install: install-engine-program
.PHONY: install-engine-program
install-engine-program: $(ENGINE_PROGRAM_BIN) installdirs
	$(INSTALL_PROGRAM) $(ENGINE_PROGRAM_BIN) '$(DESTDIR)$(pkglibdir)/odp_gpu_engine'

uninstall: uninstall-engine-program
.PHONY: uninstall-engine-program
uninstall-engine-program:
	rm -f '$(DESTDIR)$(pkglibdir)/odp_gpu_engine'

# The engine's objects: PostgreSQL's warnings and code generation flags,
# its preprocessor definitions (not its include directories), the
# engine's own flags.
kernels/%.o: kernels/%.c
	$(CC) $(CFLAGS) $(ENGINE_CFLAGS) $(filter -D%,$(CPPFLAGS)) $(ENGINE_CPPFLAGS) -MMD -MP -c -o $@ $<

kernels/%.o: kernels/%.cu
	$(NVCC) $(NVCCFLAGS) -MMD -MP -c -o $@ $<

# Programs built on the engine without a server: the engine tests and the
# benchmarks (their GPU parts need a GPU).
# A program's sources are compiled with it, so it depends on every engine
# header (and its own folder's) rather than on a dependency file.
ENGINE_PROGRAM = $(CC) -std=c11 -O2 -Wall $(ENGINE_CPPFLAGS) $(ENGINE_CFLAGS)
ENGINE_HEADERS = $(wildcard kernels/*/*.h)
$(ENGINE_TESTS): $(wildcard test/engine/*.h) $(ENGINE_HEADERS)
$(BENCHES): $(wildcard test/bench/*.h) $(ENGINE_HEADERS)

# Engine unit tests: no server needed; the GPU part runs where a GPU is.
# One binary from every test/engine/*.c: runner.c (main; a flag per
# analytic), test_util.c, one test_<analytic>.c per analytic and
# test_integer.c (k-NN and outliers on integer data with ties) and
# test_precision.c (float64 rows).
ENGINE_TEST_SRCS = $(wildcard test/engine/*.c)
test/engine/test_engine: $(ENGINE_TEST_SRCS) $(ENGINE_OBJS)
	$(ENGINE_PROGRAM) -o $@ $(ENGINE_TEST_SRCS) $(ENGINE_OBJS) $(SHLIB_LINK)

.PHONY: engine-test
engine-test: test/engine/test_engine
	test/engine/test_engine

# Outliers: SolvingSet benchmark and exactness check, and the scores of
# every row (--scores).
test/bench/outliers_engine_bench: test/bench/outliers_engine_bench.c $(ENGINE_OBJS)
	$(ENGINE_PROGRAM) -o $@ $< $(ENGINE_OBJS) $(SHLIB_LINK)

# k-NN benchmark and GPU-vs-CPU check.
test/bench/knn_engine_bench: test/bench/knn_engine_bench.c $(ENGINE_OBJS)
	$(ENGINE_PROGRAM) -o $@ $< $(ENGINE_OBJS) $(SHLIB_LINK)

# The _trace variant also prints the tensor-core filter's stage times per
# device (a separate build of its file, knn_gpu_tc_trace.o).
kernels/knn/knn_gpu_tc_trace.o: kernels/knn/knn_gpu_tc.cu
	$(NVCC) $(NVCCFLAGS) -DODP_TC_TRACE -MMD -MP -c -o $@ $<

test/bench/knn_engine_bench_trace: test/bench/knn_engine_bench.c $(ENGINE_C_OBJS) \
		$(filter-out kernels/knn/knn_gpu_tc.o,$(ENGINE_CU_OBJS)) kernels/knn/knn_gpu_tc_trace.o
	$(ENGINE_PROGRAM) -o $@ $< $(ENGINE_C_OBJS) \
		$(filter-out kernels/knn/knn_gpu_tc.o,$(ENGINE_CU_OBJS)) kernels/knn/knn_gpu_tc_trace.o $(SHLIB_LINK)

# The k-NN cost model's choices against both paths' times.
test/bench/knn_cost_bench: test/bench/knn_cost_bench.c $(ENGINE_OBJS)
	$(ENGINE_PROGRAM) -o $@ $< $(ENGINE_OBJS) $(SHLIB_LINK)

# Pearson benchmark; the _trace variant also times the GPU path's
# stages (a separate build of its files, <file>_trace.o).
test/bench/pearson_engine_bench: test/bench/pearson_engine_bench.c $(ENGINE_OBJS)
	$(ENGINE_PROGRAM) -o $@ $< $(ENGINE_OBJS) $(SHLIB_LINK)

kernels/pearson/%_trace.o: kernels/pearson/%.cu
	$(NVCC) $(NVCCFLAGS) -DODP_PEARSON_TRACE -MMD -MP -c -o $@ $<

test/bench/pearson_engine_bench_trace: test/bench/pearson_engine_bench.c $(ENGINE_C_OBJS) \
		$(filter-out $(PEARSON_CU_OBJS),$(ENGINE_CU_OBJS)) $(PEARSON_TRACE_OBJS)
	$(ENGINE_PROGRAM) -DODP_PEARSON_TRACE -o $@ $< $(ENGINE_C_OBJS) \
		$(filter-out $(PEARSON_CU_OBJS),$(ENGINE_CU_OBJS)) $(PEARSON_TRACE_OBJS) $(SHLIB_LINK)

# Skyline workloads and engine timings.
test/bench/skyline_engine_bench: test/bench/skyline_engine_bench.c $(ENGINE_OBJS)
	$(ENGINE_PROGRAM) -o $@ $< $(ENGINE_OBJS) $(SHLIB_LINK)

# Region matching workloads and engine timings.
test/bench/intervals_engine_bench: test/bench/intervals_engine_bench.c $(ENGINE_OBJS)
	$(ENGINE_PROGRAM) -o $@ $< $(ENGINE_OBJS) $(SHLIB_LINK) -lm

-include $(OBJS:.o=.d) $(ENGINE_PROGRAM_OBJS:.o=.d) $(PEARSON_TRACE_OBJS:.o=.d)
