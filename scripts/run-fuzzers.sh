#!/usr/bin/env bash
# run-fuzzers.sh FUZZ_BUILD_DIR SECONDS GREENRL_BIN: runs each libFuzzer target for SECONDS
# (-max_total_time), seeded with fuzz/corpus/<fuzzer>, fuzz/regressions/<fuzzer> and, for the
# checkpoint reader, a real PPO CartPole checkpoint trained here with GREENRL_BIN. Exits non-zero
# when a fuzzer found a crash; its input is left in FUZZ_BUILD_DIR/crashes/<fuzzer>/.
set -uo pipefail
dir=${1:?fuzz build dir}
seconds=${2:-60}
greenrl=${3:-build/bin/greenrl}
root=$(cd "$(dirname "$0")/.." && pwd)
status=0

seed_ckpt="$dir/seed-run"
if [ ! -f "$seed_ckpt/checkpoints/final.pt" ]; then
  rm -rf "$seed_ckpt"
  "$greenrl" train --config "$root/configs/ppo/cartpole.yaml" --set n_timesteps=512 \
    --set n_envs=2 --set n_steps=8 --set batch_size=8 --quiet --out "$seed_ckpt" > /dev/null
fi

for fuzzer in config checkpoint; do
  work="$dir/corpus/$fuzzer"
  crashes="$dir/crashes/$fuzzer"
  mkdir -p "$work" "$crashes"
  seeds=("$root/fuzz/corpus/$fuzzer")
  [ -d "$root/fuzz/regressions/$fuzzer" ] && seeds+=("$root/fuzz/regressions/$fuzzer")
  if [ "$fuzzer" = checkpoint ] && [ -f "$seed_ckpt/checkpoints/final.pt" ]; then
    mkdir -p "$dir/seed-checkpoint" && cp "$seed_ckpt/checkpoints/final.pt" "$dir/seed-checkpoint/"
    seeds+=("$dir/seed-checkpoint")
  fi
  [ "$fuzzer" = config ] && seeds+=("$root/configs/ppo" "$root/configs/dqn" "$root/configs/sac")
  echo "run-fuzzers: ${fuzzer}_fuzzer for ${seconds} s"
  ASAN_OPTIONS=detect_leaks=0:detect_odr_violation=0 OMP_NUM_THREADS=1 \
    "$dir/fuzz/${fuzzer}_fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=20 \
    -artifact_prefix="$crashes/" -print_final_stats=1 "$work" "${seeds[@]}" \
    2>&1 | tail -n 40
  if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    echo "run-fuzzers: ${fuzzer}_fuzzer FAILED; inputs in $crashes (fix, then keep them in" \
         "fuzz/regressions/$fuzzer/)" >&2
    status=1
  fi
done
exit $status
