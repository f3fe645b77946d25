# The import hook: with the set-up's dnnc.pth in a site folder, `import pyNN.dnnc` loads the
# backend from the build's dnnc/pynn/ although pyNN is Debian's package elsewhere.
import os
import subprocess
import sys

import pyNN

from conftest import BINARY, SOURCE

PYTHON_DIR = os.path.join(BINARY, "python")


def python_with_site(site, code):
    """Runs `code` in /usr/bin/python3 -S (no site folders, no PYTHONPATH) after adding
    `site` as a site folder (its .pth files run) and the folder that holds pyNN."""
    pynn_site = os.path.dirname(os.path.dirname(pyNN.__file__))
    program = "import site; site.addsitedir(%r); site.addsitedir(%r)\n%s" % (pynn_site, site, code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-S", "-c", program], capture_output=True, text=True, env=env, timeout=120)


def setup_pth_lines():
    """The lines scripts/setup.sh writes into dnnc.pth, for this build."""
    with open(os.path.join(SOURCE, "scripts", "setup.sh")) as f:
        text = f.read()
    block = text.split('lines="', 1)[1].split('"', 1)[0]
    return block.replace("$(pwd)/build/python", PYTHON_DIR)


def test_setup_writes_the_path_and_the_hook():
    assert setup_pth_lines().splitlines() == [PYTHON_DIR, "import dnnc_pynn_hook"]


def test_pth_makes_pyNN_dnnc_importable(tmp_path):
    (tmp_path / "dnnc.pth").write_text(setup_pth_lines() + "\n")
    result = python_with_site(str(tmp_path), "import pyNN.dnnc as sim, pyNN.dnnc.simulator as s\n"
                                             "print(sim.__file__); print(s.name); print(sim.IF_cond_exp.dnnc_model)")
    assert result.returncode == 0, result.stderr
    init, name, model = result.stdout.split()
    assert init == os.path.join(PYTHON_DIR, "dnnc", "pynn", "__init__.py")
    assert (name, model) == ("dnnc", "iaf_cond_exp")


def test_without_the_pth_there_is_no_pyNN_dnnc(tmp_path):
    result = python_with_site(str(tmp_path), "import pyNN.dnnc")
    assert result.returncode != 0
    assert "No module named 'pyNN.dnnc'" in result.stderr


def test_the_hook_answers_only_for_pyNN_dnnc(tmp_path):
    (tmp_path / "dnnc.pth").write_text(setup_pth_lines() + "\n")
    result = python_with_site(str(tmp_path), "import sys, pyNN\nimport pyNN.nosuchbackend")
    assert "No module named 'pyNN.nosuchbackend'" in result.stderr
    result = python_with_site(str(tmp_path), "import sys; print(sum(type(f).__name__ == 'PynnDnncFinder' "
                                             "for f in sys.meta_path)); import dnnc_pynn_hook; "
                                             "print(sum(type(f).__name__ == 'PynnDnncFinder' for f in sys.meta_path))")
    assert result.stdout.split() == ["1", "1"], result.stderr
