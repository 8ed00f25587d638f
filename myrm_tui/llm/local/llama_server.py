"""`python -m myrm_tui.llm.local.llama_server ARGS`: llama-cpp-python's OpenAI-compatible server,
loaded the safe way (see llama_safety.py).

Why a launcher of our own: `python -m llama_cpp.server` loads models with llama.cpp's extra
buffer types, which crash on AMX CPUs at the first multi-token decode. Every llama.cpp process
this project starts (the embedded model's worker, the end-to-end tests' server, anything a user
runs from these docs) goes through `disable_extra_buffer_types()` first. Arguments are exactly
those of `python -m llama_cpp.server`.
"""

from __future__ import annotations


def main() -> None:
    from myrm_tui.llm.local.llama_safety import disable_extra_buffer_types

    disable_extra_buffer_types()
    from llama_cpp.server.__main__ import main as server_main

    server_main()


if __name__ == "__main__":
    main()
