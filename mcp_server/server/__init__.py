"""This user's one server process: the per-vault apps it serves over HTTP, their schedule, idle clock and registry."""
