"""Shared fixtures: the repository's committed data sets."""

import shutil
import subprocess
from pathlib import Path

import pytest
from sklearn.datasets import load_svmlight_file

#: The repository root (bindings/python/tests → ../../..).
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def heart():
    """``data/heart.libsvm`` as (CSR X, y in ±1), file order."""
    X, y = load_svmlight_file(str(ROOT / "data" / "heart.libsvm"))
    return X, y


@pytest.fixture(scope="session")
def australian():
    """``data/australian.libsvm`` as (CSR X, y in ±1), file order."""
    X, y = load_svmlight_file(str(ROOT / "data" / "australian.libsvm"))
    return X, y


@pytest.fixture(scope="session")
def cli():
    """The release CLI, built here (skipped only when cargo is absent)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not installed: cannot build the CLI")
    subprocess.run(
        [cargo, "build", "--release", "--quiet", "-p", "sketchlearn-cli"], cwd=ROOT, check=True
    )
    return ROOT / "target" / "release" / "sketchlearn"
