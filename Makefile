# greenrl: the two commands a new user needs are `make demo` and `make test` (see README.md).
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CONFIG ?= configs/ppo/cartpole.yaml
GREENRL := $(BUILD_DIR)/bin/greenrl

.PHONY: all deps configure build test demo bench fuzz clean

all: build

# Installs missing Debian packages (idempotent; root or sudo).
deps:
	bash scripts/install-deps.sh

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD_DIR)/CMakeCache.txt

# Release build into build/; the CLI lands at build/bin/greenrl.
build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The whole test suite (CI runs exactly this through .ci/run).
test: build
	cd $(BUILD_DIR) && OMP_NUM_THREADS=1 ctest --output-on-failure -j $(JOBS)

# The main job: install, build, train PPO on CartPole-v1 and print the energy/carbon summary.
demo: build
	$(GREENRL) train --config $(CONFIG)

# Benchmark (not a test): 5 seeds of the PPO CartPole preset.
bench: build
	$(GREENRL) bench ppo-cartpole

# Fuzzing (not part of `make test`): a clang build in build-fuzz/ instrumented with libFuzzer,
# ASan and UBSan; each fuzzer runs FUZZ_SECONDS. A crash leaves its input in
# build-fuzz/crashes/<fuzzer>/: fix it and keep the input in fuzz/regressions/<fuzzer>/.
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
fuzz: build
	cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=Release -DGREENRL_FUZZ=ON \
	  -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target config_fuzzer checkpoint_fuzzer
	bash scripts/run-fuzzers.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(GREENRL)

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_DIR)
