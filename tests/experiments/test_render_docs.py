"""The results in README.md, docs/ and the model card are the records' (experiments/results/):
every generated region equals its rendering from the records (experiments/render_docs.py), and
no number of the records is pasted outside a region, where nothing would keep it up to date.
A number changed by hand, in a region or pasted elsewhere, fails here."""

import re
import shlex

import pytest

from experiments import render_docs
from tests.paths import PROJECT_ROOT


@pytest.fixture(scope="module")
def renderer():
    """One renderer for the module: the jobs' tables are read back from the records once."""
    return render_docs.Renderer()


def test_every_generated_region_is_the_records_rendering(renderer):
    stale = render_docs.render_all(renderer, check=True)
    assert not stale, (
        "pages differ from the records (python experiments/render_docs.py renders them):\n"
        + "".join(stale)
    )


def test_every_record_reads_back_as_the_run_the_docs_show(renderer):
    """No record is stale: its run, as the jobs make it today, has the recorded config."""
    renderer.render("runs")
    stale = [note for note in renderer.notes() if "stale" in note]
    assert not stale, "\n".join(stale)


def test_no_number_of_the_records_is_pasted_outside_a_region(renderer):
    pasted = render_docs.pasted_record_numbers(renderer)
    assert (
        not pasted
    ), "numbers of the records pasted outside a region (generate them):\n" + "\n".join(pasted)


def test_the_pages_with_results_have_their_regions():
    regions = {
        page: [name for name, _, _ in render_docs.regions((PROJECT_ROOT / page).read_text())]
        for page in render_docs.pages()
    }
    assert "readme-results" in regions["README.md"]
    assert "model-card" in regions["elmo_plugin/pretrained/elmo_wikipedia_512x128/README.md"]
    assert {
        "table:table1",
        "table:table2",
        "table:table3",
        "table:sample_efficiency",
        "table:figure2",
        "table:convergence",
        "table:finetuned",
    } <= set(regions["docs/paper_tables.md"])
    for task in ("ner", "srl", "snli", "squad", "sst", "coref"):
        page = "docs/sentiment.md" if task == "sst" else f"docs/{task}.md"
        assert f"task-results:{task}" in regions[page]


def test_a_number_changed_by_hand_in_a_region_fails(renderer):
    page = (PROJECT_ROOT / "docs/paper_tables.md").read_text()
    assert "| CoNLL-2003 NER | test span F1 | 81.09 ± 0.58 | 84.75 ± 0.57 |" in page
    edited = page.replace("| 84.75 ± 0.57 |", "| 84.76 ± 0.57 |", 1)
    assert render_docs.rendered_page(edited, renderer) == page


def test_a_number_of_the_records_pasted_in_prose_is_found(renderer):
    numbers = renderer.record_numbers()
    assert {"84.75", "+3.66", "0.504", "1415.8", "± 0.57"} <= numbers
    text = (
        "NER gains +3.66 F1 (84.75).\n<!-- generated: readme-results -->\n84.75\n"
        "<!-- end generated -->\n`84.75` in code\n<!-- not from the records: stage 1 -->\n"
        "84.75 ± 0.57\n<!-- end not from the records -->\nthe paper's 92.22, 0.57 alone\n"
        "NER's ± 0.57\n"
    )
    assert render_docs.pasted_numbers(text, numbers) == [(1, "+3.66"), (1, "84.75"), (10, "± 0.57")]


def test_a_region_without_its_end_or_renderer_is_an_error(renderer):
    with pytest.raises(ValueError, match="has no '<!-- end generated -->'"):
        list(render_docs.regions("<!-- generated: table:table1 -->\n| a |\n"))
    with pytest.raises(KeyError, match="no renderer for region 'nothing'"):
        renderer.render("nothing")


def test_a_task_without_records_renders_the_command_that_makes_them(renderer):
    # SST-5's runs have no records yet in some clones; the rendering says how to make them.
    text = renderer.render("task-results:sst")
    assert text.startswith("Budget: epochs ")
    records = (PROJECT_ROOT / "experiments/results/paper_tables/sst.json").exists()
    assert ("No records yet" in text) != records


def test_make_tables_trains_the_jobs_whose_records_the_docs_show():
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    match = re.search(r"^RECORDS := (\S+)$", makefile, re.MULTILINE)
    assert match is not None
    records = match.group(1)
    lines = re.findall(
        r"^\t\$\(BIN\)/python experiments/paper_tables.py (.*)$", makefile, re.MULTILINE
    )
    made = [shlex.split(line.replace("$(RECORDS)", records)) for line in lines]
    assert made == [shlex.split(render_docs.JOBS[job]) for job in ("paper_tables", "figure2")]
    assert "\t$(BIN)/python experiments/render_docs.py\n" in makefile
