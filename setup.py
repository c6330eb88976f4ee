"""The package list, which pyproject.toml cannot express (see the comment there).

Every package under ``engine/`` and ``server/`` (found by their ``__init__.py``), plus the
folders mapped into ``server`` by ``[tool.setuptools.package-dir]``: ``config/``,
``migrations/`` (its ``versions/``, which has no ``__init__.py``, is listed as the namespace
package it is, so its revisions ship as modules) and the web client, ``web/``. The rest of
the build is in pyproject.toml.
"""

from setuptools import find_packages, setup

CODE = find_packages(include=["engine", "engine.*", "server", "server.*"])
SHIPPED_FOLDERS = [
    "server.config_files",
    "server.migrations",
    "server.migrations.versions",
    "server.web",
]

setup(packages=[*CODE, *SHIPPED_FOLDERS])
