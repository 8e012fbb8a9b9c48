#!/usr/bin/env bash
# bench-dist.sh: data-parallel scaling benchmark (prints figures, asserts nothing; not a test).
# Trains the PPO CartPole preset on 1 rank, then on N ranks with `greenrl launch`, scaled by rank
# (weak scaling: every rank keeps the preset's n_envs, and n_timesteps grows with the ranks),
# and prints env steps/s, the scaling efficiency and each run's time in all-reduce.
# Usage: scripts/bench-dist.sh [BUILD_DIR] [STEPS_PER_RANK] [NPROC]
set -euo pipefail
BUILD=${1:-build}
STEPS=${2:-20480}
NPROC=${3:-2}
BIN=$BUILD/bin/greenrl
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
COMMON=(--config configs/ppo/cartpole.yaml --set eval.freq=0 --set eval.final_episodes=1
        --set energy.meter=estimator --quiet)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
"$BIN" train "${COMMON[@]}" --set n_timesteps="$STEPS" --out "$OUT/r1" > /dev/null
"$BIN" launch --nproc "$NPROC" -- train "${COMMON[@]}" --set n_timesteps=$((STEPS * NPROC)) \
  --out "$OUT/r$NPROC" > /dev/null
python3 - "$OUT" "$NPROC" <<'PY'
import json, sys
out, p = sys.argv[1], int(sys.argv[2])
one = json.load(open(f"{out}/r1/energy.json"))
many = json.load(open(f"{out}/r{p}/energy.json"))
d = many["distributed"]
sps1 = one["steps"] / one["wall_time_s"]
spsp = many["steps"] / many["wall_time_s"]
print(f"1 rank : {one['steps']} steps in {one['wall_time_s']:.2f} s = {sps1:.0f} steps/s")
print(f"{p} ranks: {many['steps']} steps in {many['wall_time_s']:.2f} s = {spsp:.0f} steps/s "
      f"(efficiency {spsp / (p * sps1):.2f}); rank 0: {d['rank0_allreduce_calls']} all-reduces, "
      f"{d['rank0_allreduce_bytes'] / d['rank0_allreduce_calls']:.0f} B each, "
      f"{d['rank0_allreduce_s']:.2f} s in all-reduce ({100 * d['rank0_allreduce_s'] / many['wall_time_s']:.1f}% of wall)")
for r in d["ranks"]:
    print(f"  rank {r['rank']}: wall {r['wall_time_s']:.2f} s, cpu {r['cpu_time_s']:.2f} s, "
          f"all-reduce {r['allreduce_s']:.2f} s, energy {r['total_energy_j']:.1f} J")
PY
