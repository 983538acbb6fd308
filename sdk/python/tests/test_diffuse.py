"""wt.diffuse: the library's diffusion pipelines through the C ABI, sampling
diffuse/testdata/ddpm_pipe with the seeds of sdk_pipeline.json, whose images
the Go library itself gave (abi/diffuse_test.go writes and checks it)."""

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import webtensor as wt
from conftest import webgpu_or_none

TESTDATA = Path(__file__).resolve().parents[3] / "diffuse" / "testdata"
REFS = json.loads((TESTDATA / "sdk_pipeline.json").read_text())


def test_generate_gives_the_librarys_images(no_leaks):
    with wt.diffuse.Pipeline(TESTDATA / REFS["pipeline"], device="cpu") as pipe:
        assert (pipe.pipeline, pipe.scheduler, pipe.image_shape) == ("DDPMPipeline", "DDPMScheduler", (3, 16, 16))
        assert not pipe.class_conditional and pipe.device == "cpu"
        for run in REFS["runs"]:
            img = pipe.generate(batch=run["batch"], steps=run["steps"], seed=run["seed"],
                                scheduler=run["scheduler"] or None)
            assert img.shape == tuple(run["shape"])
            np.testing.assert_allclose(img.numpy().ravel(), np.array(run["images"], np.float32), atol=REFS["atol"])
            del img


def zipped(folder: Path, prefix: str = "", extra: dict[str, bytes] | None = None) -> bytes:
    """A zip archive of folder's files (under prefix), plus extra entries."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                z.write(f, prefix + f.relative_to(folder).as_posix())
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return buf.getvalue()


def test_a_zip_of_the_folder_gives_the_same_images(no_leaks):
    data = zipped(TESTDATA / REFS["pipeline"], prefix="ddpm_pipe/")
    with wt.diffuse.Pipeline.from_zip(data, device="cpu") as pipe:
        assert (pipe.pipeline, pipe.scheduler, pipe.image_shape) == ("DDPMPipeline", "DDPMScheduler", (3, 16, 16))
        for run in REFS["runs"]:
            img = pipe.generate(batch=run["batch"], steps=run["steps"], seed=run["seed"],
                                scheduler=run["scheduler"] or None)
            np.testing.assert_allclose(img.numpy().ravel(), np.array(run["images"], np.float32), atol=REFS["atol"])
            del img
    with wt.diffuse.Pipeline.from_zip(memoryview(data), int8_weights=True) as pipe:
        assert pipe.int8_weights


def test_hostile_zips_raise_naming_the_problem():
    data = zipped(TESTDATA / REFS["pipeline"])
    with pytest.raises(ValueError, match="truncated"):
        wt.diffuse.Pipeline.from_zip(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r'entry "\.\./evil": the path leaves the archive\'s root'):
        wt.diffuse.Pipeline.from_zip(zipped(TESTDATA / REFS["pipeline"], extra={"../evil": b"x"}))
    index = (TESTDATA / REFS["pipeline"] / "model_index.json").read_bytes()
    no_unet = zipped(TESTDATA / REFS["pipeline"] / "scheduler", prefix="scheduler/", extra={"model_index.json": index})
    with pytest.raises(ValueError, match="the zip archive has no unet/config.json"):
        wt.diffuse.Pipeline.from_zip(no_unet)
    with pytest.raises(TypeError, match="the archive's bytes"):
        wt.diffuse.Pipeline.from_zip("pipe.zip")


def test_int8_weights_stay_within_38_db(no_leaks):
    with wt.diffuse.Pipeline(TESTDATA / REFS["pipeline"], device="cpu") as f32, \
            wt.diffuse.Pipeline(TESTDATA / REFS["pipeline"], device="cpu", int8_weights=True) as pipe:
        assert pipe.int8_weights and not f32.int8_weights
        assert pipe.weight_bytes < f32.weight_bytes / 3.5
        for run in REFS["runs"]:
            img = pipe.generate(batch=run["batch"], steps=run["steps"], seed=run["seed"],
                                scheduler=run["scheduler"] or None)
            mse = float(np.mean((img.numpy().ravel() - np.array(run["images"], np.float32)) ** 2))
            assert 0 < mse and 10 * np.log10(1 / mse) >= 38
            del img


def test_errors_are_the_librarys():
    with pytest.raises(FileNotFoundError, match="model_index.json"):
        wt.diffuse.Pipeline(TESTDATA / "unet2d_tiny")
    with wt.diffuse.Pipeline(TESTDATA / REFS["pipeline"]) as pipe:
        with pytest.raises(ValueError, match="FancyScheduler"):
            pipe.generate(steps=2, scheduler="FancyScheduler")
        with pytest.raises(ValueError, match="takes no class labels"):
            pipe.generate_classes([1], steps=2)


def test_webgpu_samples_the_same_noise():
    dev = webgpu_or_none()
    if dev is None:
        pytest.skip("no WebGPU adapter on this machine (wt.devices() lists no webgpu)")
    run = REFS["runs"][0]
    with wt.diffuse.Pipeline(TESTDATA / REFS["pipeline"], device=dev) as pipe:
        img = pipe.generate(batch=run["batch"], steps=run["steps"], seed=run["seed"])
        assert img.device == dev
        # The Philox stream is the same on every device; the arithmetic rounds differently.
        np.testing.assert_allclose(img.numpy().ravel(), np.array(run["images"], np.float32), atol=1e-4)


SD = TESTDATA / "sd_tiny"
SD_RUN = json.loads((TESTDATA / "sd_refs.json").read_text())["runs"]["ddim"]


def test_text_to_image_gives_diffusers_images(no_leaks):
    """diffusers' initial latents (sd_refs.safetensors, make_sd_refs.py) give
    StableDiffusionPipeline's images; DDIM at eta 0 draws nothing else."""
    from safetensors.numpy import load_file

    refs = load_file(TESTDATA / "sd_refs.safetensors")
    with wt.diffuse.Pipeline(SD, device="cpu") as pipe:
        want = ("StableDiffusionPipeline", "DDIMScheduler", (3, 16, 16))
        assert (pipe.pipeline, pipe.scheduler, pipe.image_shape) == want
        assert pipe.text_conditional and not pipe.class_conditional
        emb = pipe.encode_text(SD_RUN["prompts"])
        np.testing.assert_allclose(emb.numpy(), refs["ddim/prompt_embeds"], atol=1e-5)
        img = pipe.generate_text(SD_RUN["prompts"], steps=SD_RUN["steps"], guidance_scale=SD_RUN["guidance_scale"],
                                 images_per_prompt=SD_RUN["images_per_prompt"], latents=refs["ddim/noise"][0])
        assert img.shape == (4, 3, 16, 16)
        np.testing.assert_allclose(img.numpy().transpose(0, 2, 3, 1), refs["ddim/images"], atol=1e-4)
        del emb, img


def test_text_to_image_is_seeded(no_leaks):
    with wt.diffuse.Pipeline(SD, device="cpu") as pipe:
        def run(seed):
            img = pipe.generate_text("a red cube", negative_prompts="blurry", steps=2, seed=seed, images_per_prompt=2,
                                     height=8, width=12, scheduler="EulerAncestralDiscreteScheduler")
            v = img.numpy()
            del img
            return v

        a = run(5)
        assert a.shape == (2, 3, 8, 12) and a.min() >= 0 and a.max() <= 1
        np.testing.assert_array_equal(a, run(5))
        assert not np.array_equal(a, run(6))
        with pytest.raises(ValueError, match="2 negative prompts for 1 prompts"):
            pipe.generate_text("a", negative_prompts=["x", "y"], steps=1)
        with pytest.raises(ValueError, match="is text-conditional: use diffusion.generate_text"):
            pipe.generate(steps=1)
    with wt.diffuse.Pipeline(TESTDATA / REFS["pipeline"]) as pipe:
        with pytest.raises(ValueError, match="takes no prompts"):
            pipe.generate_text("a", steps=1)
