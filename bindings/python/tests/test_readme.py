"""The repository README's Python example runs as written (from the repository root)."""

import re

from conftest import ROOT


def test_readme_python_example(monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "the README has no python example"
    assert len(blocks[0].strip().splitlines()) <= 12
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[0], "README.md", "exec"), {"__name__": "readme"})
