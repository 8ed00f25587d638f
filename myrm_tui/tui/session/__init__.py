"""The chat's side of a session: its handle on the runtime, the turn runner and the messages it posts,
and the opt-in cache preheat and keep-alive."""
