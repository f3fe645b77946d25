"""Makes ``import pyNN.dnnc`` load dnnc's PyNN backend, the package dnnc/pynn/ beside this
module, although pyNN itself is Debian's package elsewhere on the path.

The set-up's dnnc.pth imports this module at every start of Python (docs/pynn.md), so it
does nothing else: it appends a finder that answers for exactly ``pyNN.dnnc`` and imports
no more than it needs when asked.
"""
import os
import sys

_BACKEND = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dnnc", "pynn")


class PynnDnncFinder:
    """A sys.meta_path finder for the module pyNN.dnnc."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if fullname != "pyNN.dnnc":
            return None
        from importlib.util import spec_from_file_location
        return spec_from_file_location(fullname, os.path.join(_BACKEND, "__init__.py"),
                                       submodule_search_locations=[_BACKEND])


if not any(type(finder).__name__ == "PynnDnncFinder" for finder in sys.meta_path):
    sys.meta_path.append(PynnDnncFinder())
