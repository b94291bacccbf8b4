"""Figures the calculators take as given (model shapes, chip rates, prices), each named once.

Presets and notes read them from here, so every figure that follows from an
assumption is computed from it. The S-numbers in comments are the assumption list of
reference/serving-math.md; pages name each assumption in words instead.
"""

from __future__ import annotations

from calculators.formatting import money, number

# Model shapes: layers, KV heads (grouped-query attention), head size, bytes per value in BF16.
LLAMA_3_70B = {"layers": 80, "kv_heads": 8, "head_dim": 128, "bytes_per_value": 2}
LLAMA_3_8B = {"layers": 32, "kv_heads": 8, "head_dim": 128, "bytes_per_value": 2}
LLAMA_2_13B = {"layers": 40, "kv_heads": 40, "head_dim": 128, "bytes_per_value": 2}  # no GQA

# Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434; DeepSeek-V3, arXiv:2412.19437 section 4.2):
# per layer one latent of d_c values and one shared RoPE key of d_h^R values; heads of d_h values.
DEEPSEEK_V3 = {"layers": 61, "latent_dim": 512, "rope_dim": 64, "head_dim": 128}
DEEPSEEK_V2 = {"layers": 60, "latent_dim": 512, "rope_dim": 64, "head_dim": 128}
DEEPSEEK_V3_ATTENTION_HEADS = 128  # n_h: what full multi-head attention would cache a key and value for

# Sliding-window layers: the window, and how many of the layers use it (the rest attend to everything).
# gpt-oss-120b (its config.json): 36 layers alternating windowed and full, 8 KV heads of 64, window 128.
GPT_OSS_120B = {"layers": 36, "windowed_layers": 18, "kv_heads": 8, "head_dim": 64, "window_tokens": 128}
# Mistral 7B v0.1 (arXiv:2310.06825, Table 1): every layer windowed at 4,096; 8 KV heads of 128.
MISTRAL_7B = {"layers": 32, "windowed_layers": 32, "kv_heads": 8, "head_dim": 128, "window_tokens": 4096}
MISTRAL_8X_CONTEXT = 32_768  # the paper's "on a sequence length of 32k tokens ... by 8x"

# Llama-3.1-405B's shape (its config.json): 126 blocks of hidden size 16,384 with an MLP of 53,248 and
# 128 query and 8 KV heads of 128; a vocabulary of 128,256 with separate input and output embeddings.
_405B_HIDDEN, _405B_MLP, _405B_BLOCKS, _405B_VOCAB, _405B_KV_WIDTH = 16_384, 53_248, 126, 128_256, 8 * 128
LLAMA_31_405B = {"layers": _405B_BLOCKS, "kv_heads": 8, "head_dim": 128, "bytes_per_value": 2}
LLAMA_31_405B_MLP_PER_BLOCK = 3 * _405B_HIDDEN * _405B_MLP  # gate, up and down projections
LLAMA_31_405B_ATTENTION_PER_BLOCK = 2 * _405B_HIDDEN * _405B_HIDDEN + 2 * _405B_HIDDEN * _405B_KV_WIDTH  # q, o; k, v
LLAMA_31_405B_EMBEDDINGS = 2 * _405B_VOCAB * _405B_HIDDEN
LLAMA_31_405B_PARAMS = (
    _405B_BLOCKS * (LLAMA_31_405B_MLP_PER_BLOCK + LLAMA_31_405B_ATTENTION_PER_BLOCK) + LLAMA_31_405B_EMBEDDINGS
)  # 405.85 billion (norms, a few million, left out)
# Meta's FP8 checkpoint (meta-llama/Llama-3.1-405B-Instruct-FP8) quantises only the MLP linear layers, and not
# those of the first and last blocks (the Llama 3 paper, §6.2 "FP8 quantization"; vLLM's Llama 3.1 announcement):
# attention, those two blocks and the embeddings stay BF16, so the checkpoint is about 487 GB, not 405.
_405B_FP8_MLP = (_405B_BLOCKS - 2) * LLAMA_31_405B_MLP_PER_BLOCK
LLAMA_31_405B_FP8_META_GB = (_405B_FP8_MLP + 2 * (LLAMA_31_405B_PARAMS - _405B_FP8_MLP)) / 1e9  # 487.2
LLAMA_31_405B_FP8_META_BYTES_PER_PARAM = LLAMA_31_405B_FP8_META_GB * 1e9 / LLAMA_31_405B_PARAMS  # 1.2
# NVIDIA's ModelOpt FP8 checkpoint (nvidia/Llama-3.1-405B-Instruct-FP8) quantises every linear layer inside the
# blocks; only the embeddings stay BF16: about 410 GB.
LLAMA_31_405B_FP8_ALL_LINEAR_GB = (LLAMA_31_405B_PARAMS + LLAMA_31_405B_EMBEDDINGS) / 1e9  # 410.1

# Parameters, in billions: nominal sizes, and Llama-3's published counts.
NOMINAL_70B = 70
LLAMA_3_70B_PARAMS_B = 70.6
LLAMA_3_8B_PARAMS_B = 8.03
NOMINAL_13B = 13
BF16_BYTES = 2

# Llama-3-70B's shape (its config.json; Llama-3.1-70B has the same one, with a 128K window): 80 blocks of hidden
# size 8,192 with an MLP of 28,672, 64 query and 8 KV heads of 128, a vocabulary of 128,256 with separate input
# and output embeddings. A decode step reads every linear layer and the output layer (lm_head), but only the
# batch's rows of the input embeddings.
_70B_HIDDEN, _70B_MLP, _70B_BLOCKS, _70B_VOCAB, _70B_KV_WIDTH = 8_192, 28_672, 80, 128_256, 8 * 128
LLAMA_3_70B_BLOCK_LINEAR_PARAMS = _70B_BLOCKS * (
    3 * _70B_HIDDEN * _70B_MLP + 2 * _70B_HIDDEN * _70B_HIDDEN + 2 * _70B_HIDDEN * _70B_KV_WIDTH
)  # 68.45 billion: gate, up, down; q, o; k, v
LLAMA_3_70B_LM_HEAD_PARAMS = _70B_VOCAB * _70B_HIDDEN  # 1.05 billion, as many again in the input embeddings
LLAMA_3_70B_SHAPE_PARAMS = LLAMA_3_70B_BLOCK_LINEAR_PARAMS + 2 * LLAMA_3_70B_LM_HEAD_PARAMS  # 70.55 billion
# 4-bit weights in groups of 128, each group with an FP16 scale and a 4-bit zero point (AWQ; GPTQ's symmetric
# checkpoints drop the zero). vLLM's FP8 checkpoints and AWQ or GPTQ ones keep lm_head in BF16.
W4_GROUP_128_BYTES_PER_WEIGHT = 0.5 + (2 + 0.5) / 128
LLAMA_3_70B_W4_READ_GB = (
    LLAMA_3_70B_BLOCK_LINEAR_PARAMS * W4_GROUP_128_BYTES_PER_WEIGHT + LLAMA_3_70B_LM_HEAD_PARAMS * BF16_BYTES
) / 1e9  # 37.66 GB a step over the replica, against a nominal 70B's 35 at half a byte

MONTHS_PER_YEAR = 12

H100_GB = 80  # the "80GB" on the box, read as decimal GB
H100_MIB = 81_559  # what nvidia-smi reports for an H100 SXM "80GB": almost 80 GiB
H100_VISIBLE_GB = round(H100_MIB * 2**20 / 1e9, 2)  # the same memory in decimal GB: 85.52
# What CUDA itself reports as the total (torch.cuda.mem_get_info, the figure vLLM multiplies by
# gpu_memory_utilization): PyTorch's out-of-memory message on an H100 80GB says "total capacity of 79.11 GiB",
# and vLLM's start-up log prints "total_gpu_memory (79.11GiB) x gpu_memory_utilization (0.90)" (79.1 to 79.2
# with the driver). The lessons size every H100 replica with it.
H100_CUDA_GIB = 79.11
H100_CUDA_GB = round(H100_CUDA_GIB * 2**30 / 1e9, 2)  # 84.94
H100_HBM_TB_S = 3.35  # H100 SXM HBM3 bandwidth, TB/s (S3)
H100_BF16_TFLOPS = 989.0  # H100 SXM dense BF16 tensor throughput, TFLOPS (no sparsity)
H100_70B_TOKENS_PER_S = 700  # S13: output tokens/s per card on a 70B model
H100_8B_TOKENS_PER_S = 10_000  # S13: output tokens/s per card on an 8B model
B200_OVER_H100 = 2.4  # S14
USED_A100_OVER_H100 = 0.45  # S15
CARD_MONTH_USD = 2100  # S16: an owned card, all in
CARD_MONTH_USD_HIGH = 2900  # S16
RENT_MULTIPLIER = 1.35  # S16
API_8B_USD_PER_MILLION = 0.2  # S17
API_70B_USD_PER_MILLION = 2.5  # S17


def assumptions_note() -> str:
    """Return the Markdown note shared by the cost calculators: which inputs are assumptions, and why."""
    return (
        "**Assumptions, not sourced facts.** Treat these inputs as yours to change:\n\n"
        f"- *Per-card throughput*: an H100 at about {number(H100_70B_TOKENS_PER_S)} output tokens/s on a 70B "
        f"model and {number(H100_8B_TOKENS_PER_S)} on an 8B model, prompts prefilled alongside. Plausible and "
        "conservative against NVIDIA's published TensorRT-LLM performance tables, which count output tokens.\n"
        f"- *B200 speed*: {number(B200_OVER_H100)} × an H100. Not confirmed; the same tables suggest more, "
        "so this is cautious.\n"
        f"- *Used A100 speed*: {number(USED_A100_OVER_H100)} × an H100. Not confirmed by a public benchmark.\n"
        f"- *Card prices*: {money(CARD_MONTH_USD)}–{money(CARD_MONTH_USD_HIGH)[1:]} a month for an owned "
        f"card, all in, and {number(RENT_MULTIPLIER)} × that rented. No public source.\n"
        f"- *API prices*: {money(API_8B_USD_PER_MILLION)} per million tokens for an 8B model (in line with "
        f"list prices) and {money(API_70B_USD_PER_MILLION)} for a 70B model (no source found)."
    )
