"""Fixtures of the ``acl-lab grade`` tests: a demo rubric and notebook builders."""
