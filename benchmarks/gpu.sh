#!/usr/bin/env bash
# The GPU numbers in one go: the speed script in bf16 for an mBERT shape and a 1B-class causal shape,
# prompts/s and the fraction of the card's measured bf16 matmul peak. Needs a CUDA machine with factatlas
# and its probe extra installed; writes one log per run under $OUT (default gpu-logs/).
#
#     bash benchmarks/gpu.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-logs}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false

{
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
    python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
} 2>&1 | tee "$out/machine.txt"

run() {  # name, time limit in seconds, then the speed script's arguments
    local name=$1 limit=$2
    shift 2
    echo "== $name: probe_speed.py $*" | tee "$out/$name.log"
    timeout "$limit" python3 benchmarks/probe_speed.py --device cuda --dtype bf16 "$@" 2>&1 \
        | grep --line-buffered -v -e FutureWarning -e "return forward_call" | tee -a "$out/$name.log"
}

# the anchors run in fp32 on the same GPU, on a subset; bf16 rankings are checked against them first
run mbert 150 --preset mbert --prompts 4000 --bmlama-prompts 20 --repeats 3
# the CPU's token budget (8,192) leaves a GPU waiting on kernel launches: larger batches, throughput only
run mbert-64k 90 --preset mbert --prompts 4000 --batch-tokens 65536 --repeats 3 --skip-baselines
run llama-1b 200 --preset llama-1b --prompts 2000 --bmlama-prompts 20 --repeats 3
run llama-1b-64k 120 --preset llama-1b --prompts 2000 --batch-tokens 65536 --repeats 3 --skip-baselines
