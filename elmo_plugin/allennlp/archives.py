"""
Loading a `model.tar.gz` that may come from someone else without letting it write outside
its extraction directory.

AllenNLP 2.10's `load_archive` extracts with `tarfile.extractall` and no filter, so a member
named `../x` or `/home/you/.bashrc`, or a link pointing out of the directory, writes where
the archive says. `load_checked_archive` checks every member first and refuses such an archive
with a `ConfigurationError` naming the archive and the member; `elmo-embed --archive` and
`elmo-export` load archives through it.

AllenNLP's own paths (`allennlp predict`, `evaluate`, `Predictor.from_path`, `_pretrained`
modules) call `load_archive` directly. In the `allennlp` command with the plugin loaded they
check too: `elmo_plugin.allennlp.framework` replaces `allennlp.models.archival.extracted_archive`
with `checked_extracted_archive` (and the `cached_path` package's `check_tarfile` with
`check_tar_file`) there. `import elmo_plugin.allennlp` does not, since it changes nothing else
in the process: in your own Python, load with `Predictor.from_archive(load_checked_archive(path))`,
or call `elmo_plugin.allennlp.framework.install(COMMAND)` first.

Writing: `archive_model_whole` is AllenNLP's `archive_model` through a temporary file renamed
once complete; `allennlp train` uses it (in the command with the plugin loaded). It imports
nothing of `elmo_plugin` but the core's `atomic_files` and `text_files`.
"""

import contextlib
import functools
import gzip
import logging
import os
import posixpath
import shutil
import tarfile
import tempfile
import zlib
from typing import Any, Dict, Iterator, List, Optional, Union

from allennlp.common.file_utils import cached_path

from elmo_plugin.elmo import ElmoBiLm
from elmo_plugin.elmo.errors import ConfigurationError
from elmo_plugin.elmo.files.atomic_files import replaced_when_complete
from elmo_plugin.elmo.files.restricted_pickle import check_tensors_only
from elmo_plugin.embedding.text_files import quoted

logger = logging.getLogger(__name__)


def check_members(archive_file: str, members: List[tarfile.TarInfo]) -> None:
    """A `ConfigurationError` naming `archive_file` and the first member that would be written
    outside the extraction directory: an absolute name, a `..` in a name, a member below
    a symbolic link, a link whose target is absolute or holds `..`, or a device or pipe.
    Regular files, directories and links to relative paths without `..` pass (the links of
    such an archive can only point inside it)."""
    links = {posixpath.normpath(member.name) for member in members if member.issym()}
    for member in members:
        problem = _member_problem(member, links)
        if problem is not None:
            raise ConfigurationError(
                f"{archive_file}: member {quoted(member.name)} {problem}; refusing to extract "
                "it (an archive may only write inside its own directory)"
            )


def _member_problem(member: tarfile.TarInfo, links: "set[str]") -> Optional[str]:
    name = member.name
    if os.path.isabs(name) or name.startswith("\\"):
        return "has an absolute path"
    if ".." in name.split("/"):
        return "has '..' in its path"
    parts = posixpath.normpath(name).split("/")
    for depth in range(1, len(parts)):
        if "/".join(parts[:depth]) in links:
            return "lies below a symbolic link"
    if member.issym() or member.islnk():
        target = member.linkname
        if os.path.isabs(target) or ".." in target.split("/"):
            return f"is a link to {quoted(target)}, outside the directory"
    if member.ischr() or member.isblk() or member.isfifo():
        return "is a device or a pipe"
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        return "is not a file, a directory or a link"
    return None


def extract_checked(archive_file: str, directory: str) -> None:
    """Extracts the tar archive `archive_file` into `directory` after `check_members`; where
    Python has extraction filters (3.12, and 3.8.17+ ... 3.11.4+), with the "data" filter too."""
    try:
        with tarfile.open(archive_file) as archive:
            members = archive.getmembers()
            check_members(archive_file, members)
            if hasattr(tarfile, "data_filter"):
                archive.extractall(directory, members=members, filter="data")
            else:  # checked above
                archive.extractall(directory, members=members)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise ConfigurationError(
            f"{archive_file}: not a readable model archive ({type(error).__name__}: "
            f"{quoted(error)}); is it truncated?"
        ) from error


@contextlib.contextmanager
def checked_extracted_archive(resolved_archive_file: str, cleanup: bool = True) -> Iterator[str]:
    """AllenNLP's `extracted_archive` (same arguments), with `extract_checked` and
    `check_weights`."""
    tempdir = tempfile.mkdtemp()
    try:
        logger.info("extracting archive file %s to temp dir %s", resolved_archive_file, tempdir)
        extract_checked(resolved_archive_file, tempdir)
        check_weights(tempdir, archive_file=resolved_archive_file)
        yield tempdir
    except BaseException:
        shutil.rmtree(tempdir, ignore_errors=True)
        raise
    if cleanup:
        shutil.rmtree(tempdir, ignore_errors=True)


def load_checked_archive(
    archive_file: Union[str, os.PathLike],
    cuda_device: int = -1,
    overrides: Union[str, Dict[str, Any]] = "",
    weights_file: Optional[str] = None,
):
    """AllenNLP's `load_archive` (same arguments, an `Archive` back), with every member
    checked before anything is extracted (`check_members`) and the weights before they are
    unpickled (`check_weights`)."""
    from allennlp.models.archival import load_archive

    resolved = cached_path(archive_file)
    if os.path.isdir(resolved):
        check_weights(resolved, weights_file)
        return load_archive(resolved, cuda_device, overrides, weights_file)
    with checked_extracted_archive(resolved) as directory:  # checks the archive's own weights
        if weights_file:
            check_weights(directory, weights_file)
        return load_archive(directory, cuda_device, overrides, weights_file)


def check_weights(
    serialization_dir: str, weights_file: Optional[str] = None, archive_file: Optional[str] = None
) -> None:
    """A `ConfigurationError` naming the weights `load_archive` would read from
    `serialization_dir` (or `weights_file`; as a member of `archive_file` where it was extracted
    from one) unless they hold only tensors: AllenNLP unpickles them in full, which on torch
    1.12 runs any code the pickle names (`check_tensors_only`)."""
    from allennlp.models.archival import get_weights_path

    weights = weights_file or get_weights_path(serialization_dir)
    if not os.path.isfile(weights):  # AllenNLP's own error follows
        return
    extracted = archive_file is not None and not weights_file
    check_tensors_only(
        weights, f"{archive_file}/{os.path.basename(weights)}" if extracted else weights
    )


def checking_state_dicts(read_state_dict: Any) -> Any:
    """AllenNLP's `read_state_dict`, refusing a weights file that holds more than tensors before
    AllenNLP unpickles it in full: every model the command loads goes through it, from an
    archive or a serialization directory (`check_tensors_only`)."""

    @functools.wraps(read_state_dict)
    def checked(path: Any, *args: Any, **kwargs: Any) -> Any:
        check_tensors_only(os.fspath(path))
        return read_state_dict(path, *args, **kwargs)

    return checked


def archive_model_whole(
    serialization_dir: Union[str, os.PathLike],
    weights: str = "best.th",
    archive_path: Optional[Union[str, os.PathLike]] = None,
    include_in_archive: Optional[List[str]] = None,
) -> str:
    """AllenNLP's `archive_model` (same arguments, the archive's path back), writing to a
    temporary name renamed onto the archive once complete: a kill or Ctrl-C while it is
    written leaves the previous archive (or none), not a truncated one."""
    from allennlp.models import archival

    target = str(archive_path or os.path.join(serialization_dir, "model.tar.gz"))
    if os.path.isdir(target):
        target = os.path.join(target, "model.tar.gz")
    with replaced_when_complete(target) as partial:
        archival.archive_model(serialization_dir, weights, partial, include_in_archive)
    return target


def files_read(archive: str) -> List[str]:
    """The files loading `archive` reads: itself, or for a serialization directory its config,
    weights, meta file and vocabulary files (for checking outputs against)."""
    if not os.path.isdir(archive):
        return [archive]
    names = ["config.json", "weights.th", "best.th", "meta.json"]
    found = [os.path.join(archive, name) for name in names]
    for root, _, files in os.walk(os.path.join(archive, "vocabulary")):
        found += [os.path.join(root, name) for name in files]
    return found


def check_tar_file(tar_file: tarfile.TarFile) -> None:
    """`check_members` for an open tar archive (the `cached_path` package's hook)."""
    check_members(str(tar_file.name), tar_file.getmembers())


def bilm_from_archive(archive_file: str, cuda_device: int = -1) -> ElmoBiLm:
    """
    The first ELMo biLM of the model in `archive_file` (a trained `bilm`, or any model with an
    ELMo biLM), loaded through `load_checked_archive`'s member check.

    # Parameters

    archive_file : `str`
        A `model.tar.gz` or a serialization directory.
    cuda_device : `int`, optional (default = `-1`)
    """
    model = load_checked_archive(archive_file, cuda_device=cuda_device).model
    bilms = [module for module in model.modules() if isinstance(module, ElmoBiLm)]
    if not bilms:
        raise ConfigurationError(f"{archive_file}: the archived model has no ELMo biLM")
    return bilms[0]
