"""`myrm doctor`: every check that decides whether myrm can work here, each with its fix."""
