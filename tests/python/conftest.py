# Shared by the Python module's tests: where the repository and the built tools are, and
# the `dnnc` command line to compare with.
import os
import socket
import subprocess

import pytest

SOURCE = os.environ.get("DNNC_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BINARY = os.environ.get("DNNC_BINARY_DIR", os.path.join(SOURCE, "build"))


def example(relative):
    return os.path.join(SOURCE, "examples", relative)


def cli(*args, check=True):
    """Runs the dnnc command line; returns the completed process (text)."""
    result = subprocess.run([os.path.join(BINARY, "tools", "dnnc"), *map(str, args)], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError("dnnc %s: exit %d\n%s" % (" ".join(map(str, args)), result.returncode, result.stderr))
    return result


def free_ports(count):
    """`count` distinct free loopback ports. The sockets stay bound until all are picked: one
    bound and closed at a time may be given the port just closed again."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def alive(pid):
    """True while process `pid` exists and is not a zombie."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("State:"):
                    return "Z" not in line.split()[1]
    except FileNotFoundError:
        return False
    return True


@pytest.fixture
def tmp(tmp_path):
    return tmp_path
