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


def _encoder_decoder_loop(model, encode: Callable[[], object], start, decode_steps: int):
    """One request of an encoder-decoder: encode once, then greedy decode steps with the cache."""

    def step():
        with torch.no_grad():
            enc = encode()
            out = model(encoder_outputs=enc, decoder_input_ids=start, use_cache=True)
            for _ in range(decode_steps):
                nxt = out.logits[:, -1:].argmax(-1)
                out = model(encoder_outputs=enc, decoder_input_ids=nxt, past_key_values=out.past_key_values,
                            use_cache=True)

    return step


def _causal_lm(device, model_class, cfg, name: str, family: str, shape=(4, 64), decode_steps: int = 8) -> Workload:
    """A causal LM built from `cfg` on `device`, driven by `_decode_loop` from a random prompt."""
    model = model_class(cfg).to(device).eval()
    ids = torch.randint(0, cfg.vocab_size, shape, device=device)
    return Workload(name, family, "transformers", _decode_loop(model, lambda: model(input_ids=ids, use_cache=True), decode_steps))


def mixtral(device):
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = MixtralConfig(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                        num_attention_heads=8, num_key_value_heads=4, num_local_experts=8,
                        num_experts_per_tok=2, max_position_embeddings=512,
                        experts_implementation="eager")  # the per-expert loop (Qwen3-MoE below: grouped_mm)
    return _causal_lm(device, MixtralForCausalLM, cfg, "Mixtral, eager experts (MoE)", "MoE")


def qwen3_moe(device):
    from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM

    cfg = Qwen3MoeConfig(vocab_size=1024, hidden_size=256, intermediate_size=512, moe_intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=4, num_experts=16,
                         num_experts_per_tok=4, head_dim=32, max_position_embeddings=512)
    return _causal_lm(device, Qwen3MoeForCausalLM, cfg, "Qwen3-MoE, grouped_mm experts (MoE)", "MoE")


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

    return Workload("Whisper (audio)", "audio", "transformers",
                    _encoder_decoder_loop(model, lambda: model.get_encoder()(feats), start, 8))


def gemma3n(device):
    from transformers import Gemma3nTextConfig, Gemma3nForCausalLM

    cfg = Gemma3nTextConfig(vocab_size=1024, vocab_size_per_layer_input=1024, hidden_size=256,
                            hidden_size_per_layer_input=32, intermediate_size=512, num_hidden_layers=4,
                            num_attention_heads=4, num_key_value_heads=2, head_dim=64, num_kv_shared_layers=2,
                            laurel_rank=16, altup_num_inputs=4, sliding_window=64,
                            layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
                            activation_sparsity_pattern=[0.95, 0.95, 0.0, 0.0], max_position_embeddings=512)
    return _causal_lm(device, Gemma3nForCausalLM, cfg, "Gemma3n (text decoder)", "dense LLM", shape=(2, 32))


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


# --- The second round of families (added after the first round's 23 sites were all found,
# and traced before any change was made for them): other MoE routers, a state-space model,
# an encoder-decoder, a vision-language model on SigLIP + Gemma, a generate() loop, the
# common diffusion schedulers, and Flux's and Wan's transformers.

def deepseek_v3(device):
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

    cfg = DeepseekV3Config(vocab_size=1024, hidden_size=256, intermediate_size=512, moe_intermediate_size=128,
                           num_hidden_layers=2, first_k_dense_replace=1, n_routed_experts=16, num_experts_per_tok=4,
                           n_group=4, topk_group=2, n_shared_experts=1, num_attention_heads=8, num_key_value_heads=8,
                           q_lora_rank=64, kv_lora_rank=32, qk_rope_head_dim=16, qk_nope_head_dim=16, v_head_dim=32,
                           max_position_embeddings=512)
    return _causal_lm(device, DeepseekV3ForCausalLM, cfg, "DeepSeek-V3, grouped top-k routing (MoE)", "MoE")


def gpt_oss(device):
    from transformers import GptOssConfig, GptOssForCausalLM

    cfg = GptOssConfig(vocab_size=1024, hidden_size=256, intermediate_size=256, num_hidden_layers=2,
                       num_attention_heads=8, num_key_value_heads=4, head_dim=32, num_local_experts=8,
                       num_experts_per_tok=2, sliding_window=64, layer_types=["sliding_attention", "full_attention"],
                       max_position_embeddings=512)
    return _causal_lm(device, GptOssForCausalLM, cfg, "GPT-OSS (MoE)", "MoE")


def olmoe(device):
    from transformers import OlmoeConfig, OlmoeForCausalLM

    cfg = OlmoeConfig(vocab_size=1024, hidden_size=256, intermediate_size=256, num_hidden_layers=2,
                      num_attention_heads=8, num_key_value_heads=8, num_experts=16, num_experts_per_tok=4,
                      max_position_embeddings=512)
    return _causal_lm(device, OlmoeForCausalLM, cfg, "OLMoE (MoE)", "MoE")


def mamba_generate(device):
    from transformers import MambaConfig, MambaForCausalLM

    cfg = MambaConfig(vocab_size=1024, hidden_size=128, state_size=16, num_hidden_layers=2, eos_token_id=None,
                      pad_token_id=0)
    model = MambaForCausalLM(cfg).to(device).eval()
    ids = torch.randint(1, cfg.vocab_size, (2, 32), device=device)

    def step():
        with torch.no_grad():
            model.generate(input_ids=ids, max_new_tokens=8, do_sample=False, pad_token_id=0)

    return Workload("Mamba, generate() (state-space)", "state-space", "transformers", step)


def t5(device):
    from transformers import T5Config, T5ForConditionalGeneration

    cfg = T5Config(vocab_size=1024, d_model=128, d_kv=32, d_ff=256, num_layers=2, num_decoder_layers=2,
                   num_heads=4, decoder_start_token_id=0, pad_token_id=0)
    model = T5ForConditionalGeneration(cfg).to(device).eval()
    src = torch.randint(1, cfg.vocab_size, (2, 48), device=device)
    start = torch.zeros(2, 1, dtype=torch.long, device=device)

    return Workload("T5 (encoder-decoder)", "encoder-decoder", "transformers",
                    _encoder_decoder_loop(model, lambda: model.get_encoder()(input_ids=src), start, 8))


def paligemma(device):
    from transformers import GemmaConfig, PaliGemmaConfig, PaliGemmaForConditionalGeneration, SiglipVisionConfig

    vision = SiglipVisionConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                image_size=56, patch_size=14, projection_dim=256)
    text = GemmaConfig(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                       num_attention_heads=8, num_key_value_heads=4, head_dim=32, max_position_embeddings=512)
    cfg = PaliGemmaConfig(vision_config=vision, text_config=text, image_token_index=1000, projection_dim=256)
    model = PaliGemmaForConditionalGeneration(cfg).to(device).eval()
    ids = torch.randint(0, 900, (2, 40), device=device)
    ids[:, :16] = 1000  # 16 patches of a 56x56 image come first
    pixels = torch.randn(2, 3, 56, 56, device=device)
    prefill = lambda: model(input_ids=ids, pixel_values=pixels, use_cache=True)
    return Workload("PaliGemma (vision-language)", "vision-language", "transformers", _decode_loop(model, prefill, 6))


def _tiny_unet(device):
    from diffusers import UNet2DConditionModel

    return UNet2DConditionModel(sample_size=32, in_channels=4, out_channels=4, layers_per_block=1,
                                block_out_channels=(32, 64), cross_attention_dim=32, attention_head_dim=8,
                                down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                                up_block_types=("UpBlock2D", "CrossAttnUpBlock2D")).to(device).eval()


def _unet_with(scheduler_name: str, label: str):
    """The tiny UNet denoised by a diffusers scheduler, the way pipelines drive it:
    `set_timesteps`, then per step `scale_model_input`, the model, `step`."""

    def build(device):
        import diffusers

        model = _tiny_unet(device)
        sched = getattr(diffusers, scheduler_name)(num_train_timesteps=1000)
        text = torch.randn(2, 77, 32, device=device)

        def step():
            with torch.no_grad():
                sched.set_timesteps(10, device=device)
                latents = torch.randn(2, 4, 32, 32, device=device) * sched.init_noise_sigma
                for t in sched.timesteps:
                    model_input = sched.scale_model_input(latents, t)
                    noise = model(model_input, t, encoder_hidden_states=text).sample
                    latents = sched.step(noise, t, latents).prev_sample

        return Workload(f"UNet2DCondition + {label} (diffusion UNet)", "diffusion UNet", "diffusers", step,
                        warmup=1, steps=2)

    return build


def flux(device):
    from diffusers import FlowMatchEulerDiscreteScheduler, FluxTransformer2DModel

    model = FluxTransformer2DModel(patch_size=1, in_channels=16, num_layers=1, num_single_layers=1,
                                   attention_head_dim=16, num_attention_heads=2, joint_attention_dim=32,
                                   pooled_projection_dim=32, axes_dims_rope=(4, 6, 6)).to(device).eval()
    sched = FlowMatchEulerDiscreteScheduler(use_dynamic_shifting=True)
    text = torch.randn(1, 16, 32, device=device)
    pooled = torch.randn(1, 32, device=device)
    side = 8
    img_ids = torch.zeros(side * side, 3, device=device)
    img_ids[:, 1] = torch.arange(side, device=device).repeat_interleave(side)
    img_ids[:, 2] = torch.arange(side, device=device).repeat(side)
    txt_ids = torch.zeros(16, 3, device=device)

    def step():
        with torch.no_grad():
            sched.set_timesteps(10, device=device, mu=0.5)
            latents = torch.randn(1, side * side, 16, device=device)
            for t in sched.timesteps:
                noise = model(hidden_states=latents, encoder_hidden_states=text, pooled_projections=pooled,
                              timestep=(t / 1000).expand(latents.shape[0]), img_ids=img_ids, txt_ids=txt_ids).sample
                latents = sched.step(noise, t, latents).prev_sample

    return Workload("Flux transformer + flow-match Euler, dynamic shift (diffusion DiT)", "diffusion DiT", "diffusers",
                    step, warmup=1, steps=2)


def wan(device):
    from diffusers import UniPCMultistepScheduler, WanTransformer3DModel

    model = WanTransformer3DModel(patch_size=(1, 2, 2), num_attention_heads=2, attention_head_dim=16, in_channels=4,
                                  out_channels=4, text_dim=32, freq_dim=32, ffn_dim=64, num_layers=2,
                                  rope_max_seq_len=64).to(device).eval()
    sched = UniPCMultistepScheduler(prediction_type="flow_prediction", use_flow_sigmas=True, flow_shift=3.0)
    text = torch.randn(1, 16, 32, device=device)

    def step():
        with torch.no_grad():
            sched.set_timesteps(10, device=device)
            latents = torch.randn(1, 4, 3, 16, 16, device=device)
            for t in sched.timesteps:
                noise = model(hidden_states=latents, timestep=t.expand(latents.shape[0]),
                              encoder_hidden_states=text).sample
                latents = sched.step(noise, t, latents).prev_sample

    return Workload("Wan transformer + UniPC, flow sigmas (video DiT)", "video DiT", "diffusers", step,
                    warmup=1, steps=2)


SECOND_ROUND = {
    "deepseek_v3": deepseek_v3, "gpt_oss": gpt_oss, "olmoe": olmoe, "mamba_generate": mamba_generate, "t5": t5,
    "paligemma": paligemma,
    "unet_dpm": _unet_with("DPMSolverMultistepScheduler", "DPM-Solver++"),
    "unet_euler": _unet_with("EulerDiscreteScheduler", "Euler"),
    "unet_euler_a": _unet_with("EulerAncestralDiscreteScheduler", "Euler ancestral"),
    "unet_unipc": _unet_with("UniPCMultistepScheduler", "UniPC"),
    "unet_pndm": _unet_with("PNDMScheduler", "PNDM"),
    "unet_lms": _unet_with("LMSDiscreteScheduler", "LMS"),
    "unet_heun": _unet_with("HeunDiscreteScheduler", "Heun"),
    "unet_ddpm": _unet_with("DDPMScheduler", "DDPM"),
    "unet_lcm": _unet_with("LCMScheduler", "LCM"),
    "flux": flux, "wan": wan,
}


# qwen2_vl is kept for local runs: on torch 2.11 + CUDA its get_rope_index fails with the image grid on
# either device (a list of 0-dim CUDA tensors given to torch.tensor), so the default run leaves it out.
DEFAULT = ["mixtral", "qwen3_moe", "llava", "whisper", "gemma3n", "unet", "sd3", *SECOND_ROUND]
BUILDERS = {"mixtral": mixtral, "qwen3_moe": qwen3_moe, "llava": llava, "qwen2_vl": qwen2_vl, "whisper": whisper,
            "gemma3n": gemma3n, "unet": unet, "sd3": sd3, **SECOND_ROUND}
