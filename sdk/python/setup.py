"""Builds libwebtensor.so with the Go toolchain into the package (see pyproject.toml).

`go build -buildmode=c-shared -o <build_lib>/webtensor/libwebtensor.so ./capi`
runs from the repository root (two folders up). WEBTENSOR_PREBUILT_LIBRARY
names an already built library to ship instead (no Go toolchain needed).
"""

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent.parent.parent


class BuildWithGo(build_py):
    def run(self):
        super().run()
        out = Path(self.build_lib) / "webtensor" / "libwebtensor.so"
        out.parent.mkdir(parents=True, exist_ok=True)
        prebuilt = os.environ.get("WEBTENSOR_PREBUILT_LIBRARY")
        if prebuilt:
            shutil.copyfile(prebuilt, out)
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


try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70
    from wheel.bdist_wheel import bdist_wheel


class PlatformWheel(bdist_wheel):
    """ctypes only: any CPython 3 on this platform can load the wheel (py3-none-<platform>)."""

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


class BinaryDistribution(Distribution):
    """The wheel carries a native library: tag it for the platform, not py3-none-any."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithGo, "bdist_wheel": PlatformWheel}, distclass=BinaryDistribution)
