"""`memdir ui`: one vault's pages, server-rendered without script (auth.py, markup.py, pages.py, routes.py)."""
