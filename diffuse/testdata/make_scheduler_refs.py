"""Reference vectors for diffuse's schedulers, made by diffusers (test-only; CI never runs this).

Run from the repository root with the project's Python (PyTorch, diffusers 0.42; LMS needs scipy):

    python diffuse/testdata/make_scheduler_refs.py

For every case it builds the diffusers scheduler from a full config (the one save_pretrained would
write), sets the timesteps and runs the whole sampling loop with a deterministic fake model,

    model_output = scale_model_input(x, t) * 0.3 + float32(cos(t / 97))

in float32, from one seeded sample of shape (2, 4, 8, 8). It records the timesteps, init_noise_sigma,
every scaled model input (schedulers that scale), every prev_sample, every noise tensor the scheduler
drew (randn_tensor is patched in the scheduler's module, so the Go test feeds the same noise) and an
add_noise result. Tensors go to schedulers.safetensors, everything else to schedulers.json.
"""

import json
import math
import os

import diffusers
import torch
from diffusers.schedulers import (
    scheduling_ddim,
    scheduling_ddpm,
    scheduling_dpmsolver_multistep,
    scheduling_euler_ancestral_discrete,
    scheduling_euler_discrete,
    scheduling_lms_discrete,
    scheduling_pndm,
)
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
SHAPE = (2, 4, 8, 8)
SD = {"beta_schedule": "scaled_linear", "beta_start": 0.00085, "beta_end": 0.012}
COS = {"beta_schedule": "squaredcos_cap_v2"}

# (name, class, config overrides, steps, step kwargs)
CASES = [
    ("ddpm_linear_eps_leading_10", "DDPMScheduler", {}, 10, {}),
    ("ddpm_sd_v_trailing_25", "DDPMScheduler", {**SD, "prediction_type": "v_prediction", "clip_sample": False,
                                                "timestep_spacing": "trailing"}, 25, {}),
    ("ddpm_cos_sample_linspace_10", "DDPMScheduler", {**COS, "prediction_type": "sample", "clip_sample_range": 0.5,
                                                      "timestep_spacing": "linspace"}, 10, {}),
    ("ddpm_linear_eps_large_offset_10", "DDPMScheduler", {"variance_type": "fixed_large", "steps_offset": 1,
                                                          "clip_sample": False}, 10, {}),
    ("ddim_sd_eps_leading_10", "DDIMScheduler", {**SD, "clip_sample": False, "set_alpha_to_one": False,
                                                 "steps_offset": 1}, 10, {}),
    ("ddim_linear_v_trailing_eta1_25", "DDIMScheduler", {"prediction_type": "v_prediction", "clip_sample": False,
                                                         "timestep_spacing": "trailing"}, 25, {"eta": 1.0}),
    ("ddim_cos_sample_linspace_10", "DDIMScheduler", {**COS, "prediction_type": "sample",
                                                      "timestep_spacing": "linspace"}, 10, {}),
    ("ddim_linear_eps_clip_eta1_10", "DDIMScheduler", {}, 10, {"eta": 1.0}),
    ("pndm_sd_eps_skipprk_10", "PNDMScheduler", {**SD, "skip_prk_steps": True, "steps_offset": 1}, 10, {}),
    ("pndm_linear_eps_prk_10", "PNDMScheduler", {}, 10, {}),
    ("pndm_cos_v_skipprk_trailing_25", "PNDMScheduler", {**COS, "prediction_type": "v_prediction",
                                                         "skip_prk_steps": True, "set_alpha_to_one": True,
                                                         "timestep_spacing": "trailing"}, 25, {}),
    ("pndm_linear_eps_prk_linspace_25", "PNDMScheduler", {"timestep_spacing": "linspace"}, 25, {}),
    ("lms_sd_eps_linspace_10", "LMSDiscreteScheduler", SD, 10, {}),
    ("lms_linear_v_leading_25", "LMSDiscreteScheduler", {"prediction_type": "v_prediction",
                                                         "timestep_spacing": "leading", "steps_offset": 1}, 25, {}),
    ("lms_cos_sample_trailing_10", "LMSDiscreteScheduler", {**COS, "prediction_type": "sample",
                                                            "timestep_spacing": "trailing"}, 10, {}),
    ("lms_sd_eps_karras_10", "LMSDiscreteScheduler", {**SD, "use_karras_sigmas": True}, 10, {}),
    ("euler_sd_eps_linspace_10", "EulerDiscreteScheduler", SD, 10, {}),
    ("euler_linear_v_leading_25", "EulerDiscreteScheduler", {"prediction_type": "v_prediction",
                                                             "timestep_spacing": "leading", "steps_offset": 1}, 25, {}),
    ("euler_cos_sample_trailing_10", "EulerDiscreteScheduler", {**COS, "prediction_type": "sample",
                                                                "timestep_spacing": "trailing"}, 10, {}),
    ("euler_sd_eps_karras_sigmamin_10", "EulerDiscreteScheduler", {**SD, "use_karras_sigmas": True,
                                                                   "final_sigmas_type": "sigma_min"}, 10, {}),
    ("eulera_sd_eps_linspace_10", "EulerAncestralDiscreteScheduler", SD, 10, {}),
    ("eulera_linear_v_trailing_25", "EulerAncestralDiscreteScheduler", {"prediction_type": "v_prediction",
                                                                        "timestep_spacing": "trailing"}, 25, {}),
    ("eulera_cos_eps_leading_10", "EulerAncestralDiscreteScheduler", {**COS, "timestep_spacing": "leading",
                                                                      "steps_offset": 1}, 10, {}),
    ("dpm2m_sd_eps_linspace_10", "DPMSolverMultistepScheduler", SD, 10, {}),
    ("dpm1_linear_v_leading_10", "DPMSolverMultistepScheduler", {"solver_order": 1, "prediction_type": "v_prediction",
                                                                 "timestep_spacing": "leading", "steps_offset": 1},
     10, {}),
    ("dpm2m_cos_sample_trailing_25", "DPMSolverMultistepScheduler", {**COS, "prediction_type": "sample",
                                                                     "timestep_spacing": "trailing"}, 25, {}),
    ("dpm3_sd_eps_linspace_25", "DPMSolverMultistepScheduler", {**SD, "solver_order": 3}, 25, {}),
    ("dpm2m_sd_eps_karras_25", "DPMSolverMultistepScheduler", {**SD, "use_karras_sigmas": True}, 25, {}),
    ("dpm2m_heun_sigmamin_10", "DPMSolverMultistepScheduler", {**SD, "solver_type": "heun",
                                                               "final_sigmas_type": "sigma_min"}, 10, {}),
    ("dpmsde2_sd_eps_linspace_10", "DPMSolverMultistepScheduler", {**SD, "algorithm_type": "sde-dpmsolver++"},
     10, {}),
    ("dpmsde2_linear_v_trailing_25", "DPMSolverMultistepScheduler", {"algorithm_type": "sde-dpmsolver++",
                                                                     "prediction_type": "v_prediction",
                                                                     "timestep_spacing": "trailing"}, 25, {}),
    ("dpmsde1_cos_eps_linspace_10", "DPMSolverMultistepScheduler", {**COS, "algorithm_type": "sde-dpmsolver++",
                                                                    "solver_order": 1}, 10, {}),
]

MODULES = [scheduling_ddim, scheduling_ddpm, scheduling_dpmsolver_multistep, scheduling_euler_ancestral_discrete,
           scheduling_euler_discrete, scheduling_lms_discrete, scheduling_pndm]
SCALES = {"LMSDiscreteScheduler", "EulerDiscreteScheduler", "EulerAncestralDiscreteScheduler"}


def patch_randn(drawn):
    """Make every scheduler module's randn_tensor record what it returns."""
    for m in MODULES:
        if not hasattr(m, "randn_tensor"):  # deterministic schedulers (LMS, PNDM) draw nothing
            continue
        orig = m.randn_tensor

        def rec(*args, _orig=orig, **kwargs):
            out = _orig(*args, **kwargs)
            drawn.append(out.clone())
            return out

        m.randn_tensor = rec


def fake_model(x, t):
    return x * 0.3 + float(torch.tensor(math.cos(float(t) / 97), dtype=torch.float32))


def jsonable(cfg):
    out = {}
    for k, v in cfg.items():
        if k == "_use_default_values":
            continue
        out[k] = v
    return out


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)
    sample = torch.randn(SHAPE, generator=gen, dtype=torch.float32)
    an_original = torch.randn(SHAPE, generator=gen, dtype=torch.float32)
    an_noise = torch.randn(SHAPE, generator=gen, dtype=torch.float32)
    tensors = {"sample": sample, "add_noise/original": an_original, "add_noise/noise": an_noise}
    for sched, extra in [("linear", {}), ("scaled_linear", SD), ("squaredcos_cap_v2", COS)]:
        s = diffusers.DDPMScheduler(**extra)
        tensors[f"alphas_cumprod/{sched}"] = s.alphas_cumprod.clone()
    drawn = []
    patch_randn(drawn)
    index = {"diffusers": diffusers.__version__, "torch": torch.__version__, "shape": list(SHAPE), "cases": []}
    for seed, (name, cls, over, steps, kwargs) in enumerate(CASES):
        s = getattr(diffusers, cls)(**over)
        cfg = jsonable(s.config)
        cfg["_class_name"] = cls
        cfg["_diffusers_version"] = diffusers.__version__
        s.set_timesteps(steps)
        ts = [float(t) for t in s.timesteps]
        sigma0 = float(s.init_noise_sigma)
        x = sample * s.init_noise_sigma
        gen = torch.Generator().manual_seed(seed)
        prevs, scaled, noises, noise_steps = [], [], [], []
        for i, t in enumerate(s.timesteps):
            inp = s.scale_model_input(x, t)
            if cls in SCALES:
                scaled.append(inp)
            out = fake_model(inp, t)
            kw = dict(kwargs)
            if cls not in ("PNDMScheduler", "LMSDiscreteScheduler"):
                kw["generator"] = gen
            drawn.clear()
            x = s.step(out, t, x, **kw).prev_sample
            assert len(drawn) <= 1, (name, i, len(drawn))
            if drawn:
                noises.append(drawn[0])
                noise_steps.append(i)
            prevs.append(x)
        tensors[f"{name}/prev"] = torch.stack(prevs).contiguous()
        if scaled:
            tensors[f"{name}/scaled"] = torch.stack(scaled).contiguous()
        if noises:
            tensors[f"{name}/noise"] = torch.stack(noises).to(torch.float32).contiguous()
        an_t = s.timesteps[[0, len(s.timesteps) // 2]]
        tensors[f"{name}/add_noise"] = s.add_noise(an_original, an_noise, an_t).contiguous()
        index["cases"].append({
            "name": name, "scheduler": cls, "steps": steps, "eta": kwargs.get("eta", 0.0),
            "config": json.dumps(cfg),  # as save_pretrained writes it (-Infinity included)
            "timesteps": ts, "init_noise_sigma": sigma0, "noise_steps": noise_steps,
            "add_noise_timesteps": [float(t) for t in an_t],
        })
    save_file(tensors, os.path.join(HERE, "schedulers.safetensors"))
    with open(os.path.join(HERE, "schedulers.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
