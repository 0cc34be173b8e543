"""Grading: rubrics over traces, ``check()`` in notebooks, ``acl-lab grade`` for instructors.

``check("04.1", fn)`` runs a learner's function in a fresh Session (``run_exercise``), judges
the ``Run`` against the exercise's rubric (``grade_run``) and shows the ``Report``;
``check_all()`` grades every exercise of the notebook at once, ``attempts()`` is the log of
every check of the session and ``export()`` zips the notebook and that log for submission.
``learner_namespace`` executes a submitted notebook's cells for ``acl-lab grade``. Importing
this package imports neither plotly nor IPython.
"""

from .check import Attempt, CheckAll, attempts, check, check_all, export
from .notebook import learner_namespace, notebook_exercises
from .report import ItemResult, Report, feedback_page, grade_run
from .rubric import Exercise, Item, Run, Verdict, all_exercises, get_exercise, register
from .runner import TimeLimitExceeded, run_exercise

__all__ = ["Attempt", "CheckAll", "Exercise", "Item", "ItemResult", "Report", "Run",
           "TimeLimitExceeded", "Verdict", "all_exercises", "attempts", "check", "check_all",
           "export", "feedback_page", "get_exercise", "grade_run",
           "learner_namespace", "notebook_exercises", "register", "run_exercise"]
