"""Installs dnnc into a Python environment from an existing CMake build (docs/python.md):

    pip install --no-build-isolation ./python                               # the build in build/
    DNNC_BUILD_DIR=/path/to/build pip install --no-build-isolation ./python

Nothing is compiled here. The package dnnc and its PyNN backend (dnnc/pynn/) and the import
hook come from this folder; the compiled module _dnnc and the dnnc-node it starts come from
the build, both into the installed dnnc/ (the module starts the dnnc-node in its own folder
first); dnnc_pynn_hook.pth makes `import pyNN.dnnc` work there as the set-up's dnnc.pth does.
"""
import os
import re
import shutil
import sys
from glob import glob
from importlib.machinery import EXTENSION_SUFFIXES

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(os.environ.get("DNNC_BUILD_DIR") or os.path.join(SOURCE, "build"))


def fail(message):
    print("dnnc: %s" % message, file=sys.stderr)
    sys.exit(2)


def project_version():
    """The version in the top-level CMakeLists.txt's project()."""
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        match = re.search(r"project\(\s*dnnc\s+VERSION\s+([0-9.]+)", f.read())
    if not match:
        fail("no `project(dnnc VERSION ...)` in %s" % os.path.join(SOURCE, "CMakeLists.txt"))
    return match.group(1)


def built_files():
    """The build's compiled module for the Python running this, and its dnnc-node."""
    build_command = ("build it first (DNNC_BUILD_DIR names another build): cmake -S %s -B %s -G Ninja "
                     "-DCMAKE_BUILD_TYPE=Release && ninja -C %s dnnc_python" % (SOURCE, BUILD, BUILD))
    package = os.path.join(BUILD, "python", "dnnc")
    modules = [path for path in (os.path.join(package, "_dnnc" + suffix) for suffix in EXTENSION_SUFFIXES)
               if os.path.isfile(path)]
    if not modules:
        others = glob(os.path.join(package, "_dnnc*.so"))
        if others:
            fail("%s is built for another Python than %s (%s); configure the build with -DPython3_EXECUTABLE=%s"
                 % (os.path.basename(others[0]), sys.executable, EXTENSION_SUFFIXES[0], sys.executable))
        fail("no compiled module _dnnc in %s; %s" % (package, build_command))
    node = os.path.join(BUILD, "tools", "dnnc-node")  # where tools/CMakeLists.txt builds it
    if not os.access(node, os.X_OK):
        fail("no dnnc-node in %s; %s" % (os.path.dirname(node), build_command))
    return modules[0], node


# Checked first, so that nothing is written anywhere for a build that is not there.
BUILT_FILES = built_files()


class BuildWithCompiledPart(build_py):
    """The pure-Python files, then the build's _dnnc and dnnc-node beside them in dnnc/, and
    the .pth file at the top of site-packages (whatever the wheel's root holds goes there)."""

    def run(self):
        shutil.rmtree(self.build_lib, ignore_errors=True)  # the wheel holds this build's files only
        super().run()
        for path in BUILT_FILES:
            self.copy_file(path, os.path.join(self.build_lib, "dnnc"))  # keeps dnnc-node executable
        with open(os.path.join(self.build_lib, "dnnc_pynn_hook.pth"), "w") as f:
            f.write("import dnnc_pynn_hook\n")


class CompiledDistribution(Distribution):
    """A wheel for this Python and platform (it holds a compiled module), not a pure one."""

    def has_ext_modules(self):
        return True


setup(
    name="dnnc",
    version=project_version(),
    description="Python module and PyNN backend (pyNN.dnnc) of the dnnc distributed neural-graph simulator",
    packages=["dnnc", "dnnc.pynn"],
    py_modules=["dnnc_pynn_hook"],
    install_requires=["numpy"],
    cmdclass={"build_py": BuildWithCompiledPart},
    distclass=CompiledDistribution,
    zip_safe=False,
    # setuptools' scratch files go to the CMake build, not into the source tree.
    options={"build": {"build_base": os.path.join(BUILD, "python-wheel")},
             "egg_info": {"egg_base": os.path.join(BUILD, "python-wheel")}},
)
