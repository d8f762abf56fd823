"""
Checks the `allennlp` command makes before its work, when it loads the plugin
(`elmo_plugin.allennlp_command`): a CUDA device that is not there (`predict` / `evaluate
--cuda-device`, a config's `trainer.cuda_device` or `distributed.cuda_devices`) is one
`ConfigurationError` naming it (`elmo_plugin.elmo.execution.devices`), and `predict --silent`
is silent: only warnings and errors are logged, not AllenNLP's INFO lines for every parameter it
reads; and a user's error ends the command with one line, not tracebacks.

The command imports plugins after it has parsed its arguments (and so bound each built-in
subcommand's function): each check wraps a function that subcommand's function looks up in its
module when called (`_get_predictor`, `evaluate_from_archive`, `train_model`); idempotent.
"""

import argparse
import functools
import logging
import os
import sys
from types import TracebackType
from typing import Any, Callable, Optional, Type

from allennlp.commands import evaluate, predict, train
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError as AllennlpConfigurationError

from elmo_plugin.elmo.errors import ConfigurationError

from elmo_plugin.elmo.execution.devices import check_cuda_device

_MARK = "_elmo_plugin_checked"
CUDA_FLAG = "--cuda-device"


def install_cuda_device_checks() -> None:
    _wrap(predict, "_get_predictor", _check_flag)
    _wrap(evaluate, "evaluate_from_archive", _check_evaluation_device)
    _wrap(train, "train_model", _check_trainer)


def install_silent_predict() -> None:
    _wrap(predict, "_get_predictor", _quiet_when_silent)


def install_one_line_errors() -> None:
    """A user's error that ends the command (a `ConfigurationError`, ours or AllenNLP's: a file,
    a flag, a config key, an unreachable download) is printed as its message on one line, not
    under tracebacks of our code; `ALLENNLP_DEBUG=1` shows them. Other exceptions, bugs, keep
    their traceback."""
    if getattr(sys.excepthook, _MARK, False):
        return
    previous = sys.excepthook

    def one_line(
        kind: Type[BaseException], error: BaseException, trace: Optional[TracebackType]
    ) -> None:
        user_error = issubclass(kind, (ConfigurationError, AllennlpConfigurationError))
        if user_error and not os.environ.get("ALLENNLP_DEBUG"):
            print(f"allennlp: error: {error}", file=sys.stderr)
            return
        previous(kind, error, trace)

    setattr(one_line, _MARK, True)
    sys.excepthook = one_line


def _wrap(module: Any, name: str, check: Callable[..., None]) -> None:
    function = getattr(module, name)
    if check.__name__ in getattr(function, _MARK, ()):
        return

    @functools.wraps(function)
    def checked(*args: Any, **kwargs: Any) -> Any:
        check(*args, **kwargs)
        return function(*args, **kwargs)

    setattr(checked, _MARK, (*getattr(function, _MARK, ()), check.__name__))
    setattr(module, name, checked)


def _check_flag(args: argparse.Namespace, *_: Any, **__: Any) -> None:
    check_cuda_device(getattr(args, "cuda_device", -1), CUDA_FLAG)


def _check_evaluation_device(*_: Any, cuda_device: Any = -1, **__: Any) -> None:
    check_cuda_device(cuda_device, CUDA_FLAG)


def _check_trainer(params: Params, *_: Any, **__: Any) -> None:
    config = params.as_dict(quiet=True)
    check_cuda_device(config.get("trainer", {}).get("cuda_device"), "trainer.cuda_device")
    distributed = config.get("distributed") or {}
    check_cuda_device(distributed.get("cuda_devices"), "distributed.cuda_devices")


def _quiet_when_silent(args: argparse.Namespace, *_: Any, **__: Any) -> None:
    if getattr(args, "silent", False):
        logging.getLogger().setLevel(logging.WARNING)
