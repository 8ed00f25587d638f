"""bash: the command's launch (sandboxed), its run and output, background commands and the process
sweep that ends everything a call started."""
