"""`memdir ui`: a local web view of one vault, served by the user's memdir server on loopback.

Server-rendered HTML, no script: auth.py (one-time code -> cookie, CSRF), markup.py (escaping, the page
frame, Markdown, the SVG plot), pages.py (one function per page, reading through MemoryService) and
routes.py (the Starlette app the server mounts at /ui). Nothing here knows where the server files live.
"""
