"""Compiler, make and cargo compressors on real builds of broken code."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.context.filters.conftest import filtered, run

C_SOURCE = """#include <stdio.h>
{warnings}
int main(void) {{
    int total = {needle};
    printf("%d\\n", total);
    return 0;
}}
"""


def _broken_c(tmp_path: Path, needle: str) -> Path:
    # 60 functions with unused variables → 60 warnings; one undeclared identifier → 1 error.
    warnings = "\n".join(f"int helper_{i}(int x) {{ int unused_{i} = x; return x + {i}; }}" for i in range(60))
    src = tmp_path / "broken.c"
    src.write_text(C_SOURCE.format(warnings=warnings, needle=needle))
    return src


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_gcc_error_survives_warning_flood(tmp_path: Path, needle: str) -> None:
    _broken_c(tmp_path, needle)
    out = run(["gcc", "-Wall", "-c", "broken.c", "-o", "broken.o"], cwd=tmp_path)
    assert out.count("warning:") >= 60 and "error:" in out
    result = filtered(out, 1500, "gcc -Wall -c broken.c -o broken.o")
    assert result.kind == "compiler"
    assert re.search(rf"broken\.c:\d+:\d+: error: .{needle}. undeclared", result.text)
    assert "^" in result.text  # the caret line under the error
    assert "1 errors, 60 warnings" in result.text
    assert result.text.count("warning:") < 60


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("gcc") is None, reason="make/gcc missing")
def test_make_recursive_failure(tmp_path: Path, needle: str) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    _broken_c(sub, needle)
    (sub / "Makefile").write_text("all:\n\tgcc -Wall -c broken.c -o broken.o\n")
    (tmp_path / "Makefile").write_text(
        "all:\n" + "".join(f"\t@echo building part {i}\n" for i in range(40)) + "\t$(MAKE) -C sub\n"
    )
    out = run(["make"], cwd=tmp_path)
    assert "Entering directory" in out and "Error" in out
    result = filtered(out, 1800, "make -j1 2>&1")
    assert result.kind == "compiler"
    assert needle in result.text
    assert re.search(r"make(\[\d+\])?: \*\*\* .*Error \d", result.text)
    assert "Entering directory" not in result.text


RUST_LIB = """
pub fn add(a: i32, b: i32) -> i32 {{ a + b }}
{warnings}
pub fn broken() -> i32 {{
    let value: i32 = "{needle}";
    value
}}
"""

RUST_TESTS = """
pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    use super::*;
    NUMBERED
    #[test]
    fn adds_wrong() { assert_eq!(add(2, 2), 5, "NEEDLE"); }
}
"""


def _crate(tmp_path: Path, body: str) -> Path:
    crate = tmp_path / "crate"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text('[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n')
    (crate / "src" / "lib.rs").write_text(body)
    return crate


def _cargo(crate: Path, *args: str) -> str:
    env = {"CARGO_TARGET_DIR": str(crate / "target"), "RUST_BACKTRACE": "0", "CARGO_TERM_COLOR": "never"}
    return run(["cargo", *args, "--offline"], cwd=crate, env=env, timeout=120)


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_build_error_with_span(tmp_path: Path, needle: str) -> None:
    warnings = "\n".join(f"pub fn unused_{i}() {{ let x_{i} = {i}; }}" for i in range(40))
    crate = _crate(tmp_path, RUST_LIB.format(warnings=warnings, needle=needle))
    out = _cargo(crate, "build")
    assert "error[E0308]" in out and out.count("warning: unused variable") == 40
    result = filtered(out, 2000, "cd crate && cargo build")
    assert result.kind == "cargo"
    assert "error[E0308]: mismatched types" in result.text
    assert re.search(r"--> src/lib\.rs:\d+:\d+", result.text)
    assert needle in result.text  # the code frame line holding the bad literal
    assert "could not compile" in result.text
    assert "1 errors, 40 warnings" in result.text


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_test_failure(tmp_path: Path, needle: str) -> None:
    numbered = "\n    ".join(f"#[test] fn passes_{i}() {{ assert_eq!(add({i}, 1), {i + 1}); }}" for i in range(120))
    crate = _crate(tmp_path, RUST_TESTS.replace("NUMBERED", numbered).replace("NEEDLE", needle))
    out = _cargo(crate, "test")
    assert out.count(" ... ok") == 120
    result = filtered(out, 1500, "cargo test")
    assert result.kind == "cargo"
    assert " ... ok" not in result.text
    assert "test tests::adds_wrong ... FAILED" in result.text
    assert needle in result.text
    assert re.search(r"test result: FAILED\. 120 passed; 1 failed", result.text)
