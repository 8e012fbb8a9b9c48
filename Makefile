# greenrl: the two commands a new user needs are `make demo` and `make test` (see README.md).
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
CONFIG ?= configs/ppo/cartpole.yaml
GREENRL := $(BUILD_DIR)/bin/greenrl

.PHONY: all deps configure build test demo bench clean

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

clean:
	rm -rf $(BUILD_DIR)
