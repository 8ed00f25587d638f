"""pip, npm, jest and docker compressors on captured real outputs (see fixtures/README.md)."""

from __future__ import annotations

import re

from tests.context.filters.conftest import FIXTURES, filtered


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_pip_dry_run_drops_already_satisfied_spam() -> None:
    out = fixture("pip_install_dry_run.txt")
    assert out.count("Requirement already satisfied") > 50
    result = filtered(out, 600, "pip install --dry-run alpha")
    assert result.kind == "pip"
    assert "Requirement already satisfied" not in result.text.replace("Requirement already satisfied ×", "")
    assert re.search(r"Requirement already satisfied ×\d+", result.text)  # counted
    assert "Would install alpha-0.1.0 beta-0.1.0 gamma-0.1.0" in result.text


def test_pip_error_kept() -> None:
    out = fixture("pip_install_dry_run.txt") + fixture("pip_install_error.txt")
    result = filtered(out, 700, "python -m pip install alpha nonexistent-pkg-zz9")
    assert "ERROR: Could not find a version that satisfies the requirement nonexistent-pkg-zz9" in result.text
    assert "ERROR: No matching distribution found for nonexistent-pkg-zz9" in result.text


def test_pip_subprocess_error_box() -> None:
    out = fixture("pip_wheel_metadata_error.txt")
    result = filtered(out, len(out) // 2, "pip wheel ./beta")
    assert "error: metadata-generation-failed" in result.text
    assert "× Encountered error while generating package metadata." in result.text
    assert "error: invalid command 'bdist_wheel'" in result.text


def test_pip_success_line() -> None:
    out = fixture("pip_install_dry_run.txt").replace("Would install", "Successfully installed")
    result = filtered(out, 400, "pip3 install alpha")
    assert "Successfully installed alpha-0.1.0 beta-0.1.0 gamma-0.1.0" in result.text


def test_npm_install_verbose_noise_dropped() -> None:
    out = fixture("npm_install_silly.txt")
    result = filtered(out, 300, "npm install --loglevel silly")
    assert result.kind == "package-install"
    assert "added 3 packages" in result.text
    assert "npm silly" not in result.text and "npm verbose" not in result.text


def test_npm_install_error() -> None:
    out = fixture("npm_install_silly.txt") + fixture("npm_install_error.txt")
    result = filtered(out, 600, "npm i nonexistent-pkg-zz9")
    assert "npm error code ENOTCACHED" in result.text
    assert "nonexistent-pkg-zz9 failed" in result.text


def test_npm_test_node_tap() -> None:
    out = fixture("npm_test_node.txt")
    result = filtered(out, 1500, "npm test")
    assert result.kind == "js-test"
    assert "not ok 41 - multiplies NEEDLE-7f3a" in result.text
    assert "not ok 42 - rejects negatives" in result.text
    assert "# fail 2" in result.text and "# pass 40" in result.text
    assert not re.search(r"^ok \d+ ", result.text, re.MULTILINE)


def test_jest_failure() -> None:
    out = fixture("jest_fail.txt")
    result = filtered(out, 900, "npx jest")
    assert result.kind == "js-test"
    assert "PASS src/" not in result.text
    assert "● price › applies discount NEEDLE-b81e" in result.text
    assert "Expected: 90" in result.text and "Received: 100" in result.text
    assert "Tests:       1 failed, 187 passed, 188 total" in result.text


def test_docker_buildkit_failure() -> None:
    out = fixture("docker_build_buildkit_fail.txt")
    result = filtered(out, 1800, "docker build -t app .")
    assert result.kind == "docker-build"
    assert "sha256:a1b2" not in result.text.split("FROM", 1)[-1]  # layer progress dropped
    assert "#8 [4/5] RUN pip install --no-cache-dir -r requirements.txt" in result.text
    assert "NEEDLE-42c9" in result.text
    assert ">>> RUN pip install" in result.text
    assert result.text.rstrip().endswith("exit code: 1")
