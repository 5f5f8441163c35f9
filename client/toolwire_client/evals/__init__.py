"""Evals: run a fixed set of tasks, check the answer and the path, and gate on the success rate."""

from toolwire_client.config import ServerSpec
from toolwire_client.evals.checks import AnswerCheck, PathExpectation
from toolwire_client.evals.spec import EvalFile, EvalFileError, EvalTask, load_eval_file

__all__ = [
    "AnswerCheck",
    "EvalFile",
    "EvalFileError",
    "EvalTask",
    "PathExpectation",
    "ServerSpec",
    "load_eval_file",
]
