"""wt.diffuse: the library's diffusion pipelines through the C ABI, sampling
diffuse/testdata/ddpm_pipe with the seeds of sdk_pipeline.json, whose images
the Go library itself gave (abi/diffuse_test.go writes and checks it)."""

import json
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
            np.testing.assert_allclose(img.numpy().ravel(), np.array(run["images"], np.float32), atol=1e-6)
            del img


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
