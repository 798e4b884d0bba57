"""The README's examples run and print what their ``# -> ...`` comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_print_what_they_say() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    for block in blocks:
        expected: list[str] = []
        for line in block.splitlines():
            m = re.search(r"#\s*->\s*(.*)$", line)
            if m:
                text = m.group(1).strip()
                # a print inside a loop lists one value per iteration, comma-separated
                expected += text.split(", ") if line.startswith("    ") else [text]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), {})
        assert out.getvalue().splitlines() == expected
