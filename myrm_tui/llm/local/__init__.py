"""The embedded model: llama.cpp in a worker process of its own, loaded so no CPU takes a crashing
path, and checked for real by `myrm doctor`."""
