"""Builds libwebtensor.so with the Go toolchain into the package (see pyproject.toml).

`go build -buildmode=c-shared -o <build_lib>/webtensor/libwebtensor.so ./capi`
runs from the repository root (two folders up). WEBTENSOR_PREBUILT_LIBRARY
names an already built library to ship instead (no Go toolchain needed).
The default tuning policy (plugins-wasm/policies/kernel-variant) is built
beside it as policy-kernel-variant.wasm, or copied from
WEBTENSOR_PREBUILT_POLICY with a prebuilt library; the auto-agents' policy
(plugins-wasm/policies/auto, wt.auto's default) likewise as
policy-auto.wasm, or from WEBTENSOR_PREBUILT_AUTO_POLICY.

webtensor._fast (webtensor/_fast.c) is the C hot path of op calls. It is
optional: without a C compiler the build goes on without it, and the package
then runs everything through ctypes. It links nothing but libc; it reaches
libwebtensor.so through the function pointers ctypes already resolved.
"""

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, Extension, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent.parent.parent


class BuildWithGo(build_py):
    def run(self):
        super().run()
        out = Path(self.build_lib) / "webtensor" / "libwebtensor.so"
        out.parent.mkdir(parents=True, exist_ok=True)
        policy = out.with_name("policy-kernel-variant.wasm").resolve()
        auto_policy = out.with_name("policy-auto.wasm").resolve()
        prebuilt = os.environ.get("WEBTENSOR_PREBUILT_LIBRARY")
        if prebuilt:
            shutil.copyfile(prebuilt, out)
            if os.environ.get("WEBTENSOR_PREBUILT_POLICY"):
                shutil.copyfile(os.environ["WEBTENSOR_PREBUILT_POLICY"], policy)
            if os.environ.get("WEBTENSOR_PREBUILT_AUTO_POLICY"):
                shutil.copyfile(os.environ["WEBTENSOR_PREBUILT_AUTO_POLICY"], auto_policy)
            return
        if not (ROOT / "capi" / "include" / "webtensor.h").is_file():
            raise SystemExit(f"webtensor: the Go sources are not at {ROOT}; set WEBTENSOR_PREBUILT_LIBRARY")
        go = os.environ.get("GO", "go")
        cmd = [go, "build", "-buildmode=c-shared", "-o", str(out.resolve()), "./capi"]
        env = {**os.environ, "GOFLAGS": os.environ.get("GOFLAGS", "-mod=mod"), "CGO_ENABLED": "1"}
        try:
            subprocess.run(cmd, cwd=ROOT, check=True, env=env)
        except FileNotFoundError:
            raise SystemExit("webtensor: building from source needs the Go toolchain (go) on PATH") from None
        out.with_suffix(".h").unlink(missing_ok=True)  # cgo's generated header; webtensor.h is the contract
        # The default tuning policy (wt.set_tuning_policy("default")): a wasip1 module, no cgo.
        wasm_env = {**env, "GOOS": "wasip1", "GOARCH": "wasm", "CGO_ENABLED": "0"}
        cmd = [go, "build", "-buildmode=c-shared", "-o", str(policy), "./plugins-wasm/policies/kernel-variant"]
        subprocess.run(cmd, cwd=ROOT, check=True, env=wasm_env)
        # wt.auto's default policy.
        cmd = [go, "build", "-buildmode=c-shared", "-o", str(auto_policy), "./plugins-wasm/policies/auto"]
        subprocess.run(cmd, cwd=ROOT, check=True, env=wasm_env)


try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70
    from wheel.bdist_wheel import bdist_wheel


class PlatformWheel(bdist_wheel):
    """Any CPython 3 on this platform can use the wheel (py3-none-<platform>): the
    library is reached through ctypes, and webtensor._fast, built for the CPython
    that built the wheel, is skipped (ImportError) by any other."""

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


class BinaryDistribution(Distribution):
    """The wheel carries a native library: tag it for the platform, not py3-none-any."""

    def has_ext_modules(self):
        return True


FAST = Extension("webtensor._fast", ["webtensor/_fast.c"], optional=True)

setup(
    cmdclass={"build_py": BuildWithGo, "bdist_wheel": PlatformWheel},
    distclass=BinaryDistribution,
    ext_modules=[FAST],
)
