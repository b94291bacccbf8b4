"""Lesson content files (docs/content-format.md): validate, load into the database, export back.

validate.py checks files (and, through lessons.admin, admin edits), load.py writes them
idempotently, export.py writes the database back to identical files.
"""
