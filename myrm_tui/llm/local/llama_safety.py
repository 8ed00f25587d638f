"""Load llama.cpp models so that no CPU takes a code path known to crash.

Why: on Intel Xeons with AMX (`amx_tile` in /proc/cpuinfo, common on cloud VMs) llama.cpp picks
its AMX "extra buffer type", repacks the Q4_1 weights for it, and then faults inside
`ggml_backend_amx_mul_mat` on every decode of two or more tokens (a one-token decode works, which
is why a short smoke test passes). Loading with `use_extra_bufts = false` keeps the weights in
the plain CPU buffer and works everywhere.

Why always off rather than off-when-AMX: the other CPU extra buffer type (the repack of Q4_0 /
Q8_0 / K-quant weights for AVX2 and ARM) has no kernel for this model's Q4_1 layers, so turning
extra buffers off costs this model nothing measurable where it was measured, and one code path
that is the same on every CPU is one we can test anywhere. (Measured on an AMX Xeon only; see
docs/tui-benchmarks.md, L1.)

llama-cpp-python does not expose the flag on `Llama(...)`; it builds the C params from
`llama_model_default_params()` inside the constructor, so we wrap that function. The wrap is
applied only in processes that run llama.cpp for myrm (the model worker, the test server
launcher), never in the app process.
"""

from __future__ import annotations

from typing import Any

_APPLIED = False


def disable_extra_buffer_types() -> None:
    """Make every Llama created after this call load without extra buffer types (idempotent)."""
    global _APPLIED
    if _APPLIED:
        return
    import llama_cpp.llama_cpp as c_api

    original = c_api.llama_model_default_params

    def model_params_without_extra_buffers() -> Any:
        params = original()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    c_api.llama_model_default_params = model_params_without_extra_buffers
    _APPLIED = True


def cpu_features() -> dict[str, bool]:
    """The x86 flags that decide which llama.cpp kernels run (empty off Linux/x86)."""
    wanted = ("avx2", "avx512f", "avx512_vnni", "amx_tile", "amx_int8", "amx_bf16")
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return {name: name in flags for name in wanted}
    except OSError:
        pass
    return {}


def cpu_model_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()
