"""The types of SQL and Table API expressions as Flink gives them (``api/table/sql_typing.py``):
``sql_types_job.py`` against what PyFlink 2.3.0 printed for it (integer division, CASE of
string literals, literals, DECIMAL division in STREAMING and BATCH queries), and integer
division computed as Java's for any integers, on the stream and on Spark SQL."""
import os

from hypothesis import given, settings, strategies as st

from api.common import Types
from api.table import EnvironmentSettings, StreamTableEnvironment
from tests.api.table.oracle import run_job
from tests.conftest import make_env

HERE = os.path.dirname(__file__)
JOB = os.path.join(HERE, "sql_types_job.py")

with open(os.path.join(HERE, "sql_types_pyflink_2_3_0.txt")) as f:
    PYFLINK_2_3_0_OUTPUT = f.read()  # what sql_types_job.py printed on PyFlink 2.3.0


def test_expression_types_and_values_print_what_pyflink_prints(capsys, monkeypatch):
    assert run_job(JOB, capsys, monkeypatch) == PYFLINK_2_3_0_OUTPUT


def _java_division(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


@settings(max_examples=5, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(-50, 50), st.integers(-7, 7).filter(bool)),
                      min_size=1, max_size=20))
def test_integer_division_truncates_toward_zero_on_the_stream_and_in_batch(spark, pairs):
    env = make_env("local", parallelism=2, micro_batch_size=3)
    expected = sorted((a, b, _java_division(a, b)) for a, b in pairs)
    streaming = StreamTableEnvironment.create(
        env, environment_settings=EnvironmentSettings.in_streaming_mode())
    streaming.create_temporary_view('t', env.from_collection(pairs, Types.ROW_NAMED(
        ['a', 'b'], [Types.INT(), Types.INT()])))
    batch = StreamTableEnvironment.create(
        env, environment_settings=EnvironmentSettings.in_batch_mode())
    batch.create_temporary_view('t', batch.from_elements(pairs, ['a', 'b']))
    for t_env, integer in [(streaming, 'INT'), (batch, 'BIGINT')]:
        table = t_env.sql_query("SELECT a, b, a / b AS q FROM t")
        assert str(table.get_schema().get_field_data_type('q')) == integer
        with table.execute().collect() as rows:
            assert sorted(tuple(r) for r in rows) == expected
