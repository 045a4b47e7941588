"""The `memdir` command line: click commands that parse, call one service operation and format the result."""
