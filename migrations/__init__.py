"""The Alembic migrations; installed as the package ``server.migrations``.

No code imports from this package: ``server/db/migrate.py`` locates its folder with
``importlib.resources`` and hands it to Alembic (see ``[tool.setuptools.package-dir]`` in
pyproject.toml). The ``__init__.py`` is what lets the wheel ship the folder.
"""
