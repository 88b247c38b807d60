"""Builds the op library (libtessera_torch.so) with CMake against the importable torch and ships
it inside the package (tessera/_lib/). Configuration (environment variables):

  TESSERA_SOURCE_DIR   repository root (default: the parent of this directory)
  TESSERA_BUILD_DIR    CMake build directory (default: <root>/build-python, reused between installs)
  TESSERA_CMAKE_ARGS   extra CMake arguments, e.g. "-DTESSERA_CUDA=OFF"
  TESSERA_BUILD_JOBS   parallel build jobs (default: all cores)
"""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

LIB = "libtessera_torch.so"


def build_library() -> Path:
    try:
        import torch
    except ImportError as e:
        sys.exit("tessera: torch is not importable in this environment; install torch first and build with "
                 "`pip install --no-build-isolation ./python` (" + str(e) + ")")
    here = Path(__file__).resolve().parent
    root = Path(os.environ.get("TESSERA_SOURCE_DIR", here.parent)).resolve()
    if not (root / "CMakeLists.txt").is_file() or not (root / "src" / "torch").is_dir():
        sys.exit(f"tessera: {root} is not the tessera repository root (set TESSERA_SOURCE_DIR)")
    build = Path(os.environ.get("TESSERA_BUILD_DIR", root / "build-python")).resolve()
    prefix = torch.utils.cmake_prefix_path
    args = ["cmake", "-S", str(root), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", "-DTESSERA_TESTS=OFF",
            "-DTESSERA_TORCH=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
    # pip wheels ship TorchConfig.cmake under cmake_prefix_path; Debian's python3-torch points there
    # but installs it system-wide (/usr/lib/<triplet>/cmake/Torch), which CMake finds by itself.
    if (Path(prefix) / "Torch" / "TorchConfig.cmake").is_file():
        args += [f"-DTorch_DIR={prefix}/Torch", f"-DCMAKE_PREFIX_PATH={prefix}"]
    args += shlex.split(os.environ.get("TESSERA_CMAKE_ARGS", ""))
    print("tessera: configuring:", " ".join(args), flush=True)
    subprocess.check_call(args)
    jobs = os.environ.get("TESSERA_BUILD_JOBS", str(os.cpu_count() or 1))
    subprocess.check_call(["cmake", "--build", str(build), "--target", "tessera_torch", "-j", jobs])
    lib = build / "src" / "torch" / LIB
    if not lib.is_file():
        sys.exit(f"tessera: CMake finished but {lib} is missing (was LibTorch found? see the configure output)")
    return lib


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        lib = build_library()
        dest = Path(self.build_lib) / "tessera" / "_lib"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lib, dest / LIB)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # platform wheel: it carries a compiled library
        return True


setup(cmdclass={"build_py": BuildPyWithLibrary}, distclass=BinaryDistribution)
