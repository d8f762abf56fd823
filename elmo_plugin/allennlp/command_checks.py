"""
Checks the `allennlp` command makes before its work, when it loads the plugin
(`elmo_plugin.allennlp.command`): a CUDA device that is not there (`predict` / `evaluate
--cuda-device`, a config's `trainer.cuda_device` or `distributed.cuda_devices`) is one
`ConfigurationError` naming it (`elmo_plugin.elmo.execution.devices`), and `predict --silent`
is silent: only warnings and errors are logged, not AllenNLP's INFO lines for every parameter it
reads; and a user's error ends the command with one line, not tracebacks.

The command imports plugins after it has parsed its arguments (and so bound each built-in
subcommand's function): each check wraps a public function that subcommand's function looks up
in its module when called; `elmo_plugin.allennlp.framework` lists and installs them.
"""

import functools
import logging
import os
import sys
from types import TracebackType
from typing import Any, Callable, List, Optional, Type

from allennlp.common import Params
from allennlp.common.checks import ConfigurationError as AllennlpConfigurationError

from elmo_plugin.elmo.errors import ConfigurationError

from elmo_plugin.elmo.execution.devices import check_cuda_device

CUDA_FLAG = "--cuda-device"


def checking_predict_device(check_for_gpu: Callable[..., Any]) -> Callable[..., Any]:
    """`predict`'s `check_for_gpu`, naming the `--cuda-device` flag of a missing device."""

    @functools.wraps(check_for_gpu)
    def checked(device: Any, *args: Any, **kwargs: Any) -> Any:
        check_cuda_device(device, CUDA_FLAG)
        return check_for_gpu(device, *args, **kwargs)

    return checked


def checking_evaluation_device(evaluate: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(evaluate)
    def checked(*args: Any, cuda_device: Any = -1, **kwargs: Any) -> Any:
        check_cuda_device(cuda_device, CUDA_FLAG)
        return evaluate(*args, cuda_device=cuda_device, **kwargs)

    return checked


def checking_trainer_devices(train_model: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(train_model)
    def checked(params: Params, *args: Any, **kwargs: Any) -> Any:
        config = params.as_dict(quiet=True)
        check_cuda_device(config.get("trainer", {}).get("cuda_device"), "trainer.cuda_device")
        distributed = config.get("distributed") or {}
        check_cuda_device(distributed.get("cuda_devices"), "distributed.cuda_devices")
        return train_model(params, *args, **kwargs)

    return checked


def one_line_errors(previous: Callable[..., None]) -> Callable[..., None]:
    """A user's error that ends the command (a `ConfigurationError`, ours or AllenNLP's: a file,
    a flag, a config key, an unreachable download) is printed as its message on one line, not
    under tracebacks of our code; `ALLENNLP_DEBUG=1` shows them. Other exceptions, bugs, keep
    their traceback."""

    def one_line(
        kind: Type[BaseException], error: BaseException, trace: Optional[TracebackType]
    ) -> None:
        user_error = issubclass(kind, (ConfigurationError, AllennlpConfigurationError))
        if user_error and not os.environ.get("ALLENNLP_DEBUG"):
            print(f"allennlp: error: {error}", file=sys.stderr)
            return
        previous(kind, error, trace)

    return one_line


def quiet_when_silent(argv: List[str]) -> None:
    """Under `allennlp predict --silent`, only warnings and errors are logged: not AllenNLP's
    INFO lines for every parameter it reads while loading the archive."""
    if argv[1:2] == ["predict"] and "--silent" in argv:
        logging.getLogger().setLevel(logging.WARNING)
