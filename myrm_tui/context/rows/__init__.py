"""One stored message as the engine handles it: its view in the prompt, units of history, provider
families and pairing, media handles, call ids and the lenient JSON readers."""
