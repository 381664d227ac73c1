#!/usr/bin/env bash
# Sweep all six workloads on a lent H200 machine in OBSERVE mode (the current power limit; no
# GPU setting is ever written), synthetic data, over the paper's batch sizes plus larger ones
# until out of memory. Writes under $OUT (at most 8 files come back from the device tool):
#   power-h200.parquet    merged single-GPU trace (one process per workload)
#   power-h200x2.parquet  ResNet-50 (imagenet) with DistributedDataParallel on 2 GPUs, if present
#   sweep-gpu0.log, sweep-gpu1.log, ddp.log, env.txt
# With two GPUs, the six workloads are split over two queues that run side by side, one per GPU
# (each GPU's energy counter is read on its own); the DDP run follows on both GPUs.
#
# Usage (repository root, device machine): bash benchmarks/h200/sweep_h200.sh
# Knobs: WARMUP_S, MEASURE_S (per point), DEADLINE_S (stop starting new workloads after this).
set -uo pipefail
OUT=${OUT:-/tmp/zb-out}
mkdir -p "$OUT" /tmp/zb-shards
export ZEUS_BENCH_STATE_DIR=/tmp/zb-state NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
  NVSHMEM_DISABLE_NVLS=1 CUDA_DEVICE_ORDER=PCI_BUS_ID PYTHONUNBUFFERED=1 TQDM_DISABLE=1
WARMUP_S=${WARMUP_S:-3}
MEASURE_S=${MEASURE_S:-5}
DEADLINE_S=${DEADLINE_S:-430}
T0=$(date +%s)

python3 -m pip install -q --no-deps --no-build-isolation -e . >/tmp/zb-install.log 2>&1 \
  || { echo "install failed"; cat /tmp/zb-install.log; exit 1; }

{
  date -u +"start %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=index,name,driver_version,power.limit,power.default_limit,power.min_limit,power.max_limit,memory.total,temperature.gpu --format=csv
  python3 -c "import torch, transformers, torchvision; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version(), 'torchvision', torchvision.__version__, 'transformers', transformers.__version__)"
  python3 --version
  git rev-parse HEAD; git status --short workloads zeus_bench | head -40; sha256sum workloads/*.py workloads/models/*.py
} >"$OUT/env.txt" 2>&1
NGPU=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)

# Batch sizes: the paper's (train and power traces), then larger powers of two (stop at OOM).
declare -A BS=(
  [cifar100]=8,16,32,64,128,256,512,1024,2048,4096,8192,16384
  [imagenet]=8,16,32,64,128,192,256,360,512,1024,2048
  [squad]=4,8,12,16,24,32,48,56,72,128
  [sentiment140]=8,16,32,40,48,56,64,128,256,512
  [librispeech]=2,4,8,12,16,24,32,48,56,64,72,96,128,156,192,256,512
  [movielens-1m]=4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536
)

sweep_queue() {  # GPU index, then workloads
  local gpu=$1; shift
  for w in "$@"; do
    if (( $(date +%s) - T0 > DEADLINE_S )); then echo "deadline: $w not measured"; continue; fi
    echo "== $w on GPU $gpu ($(date -u +%H:%M:%S))"
    zeus-bench sweep --backend nvml --workload "$w" --gpus "$gpu" --observe --gpu-kind h200 \
      --batch-sizes "${BS[$w]}" --stop-at-oom --warmup-iters 3 --warmup-s "$WARMUP_S" \
      --measure-iters 8 --measure-s "$MEASURE_S" --out "/tmp/zb-shards/$w.parquet"
    echo "== $w exit $? ($(date -u +%H:%M:%S))"
  done
}

if [[ $NGPU -ge 2 ]]; then
  sweep_queue 0 imagenet squad librispeech >"$OUT/sweep-gpu0.log" 2>&1 &
  sweep_queue 1 cifar100 sentiment140 movielens-1m >"$OUT/sweep-gpu1.log" 2>&1 &
  wait
  echo "== DDP imagenet on GPUs 0,1 ($(date -u +%H:%M:%S))" >"$OUT/ddp.log"
  zeus-bench sweep --backend nvml --workload imagenet --gpus 0,1 --observe --gpu-kind h200x2 \
    --batch-sizes 64,128,192,256,360,512,1024 --warmup-iters 3 --warmup-s "$WARMUP_S" \
    --measure-iters 8 --measure-s "$MEASURE_S" --out "$OUT/power-h200x2.parquet" >>"$OUT/ddp.log" 2>&1
  echo "== DDP exit $? ($(date -u +%H:%M:%S))" >>"$OUT/ddp.log"
else
  sweep_queue 0 imagenet squad librispeech cifar100 sentiment140 movielens-1m >"$OUT/sweep-gpu0.log" 2>&1
fi

zeus-bench sweep-merge /tmp/zb-shards/*.parquet --out "$OUT/power-h200.parquet" >>"$OUT/env.txt" 2>&1
date -u +"end %Y-%m-%dT%H:%M:%SZ" >>"$OUT/env.txt"
echo "elapsed $(( $(date +%s) - T0 )) s" >>"$OUT/env.txt"
python3 - "$OUT" <<'EOF'
import sys
from pathlib import Path
from zeus_bench.store import read_table
for name in ("power-h200.parquet", "power-h200x2.parquet"):
    p = Path(sys.argv[1]) / name
    if not p.exists():
        print(f"{name}: missing"); continue
    df = read_table(p, "power")
    df["j_per_sample"] = df["avg_power_w"] / df["samples_per_s"]
    print(name)
    print(df[["dataset", "batch_size", "power_limit_w", "samples_per_s", "avg_power_w", "j_per_sample"]].to_string(index=False))
    print("skipped:", [(s["provenance"]["workload"], s["provenance"]["skipped"]) for s in df.attrs["zeus_bench"].get("shards", [])] if "shards" in df.attrs["zeus_bench"] else df.attrs["zeus_bench"].get("skipped"))
EOF
tail -n 4 "$OUT/env.txt"
