"""The default configuration and rule presets; installed as the package ``server.config_files``.

This folder holds data, no code: the ``__init__.py`` lets the wheel ship it as package data and
``importlib.resources`` find it (see ``[tool.setuptools.package-dir]`` in pyproject.toml).
"""
