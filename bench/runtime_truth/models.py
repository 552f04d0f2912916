"""The models the runtime-truth run traces: released model code from transformers and
diffusers, built from small configs with random weights (nothing is downloaded), each driven
the way it runs in steady state (a decode loop after prefill, a denoise loop).

Each builder returns a `Workload`: `step()` runs one steady-state step, `warmup` steps are run
before tracing starts. The driver code here keeps its own data on the device, so the syncs the
tracer reports are the library's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch


@dataclass
class Workload:
    name: str
    family: str
    package: str  # "transformers" or "diffusers": whose code is traced
    step: Callable[[], None]
    warmup: int = 2
    steps: int = 4


def _decode_loop(model, prefill: Callable[[], object], decode_steps: int):
    """One request: prefill, then greedy decode steps with the cache; tokens stay on the device."""

    def step():
        with torch.no_grad():
            out = prefill()
            cache = out.past_key_values
            for _ in range(decode_steps):
                nxt = out.logits[:, -1:].argmax(-1)
                out = model(input_ids=nxt, past_key_values=cache, use_cache=True)
                cache = out.past_key_values

    return step


def mixtral(device):
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = MixtralConfig(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                        num_attention_heads=8, num_key_value_heads=4, num_local_experts=8,
                        num_experts_per_tok=2, max_position_embeddings=512,
                        experts_implementation="eager")  # the per-expert loop (Qwen3-MoE below: grouped_mm)
    model = MixtralForCausalLM(cfg).to(device).eval()
    ids = torch.randint(0, cfg.vocab_size, (4, 64), device=device)
    return Workload("Mixtral, eager experts (MoE)", "MoE", "transformers",
                    _decode_loop(model, lambda: model(input_ids=ids, use_cache=True), 8))


def qwen3_moe(device):
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM

    cfg = Qwen3MoeConfig(vocab_size=1024, hidden_size=256, intermediate_size=512, moe_intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=4, num_experts=16,
                         num_experts_per_tok=4, head_dim=32, max_position_embeddings=512)
    model = Qwen3MoeForCausalLM(cfg).to(device).eval()
    ids = torch.randint(0, cfg.vocab_size, (4, 64), device=device)
    return Workload("Qwen3-MoE, grouped_mm experts (MoE)", "MoE", "transformers",
                    _decode_loop(model, lambda: model(input_ids=ids, use_cache=True), 8))


def qwen2_vl(device):
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    cfg = Qwen2VLConfig(
        text_config=dict(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                         num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=2048,
                         rope_scaling={"type": "mrope", "mrope_section": [4, 6, 6]}),
        vision_config=dict(depth=2, embed_dim=64, hidden_size=256, num_heads=4, patch_size=14,
                           spatial_merge_size=2, temporal_patch_size=2, in_channels=3),
        image_token_id=1000, video_token_id=1001, vision_start_token_id=1002, vision_end_token_id=1003)
    model = Qwen2VLForConditionalGeneration(cfg).to(device).eval()
    grid = torch.tensor([[1, 8, 8]])  # 64 patches -> 16 image tokens after the merge (the processor's CPU output)
    n_img = 16
    ids = torch.randint(0, 900, (1, 48), device=device)
    ids[0, 4] = 1002
    ids[0, 5:5 + n_img] = 1000
    ids[0, 5 + n_img] = 1003
    types = (ids == 1000).int()  # what the processor returns beside input_ids: 1 marks image tokens
    pixels = torch.randn(64, 3 * 2 * 14 * 14, device=device)
    prefill = lambda: model(input_ids=ids, mm_token_type_ids=types, pixel_values=pixels, image_grid_thw=grid,
                            use_cache=True)
    return Workload("Qwen2-VL (vision-language)", "vision-language", "transformers",
                    _decode_loop(model, prefill, 6))


def llava(device):
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig, LlavaForConditionalGeneration

    vision = CLIPVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                              image_size=56, patch_size=14, projection_dim=64)
    text = LlamaConfig(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                       num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=512)
    cfg = LlavaConfig(vision_config=vision, text_config=text, image_token_index=1000)
    model = LlavaForConditionalGeneration(cfg).to(device).eval()
    ids = torch.randint(0, 900, (2, 48), device=device)
    ids[:, 4:20] = 1000  # 16 patches of a 56x56 image, the CLS feature dropped
    pixels = torch.randn(2, 3, 56, 56, device=device)
    prefill = lambda: model(input_ids=ids, pixel_values=pixels, use_cache=True)
    return Workload("LLaVA (vision-language)", "vision-language", "transformers", _decode_loop(model, prefill, 6))


def whisper(device):
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    cfg = WhisperConfig(vocab_size=1024, d_model=128, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=256,
                        decoder_ffn_dim=256, num_mel_bins=80, max_source_positions=1500,
                        max_target_positions=448, decoder_start_token_id=1, pad_token_id=0)
    model = WhisperForConditionalGeneration(cfg).to(device).eval()
    feats = torch.randn(2, 80, 3000, device=device)
    start = torch.ones(2, 1, dtype=torch.long, device=device)

    def step():
        with torch.no_grad():
            enc = model.get_encoder()(feats)
            out = model(encoder_outputs=enc, decoder_input_ids=start, use_cache=True)
            for _ in range(8):
                nxt = out.logits[:, -1:].argmax(-1)
                out = model(encoder_outputs=enc, decoder_input_ids=nxt, past_key_values=out.past_key_values,
                            use_cache=True)

    return Workload("Whisper (audio)", "audio", "transformers", step)


def gemma3n(device):
    from transformers import Gemma3nTextConfig, Gemma3nForCausalLM

    cfg = Gemma3nTextConfig(vocab_size=1024, vocab_size_per_layer_input=1024, hidden_size=256,
                            hidden_size_per_layer_input=32, intermediate_size=512, num_hidden_layers=4,
                            num_attention_heads=4, num_key_value_heads=2, head_dim=64, num_kv_shared_layers=2,
                            laurel_rank=16, altup_num_inputs=4, sliding_window=64,
                            layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
                            activation_sparsity_pattern=[0.95, 0.95, 0.0, 0.0], max_position_embeddings=512)
    model = Gemma3nForCausalLM(cfg).to(device).eval()
    ids = torch.randint(0, cfg.vocab_size, (2, 32), device=device)
    return Workload("Gemma3n (text decoder)", "dense LLM", "transformers",
                    _decode_loop(model, lambda: model(input_ids=ids, use_cache=True), 8))


def unet(device):
    from diffusers import DDIMScheduler, UNet2DConditionModel

    model = UNet2DConditionModel(sample_size=32, in_channels=4, out_channels=4, layers_per_block=1,
                                 block_out_channels=(32, 64), cross_attention_dim=32, attention_head_dim=8,
                                 down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                                 up_block_types=("UpBlock2D", "CrossAttnUpBlock2D")).to(device).eval()
    sched = DDIMScheduler(num_train_timesteps=1000)
    text = torch.randn(2, 77, 32, device=device)

    def step():
        with torch.no_grad():
            sched.set_timesteps(10, device=device)
            latents = torch.randn(2, 4, 32, 32, device=device)
            for t in sched.timesteps:
                noise = model(latents, t, encoder_hidden_states=text).sample
                latents = sched.step(noise, t, latents).prev_sample

    return Workload("UNet2DCondition + DDIM (diffusion UNet)", "diffusion UNet", "diffusers", step, warmup=1, steps=2)


def sd3(device):
    from diffusers import FlowMatchEulerDiscreteScheduler, SD3Transformer2DModel

    model = SD3Transformer2DModel(sample_size=32, patch_size=2, in_channels=4, num_layers=2, attention_head_dim=16,
                                  num_attention_heads=4, joint_attention_dim=32, caption_projection_dim=64,
                                  pooled_projection_dim=32, out_channels=4, pos_embed_max_size=32).to(device).eval()
    sched = FlowMatchEulerDiscreteScheduler()
    text = torch.randn(2, 77, 32, device=device)
    pooled = torch.randn(2, 32, device=device)

    def step():
        with torch.no_grad():
            sched.set_timesteps(10, device=device)
            latents = torch.randn(2, 4, 32, 32, device=device)
            for t in sched.timesteps:
                noise = model(hidden_states=latents, encoder_hidden_states=text, pooled_projections=pooled,
                              timestep=t.expand(latents.shape[0])).sample
                latents = sched.step(noise, t, latents).prev_sample

    return Workload("SD3 MMDiT + flow-match Euler (diffusion DiT)", "diffusion DiT", "diffusers", step, warmup=1, steps=2)


# qwen2_vl is kept for local runs: on torch 2.11 + CUDA its get_rope_index fails with the image grid on
# either device (a list of 0-dim CUDA tensors given to torch.tensor), so the default run leaves it out.
DEFAULT = ["mixtral", "qwen3_moe", "llava", "whisper", "gemma3n", "unet", "sd3"]
BUILDERS = {"mixtral": mixtral, "qwen3_moe": qwen3_moe, "llava": llava, "qwen2_vl": qwen2_vl, "whisper": whisper,
            "gemma3n": gemma3n, "unet": unet, "sd3": sd3}
