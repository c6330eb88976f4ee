"""Persistence: the schema (``models``), migrations (``migrate``) and the ``Store``.

The rest of the server imports from ``server.db.store`` only.
"""
