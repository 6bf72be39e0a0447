"""benchmarks/user_program.py: the users' benchmark program, ported as a user ports it, and
the marginal rate it reports."""
import os

import pytest

from benchmarks.user_program import DEFAULT_BENCH, FILES, Figures, main, rewrite_imports


def test_imports_are_rewritten_as_a_user_ports_a_program(tmp_path):
    source, target = tmp_path / "bench", tmp_path / "ported"
    source.mkdir(), target.mkdir()
    for name in FILES:
        (source / name).write_text("from pyflink.common import Types\nimport pyflink\n"
                                   "pyflink_home = 'pyflinky'\n")
    rewrite_imports(str(source), str(target))
    for name in FILES:
        assert (target / name).read_text() == ("from api.common import Types\nimport api\n"
                                               "pyflink_home = 'pyflinky'\n")


def test_the_rate_is_the_marginal_one_between_the_sizes():
    # 4 s more for 4 M more records: 1 M/s, whatever the start-up took
    figures = Figures("W2", 1_000_000, 5_000_000, ours_s1=6.0, ours_s2=10.0, plain_s=2.5)
    assert figures.ours_rate == 1_000_000
    assert figures.plain_rate == 2_000_000
    assert figures.ratio == 0.5


@pytest.mark.skipif(not os.path.isdir(DEFAULT_BENCH), reason="../shared/bench is not here")
def test_the_program_runs_ported_and_checks_its_results():
    rows = main(["--workloads", "W2,W4", "--scale", "0.002", "--repeat", "1",
                 "--conf", "execution.executor=local"])
    assert [row.workload for row in rows] == ["W2", "W4"]
    assert all(row.n2 > row.n1 and row.plain_s > 0 for row in rows)
