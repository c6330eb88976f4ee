"""The web client, shipped inside the server as the package ``server.web`` (see
pyproject.toml); ``server.static`` serves its files. Nothing here is Python but this file."""
