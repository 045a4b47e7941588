"""The local web view (`memdir ui`): server-rendered pages under /ui/ on the user's memdir server."""
