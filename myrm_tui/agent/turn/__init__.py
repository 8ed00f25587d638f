"""One turn's parts: the model call streamed, the tool phase, what the turn writes and knows, a
resend after a failure, and the opt-in summary of a big output on arrival."""
