"""
Draws the learned ELMo layer weights (softmax-normalised s_j of the scalar mix, and gamma)
of one or more trained task models as a grouped bar chart (PNG, drawn with Pillow), and
prints them as a table.

Each input is a serialization dir (its latest `metrics_epoch_*.json`, keys `_elmo_mix0_*`
as logged by `elmo_layer_weight_metrics`, read back with `parse_layer_weight_metric_name`)
or a `model.tar.gz` archive (the scalar-mix parameters in its weights), optionally named
`task=path`:

    python experiments/plot_layer_weights.py ner=/tmp/ner_elmo srl=/tmp/srl/model.tar.gz \
        -o layer_weights.png
"""

import argparse
import glob
import io
import json
import math
import os
import re
import tarfile
from typing import Dict, List, Optional, Sequence, Tuple, Union

from PIL import Image, ImageDraw, ImageFont

from elmo_plugin.elmo.bilm.layer_names import (
    GAMMA,
    bilm_layer_names,
    parse_layer_weight_metric_name,
)

# One mix's weights: layer name -> weight, plus "gamma".
Mix = Dict[str, float]

_MIX_PARAMETER = re.compile(r"^(.*)scalar_mixes\.(\d+)\.(scalar_parameters|gamma)$")
_COLOURS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3"]


def epoch_metrics_files(serialization_dir: str) -> List[str]:
    """The dir's `metrics_epoch_*.json` in epoch order (epoch 10 after 9, not after 1)."""
    files = glob.glob(os.path.join(serialization_dir, "metrics_epoch_*.json"))
    return sorted(files, key=lambda f: int(re.findall(r"\d+", os.path.basename(f))[-1]))


def mixes_from_metrics(serialization_dir: str) -> Dict[str, Mix]:
    """The layer weights in the latest epoch's metrics, end-of-epoch (validation) values
    when present."""
    files = epoch_metrics_files(serialization_dir)
    if not files:
        raise ValueError(f"{serialization_dir}: no metrics_epoch_*.json (not a serialization dir?)")
    latest = files[-1]
    with open(latest, encoding="utf-8") as handle:
        metrics = json.load(handle)
    return mixes_in_metrics(metrics, ("validation", "training"), latest)


def mixes_in_metrics(
    metrics: Dict[str, float], phases: Sequence[str], source: str
) -> Dict[str, Mix]:
    """The layer weights logged under the first of `phases` (e.g. "best_validation",
    "training") that `metrics` has; `source` names the metrics in errors."""
    by_phase: Dict[str, Dict[str, Mix]] = {}
    for key, value in metrics.items():
        name = parse_layer_weight_metric_name(key)
        if name is not None and name.phase is not None:
            phase_mixes = by_phase.setdefault(name.phase, {})
            phase_mixes.setdefault(mix_label(name.elmo, name.mix), {})[name.layer] = value
    mixes: Optional[Dict[str, Mix]] = next(
        (by_phase[phase] for phase in phases if phase in by_phase), None
    )
    if not mixes:
        raise ValueError(f"{source}: no _elmo_mix*_ metrics (was the model trained with ELMo?)")
    return mixes


def mixes_from_archive(archive: str) -> Dict[str, Mix]:
    """The layer weights stored in a model archive's `weights.th`."""
    import torch  # only archives need it

    with tarfile.open(archive) as tar:
        member = next((m for m in tar.getmembers() if m.name.endswith("weights.th")), None)
        weights_file = None if member is None else tar.extractfile(member)
        if weights_file is None:
            raise ValueError(f"{archive}: no weights.th inside (not an AllenNLP archive?)")
        state = torch.load(io.BytesIO(weights_file.read()), map_location="cpu")
    raw: Dict[Tuple[str, str], Dict[str, torch.Tensor]] = {}
    for name, value in state.items():
        match = _MIX_PARAMETER.match(name)
        if match:
            owner, mix, kind = match.groups()
            raw.setdefault((owner, mix), {})[kind] = value
    if not raw:
        raise ValueError(f"{archive}: no ELMo scalar mix in the weights")
    owners = sorted({owner for owner, _ in raw})
    mixes: Dict[str, Mix] = {}
    for (owner, mix), parts in sorted(raw.items()):
        weights: List[float] = torch.softmax(parts["scalar_parameters"].float(), dim=0).tolist()
        names = bilm_layer_names(len(weights) - 1)
        elmo = owners.index(owner) if len(owners) > 1 else None
        mixes[mix_label(elmo, int(mix))] = {
            **dict(zip(names, weights)),
            GAMMA: float(parts["gamma"]),
        }
    return mixes


def mix_label(elmo: Optional[int], mix: int) -> str:
    """How a chart names one mix: `elmo.mix0`, or `elmo1.mix0` in a model with several ELMos."""
    return f"elmo{'' if elmo is None else elmo}.mix{mix}"


def read_mixes(path: str) -> Dict[str, Mix]:
    if os.path.isdir(path):
        return mixes_from_metrics(path)
    if os.path.isfile(path) and tarfile.is_tarfile(path):
        return mixes_from_archive(path)
    raise ValueError(f"{path}: neither a serialization dir nor a model archive")


def groups_of(inputs: List[str]) -> List[Tuple[str, Mix]]:
    """One bar group per (task, mix); a task with one mix is labelled by its name alone."""
    groups = []
    for item in inputs:
        name, _, path = item.rpartition("=")
        name = name or os.path.basename(os.path.normpath(path))
        mixes = read_mixes(path)
        for mix_name, mix in sorted(mixes.items()):
            groups.append((name if len(mixes) == 1 else f"{name} {mix_name}", mix))
    return groups


def layer_names(groups: List[Tuple[str, Mix]]) -> List[str]:
    """The biLM layers of any group, lowest first."""
    names = {name for _, mix in groups for name in mix if name != GAMMA}
    return [name for name in bilm_layer_names(len(names)) if name in names]


def font(size: int) -> Union[ImageFont.ImageFont, ImageFont.FreeTypeFont]:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow without FreeType sizes
        return ImageFont.load_default()


# The figure's words, one for every drawing of it: the paper's s_j are the softmax of the
# scalar mix's parameters w_j (what a config's `scalar_parameters` hold).
TITLE = "Learned ELMo layer weights s = softmax(w) per task"
Y_LABEL = "layer weight s_j"


def draw(groups: List[Tuple[str, Mix]], title: str, output: str) -> None:
    layers = layer_names(groups)
    bar, gap, left, top, plot_height = 28, 36, 70, 60, 300
    group_width = bar * len(layers) + gap
    width = left + group_width * len(groups) + 150
    height = top + plot_height + 90
    image = Image.new("RGB", (width, height), "white")
    canvas = ImageDraw.Draw(image)
    small, normal = font(12), font(15)
    canvas.text((left, 15), title, fill="black", font=normal)
    canvas.text((10, top - 26), Y_LABEL, fill="black", font=small)
    y_max = max(1.0, max(mix.get(layer, 0.0) for _, mix in groups for layer in layers))
    y_of = lambda value: top + plot_height - value / y_max * plot_height  # noqa: E731
    for tick in range(0, 11, 2):
        value = tick / 10 * y_max
        canvas.line([(left - 5, y_of(value)), (width - 150, y_of(value))], fill="#dddddd")
        canvas.text((10, y_of(value) - 7), f"{value:.1f}", fill="black", font=small)
    canvas.line([(left, top), (left, top + plot_height)], fill="black")
    for g, (name, mix) in enumerate(groups):
        x0 = left + gap // 2 + g * group_width
        for i, layer in enumerate(layers):
            if layer in mix:
                x = x0 + i * bar
                canvas.rectangle([x, y_of(mix[layer]), x + bar - 4, y_of(0)], fill=_COLOURS[i % 7])
                canvas.text(
                    (x, y_of(mix[layer]) - 14), f"{mix[layer]:.2f}", fill="black", font=small
                )
        canvas.text((x0, top + plot_height + 8), name, fill="black", font=normal)
        canvas.text(
            (x0, top + plot_height + 28),
            f"{GAMMA} {mix.get(GAMMA, math.nan):.2f}",
            fill="#555555",
            font=small,
        )
    for i, layer in enumerate(layers):
        y = top + 10 + 22 * i
        canvas.rectangle([width - 135, y, width - 121, y + 14], fill=_COLOURS[i % 7])
        canvas.text((width - 115, y), layer, fill="black", font=normal)
    image.save(output)


def print_table(groups: List[Tuple[str, Mix]]) -> None:
    layers = layer_names(groups) + [GAMMA]
    print("| task | " + " | ".join(layers) + " |")
    print("|---" * (len(layers) + 1) + "|")
    for name, mix in groups:
        print(
            f"| {name} | "
            + " | ".join(f"{mix.get(layer, math.nan):.3f}" for layer in layers)
            + " |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("inputs", nargs="+", help="[task=]serialization_dir_or_model.tar.gz")
    parser.add_argument("-o", "--output", default="elmo_layer_weights.png")
    parser.add_argument("--title", default=TITLE)
    args = parser.parse_args()
    groups = groups_of(args.inputs)
    print_table(groups)
    draw(groups, args.title, args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
