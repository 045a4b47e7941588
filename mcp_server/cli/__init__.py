"""The `memdir` command line: click commands that parse (their options derived from the operations, options.py), call one service operation and format the result."""
