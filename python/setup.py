# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Build hook of the netagg package: bundle the C library it loads.

pip install ./python (from a checkout) builds lib/libnetagg.so.4 with
make if it is not there, and copies it into the package, which then finds
it beside itself. Everything else is in pyproject.toml.
"""

import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

LIB = Path(__file__).resolve().parent.parent / "lib"
SONAME = "libnetagg.so.4"


class BuildWithLibrary(build_py):
    """build_py, plus the shared library copied into the built package."""

    def run(self) -> None:
        super().run()
        lib = LIB / SONAME
        if not lib.exists():
            subprocess.run(["make", "-C", str(LIB), SONAME], check=True)
        dest = Path(self.build_lib) / "netagg" / SONAME
        shutil.copyfile(lib.resolve(), dest)


setup(cmdclass={"build_py": BuildWithLibrary})
