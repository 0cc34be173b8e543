"""Rubric modules, one per exercise (``ex04.py`` ...); each registers its exercises at import."""
